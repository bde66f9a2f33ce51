import { invalidOption } from 'express-api-conventions/extend';
import { type CheckId, CONFORMANCE_CHECK_IDS } from './catalogue.js';
import { SEVERITIES, type Severity } from './causes.js';

/**
 * What decides whether a run fails, after the checks have run: `ignore`
 * patterns, a baseline of accepted findings, and the least severity that
 * fails (`failOn`). Nothing here hides a finding: an ignored or accepted
 * failure is still listed in the report, with why it did not count.
 */

/** One accepted finding of a baseline file. */
export interface BaselineEntry {
  /** The check id: `security.csp`. */
  readonly id: string;
  /** Why it is accepted, shown beside it in every report. */
  readonly reason?: string;
  /** `YYYY-MM-DD`: from the day after, the finding fails again. */
  readonly expires?: string;
  /** What the check saw when the entry was written, for the reader of the file. */
  readonly seen?: string;
}

/** The content of a `--baseline` file. */
export interface ConformanceBaseline {
  readonly version: 1;
  readonly accepted: readonly BaselineEntry[];
}

/** Why a failing check does not count. */
export type Suppression =
  | { readonly by: 'ignore'; readonly pattern: string }
  | { readonly by: 'baseline'; readonly reason?: string; readonly expires?: string };

/** The checked gate options. */
export interface Gate {
  readonly ignore: readonly string[];
  readonly failOn: Severity;
  readonly baseline: ConformanceBaseline | undefined;
  /** Today, `YYYY-MM-DD` (UTC), for expiry. */
  readonly today: string;
}

const FACTORY = 'checkConventions';
const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/** An `ignore` entry as a regular expression: `*` stands for any characters, so `security.*` is every security check. */
export function ignorePattern(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
}

/** The ignore patterns, each required to name at least one check (a typo would otherwise ignore nothing, silently). */
export function readIgnore(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) invalidOption(FACTORY, 'ignore', value, 'an array of check ids or patterns such as "security.*"');
  return value.map((pattern, index) => {
    if (typeof pattern !== 'string' || pattern === '')
      invalidOption(FACTORY, `ignore[${index}]`, pattern, 'a check id or a pattern such as "security.*"');
    const matcher = ignorePattern(pattern);
    if (!CONFORMANCE_CHECK_IDS.some((id) => matcher.test(id)))
      invalidOption(FACTORY, 'ignore', pattern, 'a check id or a pattern that names at least one check');
    return pattern;
  });
}

export function readFailOn(value: unknown): Severity {
  if (value === undefined) return 'must';
  if (!(SEVERITIES as readonly unknown[]).includes(value))
    invalidOption(FACTORY, 'failOn', value, `one of ${SEVERITIES.join(', ')}`);
  return value as Severity;
}

/** Checks a parsed baseline file (as `--baseline` reads it); a wrong one throws a ConfigurationError naming the entry. */
export function readBaseline(value: unknown): ConformanceBaseline | undefined {
  if (value === undefined) return undefined;
  const shape = 'an object { "version": 1, "accepted": [{ "id", "reason"?, "expires"? }] }';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) invalidOption(FACTORY, 'baseline', value, shape);
  const { version, accepted } = value as { version?: unknown; accepted?: unknown };
  if (version !== 1) invalidOption(FACTORY, 'baseline.version', version, '1');
  if (!Array.isArray(accepted)) invalidOption(FACTORY, 'baseline.accepted', accepted, 'an array of entries');
  const seen = new Set<string>();
  const entries = accepted.map((entry: unknown, index): BaselineEntry => {
    const name = `baseline.accepted[${index}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) invalidOption(FACTORY, name, entry, 'an object');
    const { id, reason, expires, seen: saw, ...rest } = entry as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined)
      invalidOption(FACTORY, `${name}.${unknown}`, rest[unknown], 'absent (entries have id, reason, expires, seen)');
    if (typeof id !== 'string' || !(CONFORMANCE_CHECK_IDS as readonly string[]).includes(id))
      invalidOption(FACTORY, `${name}.id`, id, 'a check id');
    if (seen.has(id)) invalidOption(FACTORY, `${name}.id`, id, 'listed once');
    seen.add(id);
    if (reason !== undefined && typeof reason !== 'string') invalidOption(FACTORY, `${name}.reason`, reason, 'a string');
    if (expires !== undefined && (typeof expires !== 'string' || !DATE.test(expires)))
      invalidOption(FACTORY, `${name}.expires`, expires, 'a date YYYY-MM-DD');
    if (saw !== undefined && typeof saw !== 'string') invalidOption(FACTORY, `${name}.seen`, saw, 'a string');
    return {
      id,
      ...(reason === undefined ? {} : { reason }),
      ...(expires === undefined ? {} : { expires }),
      ...(saw === undefined ? {} : { seen: saw }),
    };
  });
  return { version: 1, accepted: entries };
}

/** Whether a failing check of `severity` fails a run that fails on `failOn`. */
export const gates = (severity: Severity, failOn: Severity): boolean =>
  SEVERITIES.indexOf(severity) <= SEVERITIES.indexOf(failOn);

/** The suppression of a failing check, if any: an ignore pattern first, then a baseline entry that has not expired. */
export function suppressionOf(id: CheckId, gate: Gate): Suppression | undefined {
  const pattern = gate.ignore.find((candidate) => ignorePattern(candidate).test(id));
  if (pattern !== undefined) return { by: 'ignore', pattern };
  const entry = gate.baseline?.accepted.find((candidate) => candidate.id === id);
  if (entry === undefined || isExpired(entry, gate.today)) return undefined;
  return {
    by: 'baseline',
    ...(entry.reason === undefined ? {} : { reason: entry.reason }),
    ...(entry.expires === undefined ? {} : { expires: entry.expires }),
  };
}

/** An entry expires at the end of its `expires` day (UTC). */
export const isExpired = (entry: BaselineEntry, today: string): boolean => entry.expires !== undefined && entry.expires < today;

/** What a baseline update needs of each check: its id, whether it failed, and what it saw. */
interface CheckState {
  readonly id: string;
  readonly status: 'pass' | 'fail' | 'skip';
  readonly suppressed?: Suppression;
  readonly evidence?: { readonly seen: string };
}

/**
 * The baseline after a run (`--update-baseline`): every failing check that
 * is not ignored, keeping the reason and expiry an earlier entry gave it;
 * entries whose check passes now are dropped (fixed); entries whose check
 * did not run this time are kept, since nothing shows them fixed.
 */
export function updatedBaseline(results: readonly CheckState[], previous?: ConformanceBaseline): ConformanceBaseline {
  const earlier = new Map((previous?.accepted ?? []).map((entry) => [entry.id, entry]));
  const accepted: BaselineEntry[] = [];
  for (const result of results) {
    const entry = earlier.get(result.id);
    if (result.status === 'fail' && result.suppressed?.by !== 'ignore') {
      accepted.push({
        id: result.id,
        ...(entry?.reason === undefined ? {} : { reason: entry.reason }),
        ...(entry?.expires === undefined ? {} : { expires: entry.expires }),
        ...(result.evidence ? { seen: result.evidence.seen } : {}),
      });
    } else if (result.status === 'skip' && entry) {
      accepted.push(entry);
    }
  }
  return { version: 1, accepted };
}
