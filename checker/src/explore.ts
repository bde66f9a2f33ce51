import { loadOpenApi, planFromOpenApi } from './openapi-source.js';
import type { ConformanceConfiguration } from './options.js';
import { BudgetExhausted, type Exchange, type Probe } from './probe.js';

/**
 * Before the checks run, the checker finds what it was not told: from an
 * OpenAPI document when one is given (`openapi`), and by following what the
 * API itself links (`Link` headers, `Location` of a 201, 202 or 3xx, the ids
 * of a list's items) when no option names a resource. Options given always
 * win over what is found. Every request counts against the budget.
 */

/** Requests exploring may send at most (and never more than a quarter of the budget). */
export const EXPLORE_LIMIT = 8;

type Discovered = ConformanceConfiguration['discovered'] extends ReadonlySet<infer K> ? K : never;

export interface Explored {
  /** The options with what was found filled in. */
  readonly config: ConformanceConfiguration;
  /** Paths (as sent) already requested with GET: the checks do not request them again. */
  readonly fetched: ReadonlySet<string>;
}

/** A path under the base URL's own path, as RunContext.under() makes it: `/v1/users` → `/api/v1/users`. */
export function underPrefix(prefix: string, path: string): string {
  if (/^https?:\/\//.test(path)) {
    const url = new URL(path);
    return `${url.pathname}${url.search}`;
  }
  return `${prefix}${path}`;
}

const IDENTIFIER_FIELDS = (parameter: string) => [`${parameter}_str`, parameter, 'id_str', 'id'];

/**
 * The id of the first item of a list answer (`{ "users": [{ "id": ... }] }`,
 * or a top-level array): the `_str` twin first, since a 64-bit id written as
 * a JSON number loses digits in JavaScript.
 */
export function firstItemId(body: string, parameter = 'id'): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const lists = Array.isArray(parsed)
    ? [parsed]
    : typeof parsed === 'object' && parsed !== null
      ? Object.values(parsed).filter(Array.isArray)
      : [];
  for (const list of lists) {
    const item = (list as unknown[])[0];
    if (typeof item !== 'object' || item === null) continue;
    for (const field of IDENTIFIER_FIELDS(parameter)) {
      const value = (item as Record<string, unknown>)[field];
      if (typeof value === 'string' && value !== '') return value;
      if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
      if (typeof value === 'number') {
        // Beyond 2^53 the parsed number is rounded: read the digits as the body writes them.
        const digits = new RegExp(`"${field}"\\s*:\\s*(-?\\d+)`).exec(body)?.[1];
        if (digits) return digits;
      }
    }
  }
  return undefined;
}

/** The targets of a `Link` header (RFC 8288), with their `rel`. */
export function linkTargets(header: string | undefined): { target: string; rel: string }[] {
  if (!header) return [];
  const found: { target: string; rel: string }[] = [];
  for (const match of header.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const rel = /;\s*rel\s*=\s*"?([^";,]+)"?/i.exec(match[2] ?? '')?.[1] ?? '';
    found.push({ target: match[1] as string, rel: rel.toLowerCase() });
  }
  return found;
}

/** Paths of the API itself that an answer links to: `Link`, `Location` of 201/202/3xx, and path strings in its JSON. */
export function linksOf(exchange: Exchange, base: URL, prefix: string): string[] {
  const found: string[] = [];
  const add = (target: string) => {
    try {
      const url = new URL(target, new URL(exchange.path, base));
      if (url.origin === base.origin && url.pathname.startsWith(`${prefix}/`)) found.push(`${url.pathname}${url.search}`);
    } catch {
      // Not a URL: nothing to follow.
    }
  };
  // rel=next first: the next page of a list that had no item on this one.
  const links = linkTargets(exchange.headers.link).sort((a, b) => Number(b.rel === 'next') - Number(a.rel === 'next'));
  for (const link of links) add(link.target);
  const location = exchange.headers.location;
  if (location && (exchange.status === 201 || exchange.status === 202 || (exchange.status >= 300 && exchange.status < 400)))
    add(location);
  const walk = (value: unknown, depth: number): void => {
    if (depth > 4 || found.length > 20) return;
    if (typeof value === 'string') {
      if (value.startsWith(`${base.origin}/`) || (value.startsWith(`${prefix}/`) && /^\/[a-z0-9]/i.test(value))) add(value);
    } else if (Array.isArray(value)) for (const item of value.slice(0, 20)) walk(item, depth + 1);
    else if (typeof value === 'object' && value !== null)
      for (const item of Object.values(value).slice(0, 50)) walk(item, depth + 1);
  };
  try {
    walk(JSON.parse(exchange.body), 0);
  } catch {
    // Not JSON.
  }
  return found;
}

