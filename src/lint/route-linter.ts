import { checkFunction, checkOneOf, invalidOption, readOptions } from '../config/options.js';
import { isPlural, pluralOf, wordsOf } from './words.js';

/**
 * The path rules of SPEC.md ("Endpoints" › "Path rules", and "Versioning"),
 * by the name a finding carries. Each value quotes the rule.
 */
export const ROUTE_RULES = {
  /** Path rule 1 and Versioning 1, 4: "The version follows the host name"; "only a major number". */
  version: 'Path rule 1: the major version `v<major>` follows the host name; no minor version.',
  /** Path rule 1: `/v<major>/<collection>[/<id>][/<sub-collection>]`. */
  shape: 'Path rule 1: the shape is /v<major>/<collection>[/<id>][/<sub-collection>].',
  /** Path rule 2: "All lower case." */
  lowerCase: 'Path rule 2: all lower case.',
  /** Path rule 3: "Resource names are plural nouns." */
  plural: 'Path rule 3: resource names are plural nouns.',
  /** Path rule 3: "No verbs in paths." */
  noVerb: 'Path rule 3: no verbs in paths.',
  /** Path rule 3: "No percent-encoded characters." */
  noPercentEncoding: 'Path rule 3: no percent-encoded characters.',
  /** Path rule 4: "Multiple words in one name are joined with a hyphen." */
  hyphen: 'Path rule 4: multiple words in one name are joined with a hyphen.',
  /** Path rule 6: "Search endpoints contain the segment `search`." */
  search: 'Path rule 6: search endpoints contain the segment `search`.',
  /** Path rule 7: "A list endpoint carries no `list` segment." */
  noList: 'Path rule 7: a list endpoint carries no `list` segment.',
  /** Path rule 8: "The URI never reveals the server-side implementation technology." */
  noTechnology: 'Path rule 8: the URI never reveals the server-side implementation technology.',
  /** Path rule 9: "The same rule applies throughout." */
  consistent: 'Path rule 9: the same form throughout (no mix of singular and plural names for one resource).',
} as const;

export type RouteRule = keyof typeof ROUTE_RULES;

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
  /** Receives each finding when `report` is `'log'`. Default: one JSON line on stderr. */
  log?: (finding: RouteFinding) => void;
  /**
   * Segments allowed to break one rule: `{ plural: ['me'] }` accepts
   * `/v1/me`. Default: `{ plural: ['oauth2'] }` (SPEC.md's own token
   * endpoint, `/v1/oauth2/token`). Given exceptions are added to it.
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
    const lines = findings.map((f) => `  ${f.route}: ${f.message} Suggestion: ${f.suggestion} (${ROUTE_RULES[f.rule]})`);
    super(`${findings.length} finding${findings.length === 1 ? '' : 's'} against SPEC.md's path rules:\n${lines.join('\n')}`);
    this.findings = findings;
  }
}

/** Defaults: SPEC.md names `/v1/oauth2/token` itself. */
export const DEFAULT_ROUTE_EXCEPTIONS: Readonly<Partial<Record<RouteRule, readonly string[]>>> = { plural: ['oauth2'] };

const VERSION = /^v[1-9][0-9]*$/;
const VERSION_LIKE = /^v[0-9]+(?:[._-][0-9]+)*$/i;
// biome-ignore format: one word list
const VERBS = new Set([
  'get', 'create', 'make', 'add', 'insert', 'update', 'edit', 'modify', 'delete', 'remove', 'destroy', 'erase',
  'fetch', 'retrieve', 'read', 'load', 'save', 'submit', 'send', 'do', 'run', 'execute', 'validate', 'calculate',
  'compute', 'generate', 'activate', 'deactivate', 'enable', 'disable', 'approve', 'reject', 'cancel', 'start',
  'stop', 'upload', 'download', 'login', 'logout', 'signin', 'signout', 'signup', 'register', 'reset', 'assign',
]);
const SEARCH_WORDS = new Set(['find', 'lookup', 'query', 'filter', 'searches']);
// biome-ignore format: one word list
const TECHNOLOGIES = new Set([
  'php', 'asp', 'aspx', 'jsp', 'cgi', 'cgi-bin', 'servlet', 'servlets', 'java', 'node', 'nodejs', 'express',
  'rails', 'django', 'flask', 'spring', 'perl', 'ruby', 'python', 'dotnet', 'wordpress', 'wp-json', 'graphql',
  'soap', 'wsdl', 'json', 'xml', 'html', 'htm',
]);
const NOT_URL_SAFE = /[^\x21-\x7e]/;
const PARAMETER = /[:*]/;

