import { appendFileSync, mkdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { eventsScanned, startEventScan, stopEventScan, takeViolations } from './event-scan.js';

/**
 * Registered in every jest project (setupFilesAfterEnv): scans every security
 * event published while a test file runs, and fails the file if one carries
 * a password, a token, a cookie value, a proof or a field outside the event's
 * shape. Each file adds a line to .tmp/security-event-scan.jsonl: how many
 * events it scanned (CONTRIBUTING.md, "Security events").
 */

const ROOT = resolve(__dirname, '..', '..');

startEventScan();

afterAll(() => {
  stopEventScan();
  const file = relative(ROOT, expect.getState().testPath ?? 'unknown');
  const violations = takeViolations();
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  appendFileSync(
    join(ROOT, '.tmp', 'security-event-scan.jsonl'),
    `${JSON.stringify({ file, scanned: eventsScanned(), violations: violations.length })}\n`,
  );
  if (violations.length > 0) {
    throw new Error(
      `${violations.length} security event(s) carry what no event may (docs/observability.md):\n` +
        violations.map((v) => `- ${v.where}: ${v.findings.join('; ')}\n  ${JSON.stringify(v.event)}`).join('\n'),
    );
  }
});
