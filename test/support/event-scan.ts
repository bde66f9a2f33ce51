import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { SECURITY_EVENTS_CHANNEL } from '../../src/events/index.js';
import { secretsIn } from './secret-scan.js';

/**
 * The whole-suite scan of security events (CONTRIBUTING.md, "Security
 * events"): test/support/event-scan.setup.ts subscribes in every test file's
 * process, the reference-server harness feeds it the events its processes
 * log, and every event is checked as it comes (secret-scan.ts). The state is
 * one per process, on globalThis, whichever module registry asks.
 */

export interface Violation {
  readonly where: string;
  readonly findings: readonly string[];
  readonly event: unknown;
}

interface ScanState {
  scanned: number;
  violations: Violation[];
  readonly listener: (event: unknown) => void;
}

const KEY = Symbol.for('express-api-conventions:test:event-scan');

function state(): ScanState {
  const global = globalThis as { [KEY]?: ScanState };
  global[KEY] ??= { scanned: 0, violations: [], listener: (event) => scanEvent(event, 'published in the test process') };
  return global[KEY];
}

/** Checks one event now; a finding is kept until the test file ends, when it fails it. */
export function scanEvent(event: unknown, where: string): void {
  const scan = state();
  scan.scanned += 1;
  const findings = secretsIn(event);
  if (findings.length > 0) scan.violations.push({ where, findings, event });
}

/** How many events this process has checked so far. */
export const eventsScanned = (): number => state().scanned;

/** Takes the findings kept so far (the scan's own test plants one and takes it back). */
export function takeViolations(): Violation[] {
  const scan = state();
  const taken = scan.violations;
  scan.violations = [];
  return taken;
}

export const startEventScan = (): void => subscribe(SECURITY_EVENTS_CHANNEL, state().listener);
export const stopEventScan = (): void => {
  unsubscribe(SECURITY_EVENTS_CHANNEL, state().listener);
};

/**
 * Runs `work` with the scan unsubscribed: for a test that needs the channel
 * without subscribers (what is built when nobody listens).
 */
export async function withoutEventScan<T>(work: () => T | Promise<T>): Promise<T> {
  stopEventScan();
  try {
    return await work();
  } finally {
    startEventScan();
  }
}

/** Scans each complete JSON line a reference server wrote on standard error (its event log); returns the unfinished rest. */
export function scanLoggedLines(text: string, where: string): string {
  const end = text.lastIndexOf('\n');
  for (const line of text.slice(0, end + 1).split('\n')) {
    if (!line.startsWith('{')) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    if (parsed !== null && typeof parsed === 'object' && 'event' in parsed && 'datetime' in parsed) {
      // The logger's own fields, the instance that wrote the line (examples/server/src/event-log.ts), are not the event's.
      const { instance, pid, ...event } = parsed as Record<string, unknown>;
      scanEvent(event, where);
    }
  }
  return text.slice(end + 1);
}