interface RouteEntry {
  readonly path: string;
  readonly methods: string[];
}

interface Segment {
  /** The segment as written. */
  readonly text: string;
  /** Its fixed text, parameters removed. */
  readonly fixed: string;
  /** Whether it holds a parameter. */
  readonly dynamic: boolean;
}

// ---------------------------------------------------------------------------
// Reading the routes out of Express 4 and Express 5 routers

interface LayerLike {
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: unknown };
  rawPath?: unknown;
  regexp?: RegExp & { fast_slash?: boolean };
  keys?: { name: string | number; optional?: boolean }[];
}

/** The stack of an Express 5 app (`app.router`), an Express 4 app (`app._router`), or a router. */
function stackOf(target: unknown): LayerLike[] | undefined {
  const t = target as { stack?: unknown; router?: { stack?: unknown }; _router?: { stack?: unknown }; lazyrouter?: unknown };
  if (Array.isArray(t.stack)) return t.stack as LayerLike[];
  // Express 5's `app.router` is a getter creating the router on first use;
  // `_router` (Express 4) exists once a route or middleware was added.
  if (typeof t.lazyrouter !== 'function' && t.router && Array.isArray(t.router.stack)) return t.router.stack as LayerLike[];
  if (t._router && Array.isArray(t._router.stack)) return t._router.stack as LayerLike[];
  if (typeof t.lazyrouter === 'function') return [];
  return undefined;
}

/**
 * The mount path of an Express 4 layer, read back from its regular
 * expression (Express 4 keeps no string): `^\/v1(?:\/([^/]+?))\/?(?=\/|$)`
 * is `/v1/:tenant`. Undefined when the expression is not one Express wrote
 * for a plain path.
 */
function express4MountPath(layer: LayerLike): string | undefined {
  const regexp = layer.regexp;
  if (!regexp) return undefined;
  if (regexp.fast_slash) return '';
  let source = regexp.source;
  if (!source.startsWith('^') || !source.endsWith('\\/?(?=\\/|$)')) return undefined;
  source = source.slice(1, -'\\/?(?=\\/|$)'.length);
  const keys = layer.keys ?? [];
  let index = 0;
  source = source.replace(/\(\?:\\\/\(\[\^\\?\/\]\+\?\)\)(\?)?/g, (_m, optional: string | undefined) => {
    const key = keys[index++];
    return `/:${String(key?.name ?? index)}${optional ?? ''}`;
  });
  source = source.replace(/\\([/.\-~])/g, '$1');
  if (/[\\()[\]|^$+*]/.test(source.replace(/\/:[A-Za-z0-9_$]+\??/g, ''))) return undefined;
  return source;
}

function collect(target: unknown, prefix: string, out: RouteEntry[], unreadable: string[]): void {
  const stack = stackOf(target);
  if (!stack) return;
  for (const layer of stack) {
    if (layer.route) {
      const methods = Object.keys(layer.route.methods)
        .filter((m) => layer.route?.methods[m])
        .map((m) => (m === '_all' ? 'ALL' : m.toUpperCase()));
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      for (const path of paths) {
        if (typeof path === 'string') out.push({ path: joinPath(prefix, path), methods });
        else unreadable.push(`${prefix}${String(path)}`);
      }
    } else if (layer.handle && Array.isArray(layer.handle.stack)) {
      const raw = layer.rawPath;
      const mounts = raw === undefined ? [express4MountPath(layer)] : Array.isArray(raw) ? raw : [raw];
      for (const mount of mounts) {
        if (typeof mount === 'string') collect(layer.handle, joinPath(prefix, mount), out, unreadable);
        else unreadable.push(`${prefix}${String(mount ?? layer.regexp)}`);
      }
    }
  }
}