/**
 * Requests the run means to send once exploring is over: the checks'
 * requests for the options it has, capped by the budget. The progress line
 * counts against it.
 */
export function plannedRequests(
  config: ConformanceConfiguration,
  alreadySent: number,
  isFetched: (path: string) => boolean,
): number {
  const { credentials } = config;
  let planned = alreadySent;
  planned += 1; // the unknown route (errors.not-found.*)
  if (config.resource !== undefined || config.paths.length > 0) planned += 1; // TRACE (errors.method-not-allowed.*)
  planned += config.paths.filter((path) => !isFetched(path)).length;
  if (config.resource !== undefined) planned += 3; // GET, If-None-Match, If-Modified-Since
  if (config.origin !== undefined) planned += 3; // preflight, actual request, look-alike origin
  if (config.resource !== undefined) planned += 2; // HEAD, and a missing id beside it (errors.not-found.distinct)
  planned += config.probeLimit ?? 0; // at most: the rate-limit probe stops at the first 429
  // On the first list a --path answers: limit=1, three malformed paging values, one field, an unknown field.
  if (config.paths.length > 0) planned += 6;
  if (config.tokenEndpoint !== undefined && config.allowWrites) {
    planned += 1; // the refused grant
    const user = credentials.username !== undefined && credentials.password !== undefined;
    const client = credentials.clientId !== undefined && credentials.clientSecret !== undefined;
    if (user) planned += 2; // password, refresh
    if (user && client) planned += 2; // without client credentials, and with them in the body
    const limited = credentials.limitedUsername !== undefined || config.limitedScope !== undefined;
    if (config.forbidden !== undefined && (user || credentials.limitedUsername !== undefined) && limited) planned += 2;
  }
  if (config.protected !== undefined) planned += 2; // without a credential, with an invalid token
  if (config.reflect !== undefined) planned += 1;
  // GET, PATCH, the conditional GET after it, override on GET, by header, by form field.
  if (config.disposable !== undefined && config.change !== undefined && config.allowWrites) planned += 6;
  return Math.min(planned, config.maxRequests);
}

/** What each way of exploring works with: where the API is, its own budget of GETs, and what it has found. */
interface Exploring {
  readonly probe: Probe;
  readonly base: URL;
  readonly prefix: string;
  readonly under: (path: string) => string;
  /** A GET of the API, or undefined once exploring's share of the budget (or the budget) is spent. */
  readonly send: (path: string) => Promise<Exchange | undefined>;
  readonly fetched: Set<string>;
  readonly discovered: Set<Discovered>;
}

/** Told the options as they are expected to end, and the paths exploring still means to GET first. */
type Replan = (expected: ConformanceConfiguration, pending: readonly string[]) => void;

/** Finds what the options leave out (see the module comment); returns the completed options. */
export async function explore(
  probe: Probe,
  given: ConformanceConfiguration,
  base: URL,
  prefix: string,
  under: (path: string) => string,
  replan?: Replan,
): Promise<Explored> {
  const fetched = new Set<string>();
  const limit = Math.min(EXPLORE_LIMIT, Math.floor(given.maxRequests / 4));
  let spent = 0;
  const send = async (path: string): Promise<Exchange | undefined> => {
    if (spent >= limit) return undefined;
    spent += 1;
    try {
      const exchange = await probe.send({ purpose: 'explore', method: 'GET', path });
      fetched.add(path);
      return exchange;
    } catch (error) {
      if (error instanceof BudgetExhausted) return undefined;
      throw error;
    }
  };
  const run: Exploring = { probe, base, prefix, under, send, fetched, discovered: new Set(given.discovered) };
  let config = await fromOpenApi(run, given, replan);
  if (config.explore && config.resource === undefined) config = await followLinks(run, config);
  return { config, fetched };
}

