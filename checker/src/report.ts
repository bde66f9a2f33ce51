import { type CheckId, CONFORMANCE_SECTIONS, type ConformanceSection } from './catalogue.js';
import { type Cause, type CauseId, CHECK_TRIAGE, CONFORMANCE_CAUSES, SEVERITIES, type Severity } from './causes.js';
import { type BaselineEntry, type Gate, gates, isExpired, type Suppression, suppressionOf } from './gate.js';

/**
 * The report of a conformance run: one result per check, grouped by the
 * the conventions section the check comes from. The same object is returned by
 * checkConventions(), printed as a table by the CLI and written by `--json`.
 */

export type CheckStatus = 'pass' | 'fail' | 'skip';

/** What a failing check expected and what it saw instead. */
export interface CheckEvidence {
  /** The request that showed the failure: `GET /v1/users/1 -> 200`. */
  readonly request?: string;
  readonly expected: string;
  readonly seen: string;
}

/** The exchange that showed a failure, as the HTML and SARIF reports show it (secrets redacted). */
export interface ExchangeRecord {
  readonly method: string;
  /** Path and query, as sent. */
  readonly path: string;
  /** The request's header names (values are never kept: they may hold credentials). */
  readonly requestHeaders: readonly string[];
  readonly status: number;
  /** Response headers, names in lower case; `set-cookie` values are left out. */
  readonly headers: Readonly<Record<string, string>>;
  /** The start of the response body (at most 2000 characters), tokens redacted. */
  readonly body: string;
}

/** What a check found, before severity, cause and the gate are added. */
export interface CheckOutcome {
  readonly id: string;
  readonly section: ConformanceSection;
  readonly title: string;
  readonly rule: string;
  readonly status: CheckStatus;
  readonly evidence?: CheckEvidence;
  readonly reason?: string;
  readonly exchange?: ExchangeRecord;
  /** The cause the evidence points to when it is not the check's usual one (helmet's defaults, the `cors` package). */
  readonly cause?: CauseId;
}

export interface CheckResult extends CheckOutcome {
  /** Stable identifier, for `ignore`, baselines and tests: `security.hsts`. */
  readonly id: string;
  /** What holds when the check passes, in one line. */
  readonly title: string;
  /** Where the rule is: section anchor and rows of docs/spec-coverage.md (`docs/spec-coverage.md#errors "7"`). */
  readonly rule: string;
  /** From the rule's wording: `must`, `should` or `advice`. */
  readonly severity: Severity;
  /** What to fix when it fails, shared with the other checks of the same cause (CONFORMANCE_CAUSES). */
  readonly cause: CauseId;
  /** Present when `status` is `fail`. */
  readonly evidence?: CheckEvidence;
  /** Why the check was skipped (what option it needs, or what was not seen). */
  readonly reason?: string;
  /** A failure that does not count, and why: an `ignore` pattern or a baseline entry. */
  readonly suppressed?: Suppression;
}

/** Failing checks that share one cause, with the fix. */
export interface CauseGroup extends Cause {
  readonly id: CauseId;
  /** The most serious severity among its checks. */
  readonly severity: Severity;
  /** Its failing checks (not ignored, not accepted), most serious first. */
  readonly checks: readonly string[];
}

export interface ConformanceReport {
  /** True when no failure at or above `failOn` counts (ignored and accepted ones do not). */
  readonly ok: boolean;
  /** The base URL that was probed. */
  readonly target: string;
  /** How many HTTP requests were sent (never more than the budget). */
  readonly requests: number;
  /** The least severity that fails the run. */
  readonly failOn: Severity;
  /** Whether an OpenAPI document gave paths and options. */
  readonly openapi: boolean;
  readonly summary: {
    readonly pass: number;
    /** Failing checks that count (neither ignored nor accepted), of any severity. */
    readonly fail: number;
    readonly skip: number;
    readonly accepted: number;
    readonly ignored: number;
    /** `fail`, by severity. */
    readonly must: number;
    readonly should: number;
    readonly advice: number;
  };
  /** Every check, in report order. */
  readonly results: readonly CheckResult[];
  /** The failing checks that count, of any severity: `expect(report.failures).toEqual([])` in a team's test. */
  readonly failures: readonly CheckResult[];
  /** Failing checks accepted by the baseline. */
  readonly accepted: readonly CheckResult[];
  /** Failing checks matched by an `ignore` pattern. */
  readonly ignored: readonly CheckResult[];
  /** The failures that count, grouped by cause, most serious cause first. */
  readonly causes: readonly CauseGroup[];
  /** How the run compares with the baseline, when one was given. */
  readonly baseline?: {
    /** Entries whose check now passes: remove them (`--update-baseline`). */
    readonly fixed: readonly BaselineEntry[];
    /** Entries past their `expires` date: their failures count again. */
    readonly expired: readonly BaselineEntry[];
  };
}

