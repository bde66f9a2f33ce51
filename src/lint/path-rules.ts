import { isPlural, isQualifier, pluralOf, wordsOf } from './words.js';

/**
 * the conventions' path rules ("Endpoints" › "Path rules", and "Versioning") as one
 * pure function over one path. The route linter (checkRoutes(), over route
 * patterns) and the conformance checker (`paths.*`, over the paths a service
 * answers) both call it, so a path gets the same verdict from both: the
 * checker, a package of its own, reads it through `express-api-conventions/lint`
 * and `express-api-conventions/extend` (docs/extend.md). It imports nothing
 * but the word helpers.
 */

/** The path rules, by the name a finding carries. Each value quotes the rule. */
export const PATH_RULES = {
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

export type PathRule = keyof typeof PATH_RULES;

/** Segments allowed to break one rule: `{ plural: ['health'] }` accepts `/v1/health`. */
export type PathExceptions = Readonly<Partial<Record<PathRule, readonly string[]>>>;

/** The conventions' own OAuth 2.0 endpoints live under the segment `oauth2`: not a plural noun, and right. */
export const DEFAULT_PATH_EXCEPTIONS: PathExceptions = { plural: ['oauth2'] };

/**
 * Names that stand for the caller's own resource right after the version:
 * `/v1/me` is `/v1/users/{the caller's id}`, a collection and an id in one
 * segment (`/v1/me/exports` is then a sub-collection). A widely used
 * convention (the caller alias); `self` and `current` are not accepted
 * there, since they read as names of resources of their own.
 */
export const CALLER_ALIASES: readonly string[] = ['me'];

/**
 * RFC 8615 well-known URIs (`/.well-known/oauth-authorization-server`) are
 * named by their registry, not by the service: outside the conventions' versioned
 * path space, so no path rule applies to them.
 */
export const WELL_KNOWN_PREFIX = '/.well-known/';

/** One broken rule in one path. */
export interface PathRuleFinding {
  readonly rule: PathRule;
  /** What is wrong, naming the segment. */
  readonly message: string;
}

/** The verdict on one path. */
export interface PathVerdict {
  readonly findings: readonly PathRuleFinding[];
  /** The path with every fix applied (the path itself when nothing is wrong). */
  readonly suggestion: string;
  /** The collection names the path uses, lower case, for {@link inconsistentNames}. */
  readonly collections: readonly string[];
}

const VERSION = /^v[1-9][0-9]*$/;
const VERSION_LIKE = /^v[0-9]+(?:[._-][0-9]+)*$/i;

/**
 * Verbs that do not belong in a path (rule 3). A segment that is one of them
 * alone is an action (`/v1/devices/:id/sync`, `/v1/emails/:id/verify`,
 * `/v1/logout`), as is a name that starts with one (`create-users`).
 * `search` is not here: rule 6 asks for it.
 */
// biome-ignore format: one word list
const VERBS = new Set([
  'activate', 'add', 'approve', 'assign', 'calculate', 'cancel', 'change', 'check', 'compute', 'create',
  'deactivate', 'delete', 'destroy', 'disable', 'do', 'download', 'edit', 'enable', 'erase', 'execute', 'fetch',
  'generate', 'get', 'insert', 'load', 'login', 'logout', 'make', 'modify', 'patch', 'post', 'process', 'put',
  'read', 'register', 'reject', 'remove', 'reset', 'retrieve', 'run', 'save', 'send', 'set', 'show', 'signin',
  'signout', 'signup', 'start', 'stop', 'submit', 'sync', 'update', 'upload', 'validate', 'verify', 'view', 'write',
]);
/**
 * Verbs that are nouns as well. Alone they are still actions, but as the
 * first word of a longer name they qualify the noun that ends it, and the
 * name is a noun: `stop-requests` (requests to stop), `change-requests`,
 * `view-counts`. Rule 3 is then judged by that noun being plural.
 */
// biome-ignore format: one word list
const NOUNS_TOO = new Set([
  'change', 'check', 'download', 'edit', 'insert', 'load', 'login', 'logout', 'patch', 'post', 'process',
  'register', 'reject', 'reset', 'run', 'set', 'show', 'signin', 'signup', 'start', 'stop', 'sync', 'upload', 'view',
]);
/** Words used for a search where rule 6 asks for the segment `search`. */
const SEARCH_WORDS = new Set(['find', 'lookup', 'query', 'filter', 'searches']);
// biome-ignore format: one word list
const TECHNOLOGIES = new Set([
  'php', 'asp', 'aspx', 'jsp', 'cgi', 'cgi-bin', 'servlet', 'servlets', 'java', 'node', 'nodejs', 'express',
  'rails', 'django', 'flask', 'spring', 'perl', 'ruby', 'python', 'dotnet', 'wordpress', 'wp-json', 'graphql',
  'soap', 'wsdl', 'json', 'xml', 'html', 'htm',
]);
const NOT_URL_SAFE = /[^\x21-\x7e]/;
const PARAMETER = /[:*]/;

interface Segment {
  /** The segment as written. */
  readonly text: string;
  /** Its fixed text, parameters removed. */
  readonly fixed: string;
  /** Whether it holds a parameter. */
  readonly dynamic: boolean;
}

/**
 * Splits a path into segments (a query string is dropped). Optional groups
 * of path-to-regexp 8 (`{/:format}`) are opened; `:name`, `:name?`,
 * `:name(\\d+)` (Express 4), `*splat`, `*` and `:"quoted"` are parameters.
 * A concrete path (`/v1/users/42`) has none.
 */
function segmentsOf(path: string): Segment[] {
  return (path.split('?')[0] ?? '')
    .replace(/[{}]/g, '')
    .split('/')
    .filter((text) => text !== '')
    .map((text) => {
      const at = text.search(PARAMETER);
      return { text, fixed: at === -1 ? text : text.slice(0, at), dynamic: at !== -1 };
    });
}

const hyphenate = (name: string): string => wordsOf(name).join('-');

const isCallerAlias = (segment: Segment | undefined): boolean =>
  segment !== undefined && !segment.dynamic && CALLER_ALIASES.includes(segment.text);

/** Whether `words` (one name) is a verb or starts with one, by {@link VERBS} and {@link NOUNS_TOO}. */
function isVerbName(words: readonly string[]): boolean {
  const first = words[0];
  if (first === undefined || !VERBS.has(first)) return false;
  return words.length === 1 || !NOUNS_TOO.has(first);
}

/** The exception sets of `sources`, merged. */
function mergeExceptions(...sources: readonly PathExceptions[]): ReadonlyMap<PathRule, ReadonlySet<string>> {
  const merged = new Map<PathRule, Set<string>>();
  for (const source of sources) {
    for (const [rule, segments] of Object.entries(source) as [PathRule, readonly string[]][]) {
      const set = merged.get(rule) ?? new Set<string>();
      for (const segment of segments) set.add(segment);
      merged.set(rule, set);
    }
  }
  return merged;
}

/** The findings and fixes of one path, as its rules are checked. */
class PathCheck {
  readonly findings: PathRuleFinding[] = [];
  /** Each segment's text with the fixes applied so far; `''` drops the segment. */
  readonly fixes: string[];

  constructor(
    private readonly exceptions: ReadonlyMap<PathRule, ReadonlySet<string>>,
    segments: readonly Segment[],
  ) {
    this.fixes = segments.map((s) => s.text);
  }

  excepted(rule: PathRule, text: string): boolean {
    return this.exceptions.get(rule)?.has(text) === true;
  }

  add(rule: PathRule, message: string): void {
    this.findings.push({ rule, message });
  }
}

/**
 * Path rule 1 and Versioning: `v<major>` first. Returns the index of the
 * version segment (-1 without one); fixes a minor version, and reports
 * segments before it.
 */
function checkVersion(check: PathCheck, segments: readonly Segment[]): number {
  const versionAt = segments.findIndex((s) => !s.dynamic && VERSION_LIKE.test(s.fixed));
  if (versionAt === -1) {
    check.add('version', 'The path has no version; it must start with /v<major>, such as /v1.');
    return versionAt;
  }
  const version = segments[versionAt] as Segment;
  if (!VERSION.test(version.fixed)) {
    const major =
      version.fixed
        .slice(1)
        .split(/[._-]/)[0]
        ?.replace(/^0+(?=\d)/, '') ?? '1';
    check.add('version', `"${version.fixed}" is not a major version; write only the major number, such as v1.`);
    check.fixes[versionAt] = `v${major === '0' ? '1' : major}`;
  }
  if (versionAt > 0) {
    const before = segments
      .slice(0, versionAt)
      .map((s) => s.text)
      .join('/');
    check.add('version', `The version must follow the host name directly; "${before}" comes before it.`);
  }
  return versionAt;
}

/**
 * Rule 3 (percent-encoding) and rule 2 (lower case), which hold for every
 * segment, ids included, and rule 4 (hyphens), which holds for names.
 */
function checkCharacters(check: PathCheck, segment: Segment, index: number, isName: boolean): void {
  const { fixed, text } = segment;
  if (fixed.includes('%') || NOT_URL_SAFE.test(fixed)) {
    if (!check.excepted('noPercentEncoding', text)) {
      check.add(
        'noPercentEncoding',
        `"${text}" holds a percent-encoded or non-ASCII character; use plain lower-case ASCII words.`,
      );
    }
  }
  const upper = /[A-Z]/.test(fixed.replace(/%[0-9A-F]{2}/g, ''));
  if (upper && !check.excepted('lowerCase', text)) {
    check.fixes[index] = text.replace(fixed, isName ? hyphenate(fixed) : fixed.toLowerCase());
    check.add('lowerCase', `"${text}" has upper-case letters; paths are all lower case, words joined with "-".`);
  }
  // Rule 4 is about names: an id is a value, whatever characters it holds.
  if (isName && !check.excepted('hyphen', text)) {
    if (fixed.includes('_')) {
      check.fixes[index] = (check.fixes[index] as string).replace(/_/g, '-');
      check.add('hyphen', `"${text}" joins words with "_"; join them with "-".`);
    } else if (/[a-z0-9][A-Z]/.test(fixed)) {
      check.add('hyphen', `"${text}" joins words by case; join them with "-".`);
    }
  }
}

/**
 * Rules 3, 6, 7 and 8 on the words of a segment: a file extension, a
 * technology, a list segment, a search word, a verb. Returns whether a fix
 * renamed the segment (rule 3's plural is then judged on the new name).
 */
function checkWords(check: PathCheck, segment: Segment, index: number): boolean {
  const { fixed, text } = segment;
  const dot = fixed.indexOf('.');
  if ((dot !== -1 || (segment.dynamic && /[.]$/.test(fixed))) && !check.excepted('noTechnology', text)) {
    const name = dot === -1 ? fixed : fixed.slice(0, dot);
    check.fixes[index] = name === '' ? text.slice(dot + 1) : name;
    check.add(
      'noTechnology',
      `"${text}" has a file extension; the URI never reveals the implementation (ask for a format with Accept).`,
    );
  }
  const words = wordsOf(dot === -1 ? fixed : fixed.slice(0, dot));
  if (words.some((w) => TECHNOLOGIES.has(w)) && !check.excepted('noTechnology', text)) {
    check.add('noTechnology', `"${text}" names an implementation technology; name the resource instead.`);
    check.fixes[index] = words.filter((w) => !TECHNOLOGIES.has(w)).join('-');
  } else if (words.includes('list') && !check.excepted('noList', text)) {
    const rest = words.filter((w) => w !== 'list');
    check.add('noList', `"${text}" is a list segment; the collection itself is the list.`);
    check.fixes[index] = rest.length > 0 ? pluralOf(rest.join('-')) : '';
  } else if (words.some((w) => SEARCH_WORDS.has(w)) && !check.excepted('search', text)) {
    check.add('search', `"${text}" looks like a search; a search endpoint uses the segment "search" (with q).`);
    check.fixes[index] = 'search';
  } else if (isVerbName(words) && !check.excepted('noVerb', text)) {
    const rest = words.slice(1);
    const verb = rest.length > 0 ? `starts with the verb "${words[0]}"` : 'is a verb';
    check.add('noVerb', `"${text}" ${verb}; name the resource and let the HTTP method say the action.`);
    check.fixes[index] = rest.length > 0 ? pluralOf(rest.join('-')) : '';
  } else {
    return false;
  }
  return true;
}

/**
 * Rule 1's shape and rule 3's plural on a collection segment. Returns its
 * name, lower case, for rule 9 across paths; undefined when it is not a name.
 */
function checkCollection(check: PathCheck, segment: Segment, index: number, renamed: boolean): string | undefined {
  const { fixed, text } = segment;
  if (segment.dynamic && fixed === '') {
    check.add('shape', `"${text}" stands where a collection name belongs; collection names are fixed plural nouns.`);
    return undefined;
  }
  if (/^[0-9]+$/.test(fixed)) {
    check.add('shape', `"${text}" is a value where a collection name belongs; collection names are fixed plural nouns.`);
    return undefined;
  }
  if (fixed === '') return undefined;
  const fixedWords = wordsOf(check.fixes[index] as string);
  const last = fixedWords[fixedWords.length - 1];
  if (!renamed && last && last !== 'search' && !isPlural(last) && !check.excepted('plural', text)) {
    if (isQualifier(last)) {
      // No plural of "legacy" names a resource: say what the segment is, and suggest nothing in its place.
      check.add(
        'plural',
        `"${text}" qualifies a collection rather than naming one; the segment after the version is a plural noun (/v1/orders): name the collection, or except this segment for "plural" while it stays.`,
      );
      return fixed.toLowerCase();
    }
    check.fixes[index] = [...fixedWords.slice(0, -1), pluralOf(last)].join('-');
    check.add('plural', `"${text}" is singular; resource names are plural nouns, such as "${check.fixes[index]}".`);
  }
  return fixed.toLowerCase();
}

/**
 * Checks one path against the conventions' path rules: a route pattern
 * (`/v1/users/:id`) or a concrete path (`/v1/users/42`), without the base
 * URL's own path. Returns each broken rule, a suggestion with every fix
 * applied, and the collection names used. Plurality and verbs are English
 * heuristics (word lists and endings); `exceptions` accepts a segment for
 * one rule, added to {@link DEFAULT_PATH_EXCEPTIONS}.
 */
export function checkPath(path: string, given: PathExceptions = {}): PathVerdict {
  const bare = path.split('?')[0] ?? '';
  if (bare.startsWith(WELL_KNOWN_PREFIX)) return { findings: [], suggestion: bare, collections: [] };
  const segments = segmentsOf(path);
  const check = new PathCheck(mergeExceptions(DEFAULT_PATH_EXCEPTIONS, given), segments);
  const versionAt = checkVersion(check, segments);

  // Without a version, which segment is a collection and which an id is unknown: the positional
  // rules (plural, shape) would only echo the missing version, segment by segment.
  const positional = versionAt !== -1;
  const start = versionAt === -1 ? 0 : versionAt + 1;
  const aliased = positional && isCallerAlias(segments[start]);
  const collections: string[] = [];
  segments.forEach((segment, index) => {
    if (index === versionAt) return;
    // 0, 2, 4: collections; 1, 3: ids. A caller alias is a collection and an id at once.
    const position = index - start + (aliased && index > start ? 1 : 0);
    const isName = index < start || position % 2 === 0;
    const isCollection = positional && index >= start && position % 2 === 0;
    checkCharacters(check, segment, index, isName);
    const renamed = checkWords(check, segment, index);
    if (!isCollection || (aliased && index === start)) return;
    const collection = checkCollection(check, segment, index, renamed);
    if (collection !== undefined) collections.push(collection);
  });
  const depth = segments.length - start + (aliased ? 1 : 0);
  if (positional && depth > 3) {
    check.add(
      'shape',
      `The path is ${depth} segments deep after the version; the path shape of docs/conventions.md §3.1 stops at a sub-collection.`,
    );
  }
  // Segments a fix removed (a verb or a list segment on its own) are dropped, and so are those before the version.
  const kept = check.fixes.slice(Math.max(versionAt, 0)).filter((fix) => fix !== '');
  const suggestion = `${versionAt === -1 ? '/v1' : ''}/${kept.join('/')}`.replace(/(.)\/$/, '$1');
  return { findings: check.findings, suggestion, collections };
}

/**
 * Path rule 9 across paths: the collection names (of {@link checkPath}'s
 * verdicts) written singular where another path writes them plural, each
 * with its plural. A name excepted for `consistent` is left alone.
 */
export function inconsistentNames(collections: Iterable<string>, given: PathExceptions = {}): ReadonlyMap<string, string> {
  const exceptions = mergeExceptions(DEFAULT_PATH_EXCEPTIONS, given);
  const used = new Set(collections);
  const twins = new Map<string, string>();
  for (const name of used) {
    const plural = pluralOf(name);
    if (plural !== name && used.has(plural) && !exceptions.get('consistent')?.has(name)) twins.set(name, plural);
  }
  return twins;
}

/** The message of a {@link inconsistentNames} finding. */
export const inconsistentMessage = (name: string, plural: string): string =>
  `"${name}" and "${plural}" name the same resource; use "${plural}" throughout.`;