const joinPath = (prefix: string, path: string): string => {
  const joined = `${prefix.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  return joined.length > 1 ? joined.replace(/\/+$/, '') : joined;
};

// ---------------------------------------------------------------------------
// Checking one path

/**
 * Splits a path into segments. Optional groups of path-to-regexp 8
 * (`{/:format}`) are opened; `:name`, `:name?`, `:name(\\d+)` (Express 4),
 * `*splat`, `*` and `:"quoted"` are parameters.
 */
function segmentsOf(path: string): Segment[] {
  return path
    .replace(/[{}]/g, '')
    .split('/')
    .filter((text) => text !== '')
    .map((text) => {
      const at = text.search(PARAMETER);
      return { text, fixed: at === -1 ? text : text.slice(0, at), dynamic: at !== -1 };
    });
}

const hyphenate = (name: string): string => wordsOf(name).join('-');

interface Checked {
  readonly findings: RouteFinding[];
  /** Collection names used, for the consistency check across routes. */
  readonly collections: string[];
}

function checkPath(entry: RouteEntry, exceptions: ReadonlyMap<RouteRule, ReadonlySet<string>>): Checked {
  const route = `${entry.methods.join(', ')} ${entry.path}`;
  const findings: RouteFinding[] = [];
  const segments = segmentsOf(entry.path);
  const fixes = segments.map((s) => s.text);
  const excepted = (rule: RouteRule, text: string): boolean => exceptions.get(rule)?.has(text) === true;
  // Every finding of a route carries the same suggestion: the path with all
  // of its fixes applied, filled in once every rule has run.
  const add = (rule: RouteRule, message: string): void => {
    findings.push({ route, path: entry.path, rule, message, suggestion: '' });
  };
  let dropBefore = 0;

  // Path rule 1 and Versioning: `v<major>` first.
  const versionAt = segments.findIndex((s) => !s.dynamic && VERSION_LIKE.test(s.fixed));
  const first = segments[0];
  if (!first || versionAt === -1) {
    add('version', 'The path has no version; it must start with /v<major>, such as /v1.');
  } else {
    const version = segments[versionAt] as Segment;
    if (!VERSION.test(version.fixed)) {
      const major =
        version.fixed
          .slice(1)
          .split(/[._-]/)[0]
          ?.replace(/^0+(?=\d)/, '') ?? '1';
      const fixed = `v${major === '0' ? '1' : major}`;
      add('version', `"${version.fixed}" is not a major version; write only the major number, such as v1.`);
      fixes[versionAt] = fixed;
    }
    if (versionAt > 0) {
      const before = segments
        .slice(0, versionAt)
        .map((s) => s.text)
        .join('/');
      add('version', `The version must follow the host name directly; "${before}" comes before it.`);
      dropBefore = versionAt;
    }
  }

  const start = versionAt === -1 ? 0 : versionAt + 1;
  const collections: string[] = [];
  segments.forEach((segment, index) => {
    if (index === versionAt) return;
    const { fixed, text } = segment;
    const position = index - start; // 0, 2, 4: collections; 1, 3: ids.
    const isCollection = index >= start && position % 2 === 0;

    if (fixed.includes('%') || NOT_URL_SAFE.test(fixed)) {
      if (!excepted('noPercentEncoding', text)) {
        add('noPercentEncoding', `"${text}" holds a percent-encoded or non-ASCII character; use plain lower-case ASCII words.`);
      }
    }
    if (/[A-Z]/.test(fixed.replace(/%[0-9A-F]{2}/g, '')) && !excepted('lowerCase', text)) {
      fixes[index] = text.replace(fixed, hyphenate(fixed));
      add('lowerCase', `"${text}" has upper-case letters; paths are all lower case, words joined with "-".`);
    }
    if (fixed.includes('_') && !excepted('hyphen', text)) {
      fixes[index] = (fixes[index] as string).replace(/_/g, '-');
      add('hyphen', `"${text}" joins words with "_"; join them with "-".`);
    }
    const dot = fixed.indexOf('.');
    if ((dot !== -1 || (segment.dynamic && /[.]$/.test(fixed))) && !excepted('noTechnology', text)) {
      const name = dot === -1 ? fixed : fixed.slice(0, dot);
      fixes[index] = name === '' ? text.slice(dot + 1) : name;
      add(
        'noTechnology',
        `"${text}" has a file extension; the URI never reveals the implementation (ask for a format with Accept).`,
      );
    }
    const words = wordsOf(dot === -1 ? fixed : fixed.slice(0, dot));
    let renamed = true;
    if (words.some((w) => TECHNOLOGIES.has(w)) && !excepted('noTechnology', text)) {
      add('noTechnology', `"${text}" names an implementation technology; name the resource instead.`);
      fixes[index] = words.filter((w) => !TECHNOLOGIES.has(w)).join('-');
    } else if (words.includes('list') && !excepted('noList', text)) {
      const rest = words.filter((w) => w !== 'list');
      add('noList', `"${text}" is a list segment; the collection itself is the list.`);
      fixes[index] = rest.length > 0 ? pluralOf(rest.join('-')) : '';
    } else if (words.some((w) => SEARCH_WORDS.has(w)) && !excepted('search', text)) {
      add('search', `"${text}" looks like a search; a search endpoint uses the segment "search" (with q).`);
      fixes[index] = 'search';
    } else if (words.length > 0 && VERBS.has(words[0] as string) && !excepted('noVerb', text)) {
      const rest = words.slice(1);
      add('noVerb', `"${text}" starts with the verb "${words[0]}"; name the resource and let the HTTP method say the action.`);
      fixes[index] = rest.length > 0 ? pluralOf(rest.join('-')) : '';
    } else {
      renamed = false;
    }

    if (index < start) return;
    if (isCollection && segment.dynamic && fixed === '') {
      add('shape', `"${text}" stands where a collection name belongs; collection names are fixed plural nouns.`);
    } else if (isCollection && fixed !== '') {
      collections.push(fixed.toLowerCase());
      const fixedWords = wordsOf(fixes[index] as string);
      const last = fixedWords[fixedWords.length - 1];
      if (!renamed && last && last !== 'search' && !isPlural(last) && !excepted('plural', text)) {
        fixes[index] = [...fixedWords.slice(0, -1), pluralOf(last)].join('-');
        add('plural', `"${text}" is singular; resource names are plural nouns, such as "${fixes[index]}".`);
      }
    }
  });
  if (segments.length - start > 3) {
    add(
      'shape',
      `The path is ${segments.length - start} segments deep after the version; SPEC.md's shape stops at a sub-collection.`,
    );
  }
  // Segments a fix removed (a verb or a list segment on its own) are dropped.
  const kept = fixes.slice(dropBefore).filter((fix) => fix !== '');
  const suggestion = `${versionAt === -1 ? '/v1' : ''}/${kept.join('/')}`.replace(/(.)\/$/, '$1');
  for (const finding of findings) (finding as { suggestion: string }).suggestion = suggestion;
  return { findings, collections };
}