/** What buildReport() is told about the run besides the results. */
export interface ReportContext {
  readonly gate?: Partial<Gate>;
  readonly openapi?: boolean;
}

const bySeverity = (a: { severity: Severity }, b: { severity: Severity }) =>
  SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity);

export function buildReport(
  target: string,
  requests: number,
  outcomes: readonly CheckOutcome[],
  context: ReportContext = {},
): ConformanceReport {
  const gate: Gate = {
    ignore: context.gate?.ignore ?? [],
    failOn: context.gate?.failOn ?? 'must',
    baseline: context.gate?.baseline,
    today: context.gate?.today ?? new Date().toISOString().slice(0, 10),
  };
  const results: CheckResult[] = [...outcomes]
    .sort((a, b) => CONFORMANCE_SECTIONS.indexOf(a.section) - CONFORMANCE_SECTIONS.indexOf(b.section))
    .map(({ suppressed: _earlier, ...outcome }: CheckOutcome & { suppressed?: Suppression }) => {
      const triage = CHECK_TRIAGE[outcome.id as CheckId];
      const result = { ...outcome, severity: triage.severity, cause: outcome.cause ?? triage.cause };
      const suppressed = outcome.status === 'fail' ? suppressionOf(outcome.id as CheckId, gate) : undefined;
      return suppressed ? { ...result, suppressed } : result;
    });
  const count = (status: CheckStatus) => results.filter((result) => result.status === status).length;
  const failing = results.filter((result) => result.status === 'fail');
  const failures = failing.filter((result) => result.suppressed === undefined);
  const accepted = failing.filter((result) => result.suppressed?.by === 'baseline');
  const ignored = failing.filter((result) => result.suppressed?.by === 'ignore');
  const causes = new Map<CauseId, CheckResult[]>();
  for (const failure of [...failures].sort(bySeverity))
    causes.set(failure.cause, [...(causes.get(failure.cause) ?? []), failure]);
  const groups: CauseGroup[] = [...causes]
    .map(([id, checks]) => ({
      id,
      ...CONFORMANCE_CAUSES[id],
      severity: (checks[0] as CheckResult).severity,
      checks: checks.map((check) => check.id),
    }))
    .sort((a, b) => bySeverity(a, b) || b.checks.length - a.checks.length);
  const severityCount = (severity: Severity) => failures.filter((failure) => failure.severity === severity).length;
  const status = new Map(results.map((result) => [result.id, result.status]));
  return {
    ok: !failures.some((failure) => gates(failure.severity, gate.failOn)),
    target,
    requests,
    failOn: gate.failOn,
    openapi: context.openapi ?? false,
    summary: {
      pass: count('pass'),
      fail: failures.length,
      skip: count('skip'),
      accepted: accepted.length,
      ignored: ignored.length,
      must: severityCount('must'),
      should: severityCount('should'),
      advice: severityCount('advice'),
    },
    results,
    failures,
    accepted,
    ignored,
    causes: groups,
    ...(gate.baseline
      ? {
          baseline: {
            fixed: gate.baseline.accepted.filter((entry) => status.get(entry.id) === 'pass'),
            expired: gate.baseline.accepted.filter((entry) => isExpired(entry, gate.today)),
          },
        }
      : {}),
  };
}

/** Whether a result is a failure that fails the run: counted, and at or above `failOn`. */
export const failsRun = (result: CheckResult, failOn: Severity): boolean =>
  result.status === 'fail' && result.suppressed === undefined && gates(result.severity, failOn);

