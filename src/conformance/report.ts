/**
 * The report of a conformance run: one result per check, grouped by the
 * the conventions section the check comes from. The same object is returned by
 * checkConventions(), printed as a table by the CLI and written by `--json`.
 */

/** The the conventions sections the checks are grouped by, in the order they are reported. */
export const CONFORMANCE_SECTIONS = [
  'Common response behaviour',
  'Conventions for every resource',
  'Common query parameters',
  'Methods',
  'Errors',
  'Security response headers',
  'Cross-origin (CORS)',
  'Caching',
  'Limits',
  'Authentication',
  'Path rules',
  'JSON output escaping',
] as const;

export type ConformanceSection = (typeof CONFORMANCE_SECTIONS)[number];

export type CheckStatus = 'pass' | 'fail' | 'skip';

/** What a failing check expected and what it saw instead. */
export interface CheckEvidence {
  /** The request that showed the failure: `GET /v1/users/1 -> 200`. */
  readonly request?: string;
  readonly expected: string;
  readonly seen: string;
}

export interface CheckResult {
  /** Stable identifier, for `--ignore` and for tests: `security.hsts`. */
  readonly id: string;
  readonly section: ConformanceSection;
  /** What holds when the check passes, in one line. */
  readonly title: string;
  /** Where the rule is: section anchor and rows of docs/spec-coverage.md (`docs/spec-coverage.md#errors "7"`). */
  readonly rule: string;
  readonly status: CheckStatus;
  /** Present when `status` is `fail`. */
  readonly evidence?: CheckEvidence;
  /** Why the check was skipped (what option it needs, or what was not seen). */
  readonly reason?: string;
}

export interface ConformanceReport {
  /** True when no check failed. */
  readonly ok: boolean;
  /** The base URL that was probed. */
  readonly target: string;
  /** How many HTTP requests were sent (never more than the budget). */
  readonly requests: number;
  readonly summary: { readonly pass: number; readonly fail: number; readonly skip: number };
  /** Every check, in report order. */
  readonly results: readonly CheckResult[];
  /** The failing checks only: `expect(report.failures).toEqual([])` in a team's test. */
  readonly failures: readonly CheckResult[];
}

export function buildReport(target: string, requests: number, results: readonly CheckResult[]): ConformanceReport {
  const ordered = [...results].sort((a, b) => CONFORMANCE_SECTIONS.indexOf(a.section) - CONFORMANCE_SECTIONS.indexOf(b.section));
  const count = (status: CheckStatus) => ordered.filter((result) => result.status === status).length;
  const failures = ordered.filter((result) => result.status === 'fail');
  return {
    ok: failures.length === 0,
    target,
    requests,
    summary: { pass: count('pass'), fail: failures.length, skip: count('skip') },
    results: ordered,
    failures,
  };
}

const MARK: Record<CheckStatus, string> = { pass: 'pass', fail: 'FAIL', skip: 'skip' };

/** The report for people: a table per section, evidence under each failure. */
export function formatReport(report: ConformanceReport): string {
  const lines: string[] = [`Conformance of ${report.target} to the API conventions (docs/conventions.md)`, ''];
  const idWidth = Math.max(...report.results.map((result) => result.id.length), 2);
  for (const section of CONFORMANCE_SECTIONS) {
    const rows = report.results.filter((result) => result.section === section);
    if (rows.length === 0) continue;
    lines.push(section);
    for (const row of rows) {
      lines.push(`  ${MARK[row.status]}  ${row.id.padEnd(idWidth)}  ${row.title}`);
      if (row.status === 'fail' && row.evidence) {
        if (row.evidence.request) lines.push(`        request:  ${row.evidence.request}`);
        lines.push(`        expected: ${row.evidence.expected}`);
        lines.push(`        seen:     ${row.evidence.seen}`);
        lines.push(`        rule:     ${row.rule}`);
      }
      if (row.status === 'skip' && row.reason) lines.push(`        skipped:  ${row.reason}`);
    }
    lines.push('');
  }
  const { pass, fail, skip } = report.summary;
  // A bare base URL leaves many checks without a path: say so once, beside the count (skips never fail a run).
  const wanting = report.results.filter(
    (result) => result.status === 'skip' && /\bgive --|\bset EAC_/.test(result.reason ?? ''),
  ).length;
  if (wanting > 0)
    lines.push(
      `${wanting} ${wanting === 1 ? 'check was' : 'checks were'} skipped for want of a path or an option: give --openapi <file or URL>, or the flag each reason names.`,
    );
  lines.push(
    `checks: ${pass} pass, ${fail} fail, ${skip} skip; ${report.requests} ${report.requests === 1 ? 'request' : 'requests'} sent`,
  );
  return `${lines.join('\n')}\n`;
}

const xml = (text: string): string =>
  text
    .replace(/[^\t\n\r\x20-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu, '\ufffd')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

/**
 * The report as JUnit XML, for CI systems that show test results: one
 * `<testsuite>` per section of the conventions, one `<testcase>` per check (its id as
 * the name), a failure with the evidence, a skip with its reason.
 */
export function formatJunit(report: ConformanceReport): string {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xml(`express-api-conventions check ${report.target}`)}" tests="${report.results.length}" failures="${report.summary.fail}" skipped="${report.summary.skip}" errors="0">`,
  ];
  for (const section of CONFORMANCE_SECTIONS) {
    const rows = report.results.filter((result) => result.section === section);
    if (rows.length === 0) continue;
    const count = (status: CheckStatus) => rows.filter((row) => row.status === status).length;
    lines.push(
      `  <testsuite name="${xml(section)}" tests="${rows.length}" failures="${count('fail')}" skipped="${count('skip')}" errors="0">`,
    );
    for (const row of rows) {
      const open = `    <testcase classname="${xml(`conventions.${section}`)}" name="${xml(row.id)}"`;
      if (row.status === 'pass') {
        lines.push(`${open}/>`);
        continue;
      }
      lines.push(`${open}>`);
      if (row.status === 'skip') lines.push(`      <skipped message="${xml(row.reason ?? 'skipped')}"/>`);
      else {
        const evidence = row.evidence;
        const detail = [
          row.title,
          ...(evidence?.request ? [`request:  ${evidence.request}`] : []),
          ...(evidence ? [`expected: ${evidence.expected}`, `seen:     ${evidence.seen}`] : []),
          `rule:     ${row.rule}`,
        ].join('\n');
        const message = evidence ? `expected ${evidence.expected}; seen ${evidence.seen}` : row.title;
        lines.push(`      <failure message="${xml(message)}" type="${xml(row.id)}">${xml(detail)}</failure>`);
      }
      lines.push('    </testcase>');
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}