/**
 * Reads every route registered on an Express 5 or Express 4 app or router
 * (mounted routers included) and checks each path against SPEC.md's path
 * rules. Returns every finding, each naming the route, the rule and a
 * suggestion; by default it also throws them at once (`report: 'throw'`), so
 * `checkRoutes(app)` before `app.listen()` stops a service that breaks a rule.
 */
export function checkRoutes(appOrRouter: unknown, options?: Readonly<CheckRoutesOptions>): readonly RouteFinding[] {
  const given = readOptions<CheckRoutesOptions>('checkRoutes', options, ['report', 'log', 'exceptions', 'ignore', 'prefix']);
  const report = checkOneOf('checkRoutes', 'report', given.report ?? 'throw', ['throw', 'log', 'none'] as const);
  const log =
    given.log === undefined
      ? (finding: RouteFinding) => process.stderr.write(`${JSON.stringify({ level: 'warn', ...finding })}\n`)
      : checkFunction<(finding: RouteFinding) => void>('checkRoutes', 'log', given.log);
  const exceptions = new Map<RouteRule, Set<string>>();
  for (const source of [DEFAULT_ROUTE_EXCEPTIONS, given.exceptions ?? {}]) {
    if (typeof source !== 'object' || source === null || Array.isArray(source)) {
      invalidOption('checkRoutes', 'exceptions', source, "an object of rule names to segment lists, such as { plural: ['me'] }");
    }
    for (const [rule, segments] of Object.entries(source)) {
      if (!Object.hasOwn(ROUTE_RULES, rule)) {
        invalidOption('checkRoutes', 'exceptions', rule, `keyed by rule names (${Object.keys(ROUTE_RULES).join(', ')})`);
      }
      if (!Array.isArray(segments) || segments.some((s) => typeof s !== 'string')) {
        invalidOption('checkRoutes', `exceptions.${rule}`, segments, 'an array of path segments');
      }
      const set = exceptions.get(rule as RouteRule) ?? new Set<string>();
      for (const segment of segments as string[]) set.add(segment);
      exceptions.set(rule as RouteRule, set);
    }
  }
  const ignore = given.ignore ?? [];
  if (!Array.isArray(ignore) || ignore.some((i) => typeof i !== 'string' && !(i instanceof RegExp))) {
    invalidOption('checkRoutes', 'ignore', ignore, 'an array of paths and regular expressions');
  }
  const prefix = given.prefix ?? '';
  if (typeof prefix !== 'string') invalidOption('checkRoutes', 'prefix', prefix, "a path such as '/v1'");
  if (stackOf(appOrRouter) === undefined) {
    invalidOption('checkRoutes', 'appOrRouter', appOrRouter, 'an Express app or router');
  }

  const routes: RouteEntry[] = [];
  const unreadable: string[] = [];
  collect(appOrRouter, prefix, routes, unreadable);
  const checked = routes
    .filter((r) => !ignore.some((i) => (typeof i === 'string' ? i === r.path : i.test(r.path))))
    .map((r) => ({ entry: r, ...checkPath(r, exceptions) }));

  // Path rule 9: one resource is not named both singular and plural.
  const used = new Set(checked.flatMap((c) => c.collections));
  for (const c of checked) {
    for (const name of c.collections) {
      const plural = pluralOf(name);
      if (plural !== name && used.has(plural) && !exceptions.get('consistent')?.has(name)) {
        c.findings.push({
          route: `${c.entry.methods.join(', ')} ${c.entry.path}`,
          path: c.entry.path,
          rule: 'consistent',
          message: `"${name}" and "${plural}" name the same resource; use "${plural}" throughout.`,
          suggestion: c.entry.path
            .split('/')
            .map((part) => (part.toLowerCase() === name ? plural : part))
            .join('/'),
        });
      }
    }
  }
  const findings = checked.flatMap((c) => c.findings);
  for (const path of unreadable) {
    findings.push({
      route: path,
      path,
      rule: 'shape',
      message: 'A regular-expression path cannot be checked against the path rules; write it as a path string.',
      suggestion: '/v1/<collection>[/:id][/<sub-collection>]',
    });
  }
  if (report === 'log') for (const finding of findings) log(finding);
  if (report === 'throw' && findings.length > 0) throw new RouteConventionError(findings);
  return findings;
}