const MARK: Record<CheckStatus, string> = { pass: 'pass', fail: 'FAIL', skip: 'skip' };
const LABEL: Record<Severity, string> = { must: 'MUST', should: 'SHOULD', advice: 'ADVICE' };
const markOf = (result: CheckResult): string =>
  result.suppressed ? (result.suppressed.by === 'ignore' ? 'ignd' : 'acpt') : MARK[result.status];

/** Why a suppressed failure does not count, in one line. */
export function suppressionText(suppressed: Suppression): string {
  if (suppressed.by === 'ignore') return `ignored by --ignore ${suppressed.pattern}`;
  const until = suppressed.expires ? ` until ${suppressed.expires}` : '';
  return `accepted by the baseline${until}${suppressed.reason ? `: ${suppressed.reason}` : ''}`;
}

const evidenceLines = (result: CheckResult, indent: string): string[] => [
  ...(result.evidence?.request ? [`${indent}request:  ${result.evidence.request}`] : []),
  ...(result.evidence ? [`${indent}expected: ${result.evidence.expected}`, `${indent}seen:     ${result.evidence.seen}`] : []),
  `${indent}rule:     ${result.rule}`,
];

/**
 * The report for people: a table per section; then the failures that count,
 * grouped by cause with the fix and the evidence of each check; then what was
 * accepted, ignored, fixed or expired; then the counts and the verdict.
 */
export function formatReport(report: ConformanceReport): string {
  const lines: string[] = [
    `Conformance of ${report.target} to the API conventions (docs/conventions.md)`,
    '',
    ...sectionTables(report),
    ...causeLines(report),
    ...suppressedLines('Accepted by the baseline', report.accepted),
    ...suppressedLines('Ignored', report.ignored),
    ...baselineLines(report),
    ...summaryLines(report),
  ];
  return `${lines.join('\n')}\n`;
}

/** A table per section: each check's mark, id and title, and why it was suppressed or skipped. */
function sectionTables(report: ConformanceReport): string[] {
  const lines: string[] = [];
  const idWidth = Math.max(...report.results.map((result) => result.id.length), 2);
  for (const section of CONFORMANCE_SECTIONS) {
    const rows = report.results.filter((result) => result.section === section);
    if (rows.length === 0) continue;
    lines.push(section);
    for (const row of rows) {
      const severity = row.status === 'fail' ? `  [${LABEL[row.severity]}]` : '';
      lines.push(`  ${markOf(row)}  ${row.id.padEnd(idWidth)}  ${row.title}${severity}`);
      if (row.suppressed) lines.push(`        ${suppressionText(row.suppressed)}`);
      if (row.status === 'skip' && row.reason) lines.push(`        skipped:  ${row.reason}`);
    }
    lines.push('');
  }
  return lines;
}

/** The failures that count, grouped by cause: the fix, then the evidence of each check. */
function causeLines(report: ConformanceReport): string[] {
  if (report.causes.length === 0) return [];
  const { fail } = report.summary;
  const lines = [
    `What to fix: ${fail} failing ${fail === 1 ? 'check' : 'checks'} from ${report.causes.length} ${report.causes.length === 1 ? 'cause' : 'causes'}`,
    '',
  ];
  for (const cause of report.causes) {
    lines.push(
      `${LABEL[cause.severity]}  ${cause.title} (${cause.checks.length} ${cause.checks.length === 1 ? 'check' : 'checks'})`,
    );
    lines.push(`  fix:        ${cause.fix}`);
    lines.push(`  elsewhere:  ${cause.elsewhere}`);
    lines.push(`  docs:       ${cause.docs}`);
    for (const id of cause.checks) {
      const result = report.failures.find((failure) => failure.id === id) as CheckResult;
      lines.push(`  FAIL  ${id}  [${LABEL[result.severity]}]  ${result.title}`, ...evidenceLines(result, '        '));
    }
    lines.push('');
  }
  return lines;
}

/** The accepted or ignored failures, listed so that nothing is hidden. */
function suppressedLines(title: string, results: readonly CheckResult[]): string[] {
  if (results.length === 0) return [];
  const lines = [`${title} (${results.length}): listed so that nothing is hidden`];
  for (const result of results) {
    lines.push(`  ${result.id}  [${LABEL[result.severity]}]  ${suppressionText(result.suppressed as Suppression)}`);
    lines.push(...evidenceLines(result, '        '));
  }
  lines.push('');
  return lines;
}