/** The options with what was found filled in, each found one counted as discovered. */
function withFound(
  run: Exploring,
  config: ConformanceConfiguration,
  found: Partial<Record<Discovered, string>>,
): ConformanceConfiguration {
  for (const key of Object.keys(found) as Discovered[]) run.discovered.add(key);
  return { ...config, ...found, discovered: run.discovered };
}

/**
 * The options completed from the OpenAPI document, when one is given; a
 * resource the document names only as a template is looked up in its collection.
 */
async function fromOpenApi(run: Exploring, given: ConformanceConfiguration, replan?: Replan): Promise<ConformanceConfiguration> {
  if (given.openapi === undefined) return given;
  const plan = planFromOpenApi(await loadOpenApi(given.openapi, given.timeoutMs), run.base);
  const found: Partial<Record<Discovered, string>> = {};
  for (const key of ['protected', 'tokenEndpoint', 'reflect'] as const) {
    if (given[key] === undefined && plan[key] !== undefined) found[key] = plan[key];
  }
  const merged = {
    paths: [...new Set([...given.paths, ...plan.paths])],
    lintPaths: [...given.lintPaths, ...plan.lintPaths],
  };
  if (given.resource === undefined && plan.resource) {
    if ('path' in plan.resource) found.resource = plan.resource.path;
    else {
      const { collection, template, parameter } = plan.resource;
      // The plan as it will be once the collection names the resource, for the progress line.
      replan?.({ ...given, ...found, ...merged, resource: template }, [run.under(collection)]);
      const list = await run.send(run.under(collection));
      const id = list?.status === 200 ? firstItemId(list.body, parameter) : undefined;
      if (id !== undefined) found.resource = template.replace(`{${parameter}}`, encodeURIComponent(id));
    }
  }
  return withFound(run, { ...given, ...merged }, found);
}

/**
 * From the paths given (or the base URL itself), breadth first, until a list item names a resource
 * and a 401 with `WWW-Authenticate: Bearer` names a protected path (or the links or the exploring budget run out).
 */
async function followLinks(run: Exploring, config: ConformanceConfiguration): Promise<ConformanceConfiguration> {
  const { base, prefix } = run;
  const queue = config.paths.length > 0 ? config.paths.map(run.under) : [run.under('/')];
  const seen = new Set(queue);
  let resource: string | undefined;
  let protectedPath: string | undefined;
  const wanted = () => resource === undefined || (config.protected === undefined && protectedPath === undefined);
  while (queue.length > 0 && wanted()) {
    const path = queue.shift() as string;
    const answer = run.fetched.has(path) ? run.probe.exchanges.find((e) => e.path === path) : await run.send(path);
    if (!answer) break;
    if (
      answer.status === 401 &&
      /^\s*bearer\b/i.test(answer.headers['www-authenticate'] ?? '') &&
      config.protected === undefined
    ) {
      protectedPath ??= path;
    }
    if (answer.status === 200 && resource === undefined) {
      const id = firstItemId(answer.body);
      const collection = (path.split('?')[0] as string).replace(/\/+$/, '');
      if (id !== undefined && collection.startsWith(`${prefix}/`)) {
        resource = `${base.origin}${collection}/${encodeURIComponent(id)}`;
        // A list's next page or items add nothing once there is a resource.
        continue;
      }
    }
    for (const link of linksOf(answer, base, prefix)) {
      if (!seen.has(link)) {
        seen.add(link);
        queue.push(link);
      }
    }
  }
  const found: Partial<Record<Discovered, string>> = {};
  if (resource !== undefined) found.resource = resource;
  if (protectedPath !== undefined) found.protected = `${base.origin}${protectedPath}`;
  return withFound(run, config, found);
}
