import { parseJson, type RunContext } from './context.js';
import { UNKNOWN_ROUTE } from './errors-checks.js';
import { IRREGULAR_PLURALS, PATH_VERBS, SEARCH_SEGMENT, TOKEN_PATH } from './spec-values.js';

/** One path-rule finding: the rule it breaks and why. */
export interface PathFinding {
  readonly id:
    | 'paths.version-first'
    | 'paths.lowercase'
    | 'paths.plural-nouns'
    | 'paths.no-verbs'
    | 'paths.no-percent-encoding'
    | 'paths.hyphens'
    | 'paths.no-list'
    | 'paths.no-extensions';
  readonly why: string;
}

const VERSION = /^v\d+$/;
const NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const EXTENSION = /\.[A-Za-z][A-Za-z0-9]*$/;

const isPlural = (name: string): boolean => {
  const last = name.split('-').pop() ?? name;
  if (IRREGULAR_PLURALS.has(last)) return true;
  return last.endsWith('s') && !last.endsWith('ss');
};

/**
 * The path rules of SPEC.md applied to one path (the part after the base
 * URL's own path). The shape is `/v<major>/<collection>[/<id>][/<sub-collection>]`:
 * segments after the version alternate between names (checked as plural
 * nouns joined by hyphens) and identifiers (any value). Plural and verb
 * detection are English heuristics; `--ignore` turns a check off.
 */
export function pathFindings(path: string): PathFinding[] {
  const findings: PathFinding[] = [];
  const segments = path.split('?')[0]?.split('/').filter(Boolean) ?? [];
  if (segments.length === 0) return findings;
  const [version, ...rest] = segments;
  if (!VERSION.test(version as string))
    findings.push({ id: 'paths.version-first', why: `first segment ${JSON.stringify(version)}` });
  if (path !== path.toLowerCase()) findings.push({ id: 'paths.lowercase', why: 'upper-case letters' });
  if (path.includes('%')) findings.push({ id: 'paths.no-percent-encoding', why: 'a percent-encoded character' });
  const fixedBySpec = `/${segments.join('/')}` === TOKEN_PATH;
  rest.forEach((segment, index) => {
    const lower = segment.toLowerCase();
    const words = lower.split('-');
    if (EXTENSION.test(segment)) findings.push({ id: 'paths.no-extensions', why: `segment ${JSON.stringify(segment)}` });
    if (words.includes('list')) findings.push({ id: 'paths.no-list', why: `segment ${JSON.stringify(segment)}` });
    if (!fixedBySpec && (PATH_VERBS.has(lower) || (words.length > 1 && PATH_VERBS.has(words[0] as string)))) {
      findings.push({ id: 'paths.no-verbs', why: `segment ${JSON.stringify(segment)}` });
    }
    const isName = index % 2 === 0;
    if (!isName || fixedBySpec || lower === SEARCH_SEGMENT) return;
    if (!NAME.test(segment) && !EXTENSION.test(segment)) {
      findings.push({ id: 'paths.hyphens', why: `name ${JSON.stringify(segment)} (words joined other than by "-")` });
    }
    if (!isPlural(lower.replace(EXTENSION, '')))
      findings.push({ id: 'paths.plural-nouns', why: `name ${JSON.stringify(segment)}` });
  });
  return findings;
}

const PATH_IDS: readonly PathFinding['id'][] = [
  'paths.version-first',
  'paths.lowercase',
  'paths.plural-nouns',
  'paths.no-verbs',
  'paths.no-percent-encoding',
  'paths.hyphens',
  'paths.no-list',
  'paths.no-extensions',
];

/** Strings in a JSON body that are links to the API itself. */
function linksIn(value: unknown, origin: string, prefix: string, into: Set<string>, depth = 0): void {
  if (depth > 8) return;
  if (typeof value === 'string') {
    if (value.startsWith(`${origin}/`)) into.add(new URL(value).pathname);
    else if (value.startsWith(`${prefix}/v`) && /^\/[^\s/]/.test(value)) into.add(value.split(/[?#]/)[0] as string);
    return;
  }
  if (Array.isArray(value)) for (const item of value.slice(0, 100)) linksIn(item, origin, prefix, into, depth + 1);
  else if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value).slice(0, 100)) linksIn(item, origin, prefix, into, depth + 1);
  }
}

/**
 * SPEC.md "Path rules" on the paths named by options and on those found in
 * `Location` headers and in JSON bodies of the answers seen.
 */
export function checkPaths(ctx: RunContext, origin: string): void {
  const given = new Set<string>();
  const { resource, paths, tokenEndpoint, reflect } = ctx.config;
  for (const path of [resource, ...paths, ctx.config.protected, tokenEndpoint, reflect]) {
    if (path !== undefined) given.add(ctx.under(path).split('?')[0] as string);
  }
  const found = new Set<string>();
  for (const exchange of ctx.probe.exchanges) {
    const location = exchange.headers.location;
    if (location) {
      const url = new URL(location, origin);
      if (url.origin === origin) found.add(url.pathname);
    }
    linksIn(parseJson(exchange.body), origin, ctx.prefix, found);
  }
  const unknown = ctx.under(UNKNOWN_ROUTE);
  const all = [...given, ...[...found].filter((path) => !given.has(path))].filter((path) => path !== unknown);
  const strip = (path: string) => (ctx.prefix && path.startsWith(ctx.prefix) ? path.slice(ctx.prefix.length) || '/' : path);
  const findings = new Map<PathFinding['id'], string[]>();
  for (const path of all) {
    for (const finding of pathFindings(strip(path))) {
      const source = given.has(path) ? 'given' : 'discovered';
      findings.set(finding.id, [...(findings.get(finding.id) ?? []), `${path} (${source}): ${finding.why}`]);
    }
  }
  for (const id of PATH_IDS) {
    if (all.length === 0) {
      ctx.skip(id, 'no path to check: give --resource or --path, or let answers link to paths');
      continue;
    }
    const bad = findings.get(id);
    ctx.verdict(
      id,
      bad
        ? {
            expected: `every path follows the rule (${all.length} checked)`,
            seen: bad.slice(0, 5).join('; ') + (bad.length > 5 ? `; and ${bad.length - 5} more` : ''),
          }
        : undefined,
    );
  }
}