/** The baseline entries that pass now, and those past their date. */
function baselineLines(report: ConformanceReport): string[] {
  const lines: string[] = [];
  if (report.baseline && report.baseline.fixed.length > 0) {
    lines.push(
      `Fixed since the baseline (${report.baseline.fixed.length}): ${report.baseline.fixed.map((entry) => entry.id).join(', ')}`,
      '  these checks pass now: remove them from the baseline (--update-baseline does).',
      '',
    );
  }
  if (report.baseline && report.baseline.expired.length > 0) {
    lines.push(
      `Expired in the baseline (${report.baseline.expired.length}): ${report.baseline.expired.map((entry) => `${entry.id} (${entry.expires})`).join(', ')}`,
      '  these are no longer accepted: their failures count again.',
      '',
    );
  }
  return lines;
}

/** The verdict against --fail-on, the checks skipped for want of an option, and the counts. */
function summaryLines(report: ConformanceReport): string[] {
  const lines: string[] = [];
  const { pass, fail, skip, accepted, ignored } = report.summary;
  if (fail > 0 || !report.ok) {
    const counts = SEVERITIES.filter((severity) => report.summary[severity] > 0)
      .map((severity) => `${report.summary[severity]} ${LABEL[severity]}`)
      .join(', ');
    lines.push(`${report.ok ? 'passes' : 'FAILS'} --fail-on ${report.failOn}: ${counts} ${fail === 1 ? 'finding' : 'findings'}`);
  }
  // A bare base URL leaves many checks without a path: say so once, beside the count (skips never fail a run).
  const wanting = report.results.filter(
    (result) => result.status === 'skip' && /\bgive --|\bset EAC_/.test(result.reason ?? ''),
  ).length;
  if (wanting > 0)
    lines.push(
      `${wanting} ${wanting === 1 ? 'check was' : 'checks were'} skipped for want of a path or an option: ${report.openapi ? 'give' : 'give --openapi <file or URL>, or'} the flag each reason names.`,
    );
  const extra = [accepted > 0 ? `, ${accepted} accepted` : '', ignored > 0 ? `, ${ignored} ignored` : ''].join('');
  lines.push(
    `checks: ${pass} pass, ${fail} fail, ${skip} skip${extra}; ${report.requests} ${report.requests === 1 ? 'request' : 'requests'} sent`,
  );
  return lines;
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
 * the name), a failure with the evidence for each finding that fails the
 * run, a skip with its reason for the rest (a skipped check, an accepted or
 * ignored finding, one below `failOn`), so the XML agrees with the exit code.
 */
export function formatJunit(report: ConformanceReport): string {
  const failing = report.results.filter((row) => failsRun(row, report.failOn)).length;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xml(`express-api-conventions check ${report.target}`)}" tests="${report.results.length}" failures="${failing}" skipped="${report.results.length - report.summary.pass - failing}" errors="0">`,
  ];
  for (const section of CONFORMANCE_SECTIONS) {
    const rows = report.results.filter((result) => result.section === section);
    if (rows.length === 0) continue;
    const failed = rows.filter((row) => failsRun(row, report.failOn)).length;
    const skipped = rows.filter((row) => row.status !== 'pass').length - failed;
    lines.push(
      `  <testsuite name="${xml(section)}" tests="${rows.length}" failures="${failed}" skipped="${skipped}" errors="0">`,
    );
    for (const row of rows) {
      const open = `    <testcase classname="${xml(`conventions.${section}`)}" name="${xml(row.id)}"`;
      if (row.status === 'pass') {
        lines.push(`${open}/>`);
        continue;
      }
      lines.push(`${open}>`);
      if (row.status === 'skip') lines.push(`      <skipped message="${xml(row.reason ?? 'skipped')}"/>`);
      else if (!failsRun(row, report.failOn)) {
        const why = row.suppressed
          ? suppressionText(row.suppressed)
          : `${LABEL[row.severity]} finding below --fail-on ${report.failOn}`;
        const evidence = row.evidence ? `: expected ${row.evidence.expected}; seen ${row.evidence.seen}` : '';
        lines.push(`      <skipped message="${xml(`${why}${evidence}`)}"/>`);
      } else {
        const evidence = row.evidence;
        const detail = [row.title, ...evidenceLines(row, '')].join('\n');
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
