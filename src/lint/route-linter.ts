import { checkLog, checkOneOf, invalidOption, readOptions } from '../config/options.js';
import { collectRoutes, type RouteEntry, routerStackOf } from '../http/router-stack.js';
import {
  checkPath,
  inconsistentMessage,
  inconsistentNames,
  PATH_RULES,
  type PathExceptions,
  type PathRule,
} from './path-rules.js';

export type RouteRule = PathRule;

/** One broken rule on one route. */
export interface RouteFinding {
  /** The methods and the full path, as `GET, POST /v1/user`. */
  readonly route: string;
  /** The full path as registered, mount paths included. */
  readonly path: string;
  readonly rule: RouteRule;
  /** What is wrong, naming the segment. */
  readonly message: string;
  /** What to write instead: a corrected path where one can be derived. */
  readonly suggestion: string;
}

/** Options of checkRoutes(). */
export interface CheckRoutesOptions {
  /**
   * What to do with findings besides returning them: `'throw'` a
   * RouteConventionError listing them all, `'log'` each through `log`, or
   * `'none'`. Default: `'throw'`.
   */
  report?: 'throw' | 'log' | 'none';
  /** Receives each finding when `report` is `'log'`; `false` logs nothing. Default: one JSON line on stderr. */
  log?: ((finding: RouteFinding) => void) | false;
  /**
   * Segments allowed to break one rule: `{ plural: ['health'] }` accepts
   * `/v1/health`. Default: `{ plural: ['oauth2'] }` (the segment of the
   * conventions' own token endpoint). Given exceptions are added to it.
   */
  exceptions?: Readonly<Partial<Record<RouteRule, readonly string[]>>>;
  /** Paths left unchecked (exact strings or patterns over the full path). Default: none. */
  ignore?: readonly (string | RegExp)[];
  /**
   * Path the app or router is mounted at, for a router or sub-app checked on
   * its own: `checkRoutes(usersRouter, { prefix: '/v1' })`. Default: `''`.
   */
  prefix?: string;
}

/** Thrown by checkRoutes() with `report: 'throw'`; `findings` holds each broken rule. */
export class RouteConventionError extends Error {
  override readonly name = 'RouteConventionError';
  readonly findings: readonly RouteFinding[];

  constructor(findings: readonly RouteFinding[]) {
    const lines = findings.map((f) => `  ${f.route}: ${f.message} Suggestion: ${f.suggestion} (${PATH_RULES[f.rule]})`);
    super(
      `${findings.length} finding${findings.length === 1 ? '' : 's'} against the path rules (docs/conventions.md §3):\n${lines.join('\n')}`,
    );
    this.findings = findings;
  }
}

// ---------------------------------------------------------------------------
// Options

const FACTORY = 'checkRoutes';
const OPTION_NAMES = ['report', 'log', 'exceptions', 'ignore', 'prefix'] as const;
const REPORTS = ['throw', 'log', 'none'] as const;

/** checkRoutes()'s options, checked, with their defaults. */
interface CheckRoutesConfiguration {
  readonly report: (typeof REPORTS)[number];
  /** Receives each finding when `report` is `'log'`; undefined when logging is off. */
  readonly log: ((finding: RouteFinding) => void) | undefined;
  /** Added to DEFAULT_PATH_EXCEPTIONS by checkPath(). */
  readonly exceptions: PathExceptions;
  readonly ignore: readonly (string | RegExp)[];
  readonly prefix: string;
}

const logFinding = (finding: RouteFinding): void => {
  process.stderr.write(`${JSON.stringify({ level: 'warn', ...finding })}\n`);
};

/** `exceptions`: rule names to segment lists. */
function readExceptions(value: unknown): PathExceptions {
  const exceptions = (value ?? {}) as PathExceptions;
  if (typeof exceptions !== 'object' || exceptions === null || Array.isArray(exceptions)) {
    invalidOption(FACTORY, 'exceptions', exceptions, "an object of rule names to segment lists, such as { plural: ['health'] }");
  }
  for (const [rule, segments] of Object.entries(exceptions)) {
    if (!Object.hasOwn(PATH_RULES, rule)) {
      invalidOption(FACTORY, 'exceptions', rule, `keyed by rule names (${Object.keys(PATH_RULES).join(', ')})`);
    }
    if (!Array.isArray(segments) || segments.some((s) => typeof s !== 'string')) {
      invalidOption(FACTORY, `exceptions.${rule}`, segments, 'an array of path segments');
    }
  }
  return exceptions;
}

