import { inconsistentMessage, inconsistentNames } from 'express-api-conventions/extend';
import { checkPath, type PathExceptions, type PathRule } from 'express-api-conventions/lint';
import { parseJson, type RunContext } from './context.js';
import { MISSING_ID, UNKNOWN_ROUTE } from './errors-checks.js';

/**
 * The check id of each path rule. The rules themselves are the route
 * linter's (lint/path-rules.ts): a path gets the same verdict from
 * checkRoutes() and from the checker.
 */
export const PATH_CHECK_IDS = {
  version: 'paths.version-first',
  shape: 'paths.shape',
  lowerCase: 'paths.lowercase',
  plural: 'paths.plural-nouns',
  noVerb: 'paths.no-verbs',
  noPercentEncoding: 'paths.no-percent-encoding',
  hyphen: 'paths.hyphens',
  search: 'paths.search-segment',
  noList: 'paths.no-list',
  noTechnology: 'paths.no-extensions',
  consistent: 'paths.consistent',
} as const satisfies Record<PathRule, string>;

type PathCheckId = (typeof PATH_CHECK_IDS)[PathRule];

/** One path-rule finding: the check it fails and why. */
export interface PathFinding {
  readonly id: PathCheckId;
  readonly why: string;
}

/**
 * the conventions' path rules applied to one path (the part after the base URL's
 * own path), by lint/path-rules.ts's checkPath() with its default
 * exceptions (the conventions' own `/v1/oauth2/token`). `--ignore` turns a check off.
 */
export function pathFindings(path: string, exceptions: PathExceptions = {}): PathFinding[] {
  return checkPath(path, exceptions).findings.map((finding) => ({ id: PATH_CHECK_IDS[finding.rule], why: finding.message }));
}

/** Path rule 9 over every path checked: the paths that name a resource singular where another names it plural. */
export function consistencyFindings(paths: readonly string[], exceptions: PathExceptions = {}): Map<string, PathFinding[]> {
  const collections = new Map(paths.map((path) => [path, checkPath(path, exceptions).collections] as const));
  const twins = inconsistentNames([...collections.values()].flat(), exceptions);
  const found = new Map<string, PathFinding[]>();
  for (const [path, names] of collections) {
    for (const name of names) {
      const plural = twins.get(name);
      if (plural === undefined) continue;
      found.set(path, [...(found.get(path) ?? []), { id: PATH_CHECK_IDS.consistent, why: inconsistentMessage(name, plural) }]);
    }
  }
  return found;
}

const PATH_IDS: readonly PathCheckId[] = Object.values(PATH_CHECK_IDS);

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
 * the conventions' "Path rules" on the paths named by options and on those found in
 * `Location` headers and in JSON bodies of the answers seen.
 */
export function checkPaths(ctx: RunContext, origin: string): void {
  const given = new Set<string>();
  const { resource, paths, tokenEndpoint, reflect } = ctx.config;
  for (const path of [
    resource,
    ...paths,
    ctx.config.protected,
    tokenEndpoint,
    reflect,
    ctx.config.forbidden,
    ctx.config.disposable,
  ]) {
    if (path !== undefined) given.add(ctx.under(path).split('?')[0] as string);
  }
  // An OpenAPI document's paths (explore.ts), templates included: linted, never requested.
  for (const path of ctx.config.lintPaths) given.add(ctx.under(path));
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
  const strip = (path: string) => (ctx.prefix && path.startsWith(ctx.prefix) ? path.slice(ctx.prefix.length) || '/' : path);
  // A link to the API's root (an RFC 8414 `issuer`, a `Link: </>`) names the entry point, not a resource.
  const discovered = [...found].filter((path) => !given.has(path) && strip(path) !== '/');
  // The checker's own probe paths (an unknown route, a missing id) are its words, not the API's: never linted.
  const all = [...given, ...discovered].filter((path) => path !== unknown && !path.split('/').includes(MISSING_ID));
  const findings = new Map<PathFinding['id'], string[]>();
  const across = consistencyFindings(all.map(strip), ctx.config.pathExceptions);
  for (const path of all) {
    for (const finding of [...pathFindings(strip(path), ctx.config.pathExceptions), ...(across.get(strip(path)) ?? [])]) {
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