/** Turns checkRoutes()'s options into its configuration, or throws a ConfigurationError. */
function readCheckRoutesOptions(options: unknown): CheckRoutesConfiguration {
  const given = readOptions<CheckRoutesOptions>(FACTORY, options, OPTION_NAMES);
  const report = checkOneOf(FACTORY, 'report', given.report ?? 'throw', REPORTS);
  const log = checkLog<(finding: RouteFinding) => void>(FACTORY, given.log, logFinding);
  const exceptions = readExceptions(given.exceptions);
  const ignore = given.ignore ?? [];
  if (!Array.isArray(ignore) || ignore.some((i) => typeof i !== 'string' && !(i instanceof RegExp))) {
    invalidOption(FACTORY, 'ignore', ignore, 'an array of paths and regular expressions');
  }
  const prefix = given.prefix ?? '';
  if (typeof prefix !== 'string') invalidOption(FACTORY, 'prefix', prefix, "a path such as '/v1'");
  return { report, log, exceptions, ignore, prefix };
}

// ---------------------------------------------------------------------------
// Checking

/** One route with its findings and the collection names its path uses. */
interface CheckedRoute {
  readonly route: string;
  readonly entry: RouteEntry;
  readonly collections: readonly string[];
  readonly findings: RouteFinding[];
}

/** One route's path through checkPath(), its findings named after the route. */
function checkRoute(entry: RouteEntry, exceptions: PathExceptions): CheckedRoute {
  const route = `${entry.methods.join(', ')} ${entry.path}`;
  const { findings, suggestion, collections } = checkPath(entry.path, exceptions);
  const found: RouteFinding[] = findings.map((f) => ({ route, path: entry.path, ...f, suggestion }));
  return { route, entry, collections, findings: found };
}

/** Path rule 9: one resource is not named both singular and plural. Adds a finding to each route that writes it singular. */
function addInconsistentNames(checked: readonly CheckedRoute[], exceptions: PathExceptions): void {
  const twins = inconsistentNames(
    checked.flatMap((c) => c.collections),
    exceptions,
  );
  for (const c of checked) {
    for (const name of c.collections) {
      const plural = twins.get(name);
      if (plural === undefined) continue;
      c.findings.push({
        route: c.route,
        path: c.entry.path,
        rule: 'consistent',
        message: inconsistentMessage(name, plural),
        suggestion: c.entry.path
          .split('/')
          .map((part) => (part.toLowerCase() === name ? plural : part))
          .join('/'),
      });
    }
  }
}

/** A route whose path is a regular expression, which no path rule can read. */
const unreadableFinding = (path: string): RouteFinding => ({
  route: path,
  path,
  rule: 'shape',
  message: 'A regular-expression path cannot be checked against the path rules; write it as a path string.',
  suggestion: '/v1/<collection>[/:id][/<sub-collection>]',
});

/**
 * Reads every route registered on an Express 5 or Express 4 app or router
 * (mounted routers included) and checks each path against the conventions' path
 * rules. Returns every finding, each naming the route, the rule and a
 * suggestion; by default it also throws them at once (`report: 'throw'`), so
 * `checkRoutes(app)` before `app.listen()` stops a service that breaks a rule.
 */
export function checkRoutes(appOrRouter: unknown, options?: Readonly<CheckRoutesOptions>): readonly RouteFinding[] {
  const { report, log, exceptions, ignore, prefix } = readCheckRoutesOptions(options);
  if (routerStackOf(appOrRouter) === undefined) {
    invalidOption(FACTORY, 'appOrRouter', appOrRouter, 'an Express app or router');
  }

  const routes: RouteEntry[] = [];
  const unreadable: string[] = [];
  collectRoutes(appOrRouter, prefix, routes, unreadable);
  const checked = routes
    .filter((r) => !ignore.some((i) => (typeof i === 'string' ? i === r.path : i.test(r.path))))
    .map((entry) => checkRoute(entry, exceptions));
  addInconsistentNames(checked, exceptions);
  const findings = checked.flatMap((c) => c.findings);
  for (const path of unreadable) findings.push(unreadableFinding(path));
  if (report === 'log' && log) for (const finding of findings) log(finding);
  if (report === 'throw' && findings.length > 0) throw new RouteConventionError(findings);
  return findings;
}
