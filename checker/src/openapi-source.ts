import { readFile } from 'node:fs/promises';
import { invalidOption, isJsonObject, resolveReference } from 'express-api-conventions/extend';

/**
 * Reads an OpenAPI 3 document into what the checker cannot guess: the paths
 * to lint and to GET, a resource for the caching and CORS checks, a
 * protected operation, the token endpoint and a search to reflect a probe
 * through. Only local `$ref`s (`#/...`) are followed; a document split over
 * several files is read as far as its own file goes.
 */

const FACTORY = 'checkConventions';

type Json = Record<string, unknown>;

/** What the checker takes from an OpenAPI document; each field may be missing. */
export interface OpenApiPlan {
  /** GET paths with no path parameter (required query parameters filled from examples): requested and linted. */
  readonly paths: readonly string[];
  /** Every path of the document, templates included (`/v1/users/{id}`): linted only. */
  readonly lintPaths: readonly string[];
  /**
   * A GET path with path parameters, for the caching and CORS checks: either
   * filled from the document's examples (`path`), or to be filled from the
   * first item of `collection`'s list answer (`template` with `parameter`).
   */
  readonly resource?:
    | { readonly path: string }
    | { readonly template: string; readonly parameter: string; readonly collection: string };
  /** A GET operation whose every security requirement needs a bearer token (`/v1/me`). */
  readonly protected?: string;
  /** The token endpoint: a POST path with `oauth2/token`, or an oauth2 scheme's `tokenUrl`. */
  readonly tokenEndpoint?: string;
  /** A GET with a string query parameter `q`, with `{probe}` where the value goes. */
  readonly reflect?: string;
}

// Local `$ref`s are followed by the library's one resolver (src/openapi/document.ts).
const asObject = resolveReference;

/** Reads the text of a file or http(s) URL. */
async function readSource(source: string | URL, timeoutMs: number): Promise<string> {
  const text = String(source);
  if (/^https?:\/\//i.test(text)) {
    let answer: Response;
    try {
      answer = await fetch(text, {
        headers: { accept: 'application/json, application/yaml, text/yaml, */*' },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      return invalidOption(FACTORY, 'openapi', text, `a reachable URL (${(error as Error).message})`);
    }
    if (!answer.ok) invalidOption(FACTORY, 'openapi', text, `a URL that answers 200 (it answered ${answer.status})`);
    return answer.text();
  }
  const file = source instanceof URL ? source : text;
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    return invalidOption(FACTORY, 'openapi', text, `a readable file (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
}

/** Parses JSON, else YAML (through the `yaml` package, loaded only for a YAML document). */
async function parseDocument(text: string, source: string): Promise<unknown> {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON: YAML (a superset of JSON) below.
  }
  let yaml: { parse(text: string): unknown };
  try {
    yaml = await import('yaml');
  } catch {
    return invalidOption(FACTORY, 'openapi', source, 'a JSON document (reading YAML needs the `yaml` package: npm install yaml)');
  }
  try {
    return yaml.parse(text);
  } catch (error) {
    return invalidOption(FACTORY, 'openapi', source, `JSON or YAML (${(error as Error).message.split('\n')[0]})`);
  }
}

/** Loads an OpenAPI 3 document from a file, an http(s) URL, or a parsed object; a wrong one throws a ConfigurationError. */
export async function loadOpenApi(source: string | URL | Readonly<Json>, timeoutMs = 10_000): Promise<Json> {
  const named = typeof source === 'string' || source instanceof URL ? String(source) : '(the document given)';
  const doc =
    typeof source === 'string' || source instanceof URL
      ? await parseDocument(await readSource(source, timeoutMs), named)
      : source;
  if (!isJsonObject(doc) || typeof doc.openapi !== 'string' || !doc.openapi.startsWith('3.') || !isJsonObject(doc.paths)) {
    invalidOption(FACTORY, 'openapi', named, 'an OpenAPI 3 document (with `openapi: 3.x` and `paths`)');
  }
  return doc;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface Operation {
  readonly path: string;
  readonly method: (typeof METHODS)[number];
  readonly operation: Json;
  /** Path-level and operation-level parameters, resolved; the operation's win. */
  readonly parameters: readonly Json[];
}

function operationsOf(doc: Json): Operation[] {
  const found: Operation[] = [];
  for (const [path, rawItem] of Object.entries(doc.paths as Json)) {
    const item = asObject(doc, rawItem);
    if (!item) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of METHODS) {
      const operation = asObject(doc, item[method]);
      if (!operation) continue;
      const own = Array.isArray(operation.parameters) ? operation.parameters : [];
      const byKey = new Map<string, Json>();
      for (const raw of [...shared, ...own]) {
        const parameter = asObject(doc, raw);
        if (parameter && typeof parameter.name === 'string') byKey.set(`${parameter.in}:${parameter.name}`, parameter);
      }
      found.push({ path, method, operation, parameters: [...byKey.values()] });
    }
  }
  return found;
}

/** A parameter's example value, from `example`, `examples`, or its schema's `example`, `examples`, `default`, `enum`, `const`. */
function exampleOf(doc: Json, parameter: Json): string | undefined {
  const schema = asObject(doc, parameter.schema) ?? {};
  const examples = asObject(doc, parameter.examples);
  const firstExample = examples ? asObject(doc, Object.values(examples)[0])?.value : undefined;
  const candidates = [
    parameter.example,
    firstExample,
    schema.example,
    Array.isArray(schema.examples) ? schema.examples[0] : undefined,
    schema.default,
    schema.const,
    Array.isArray(schema.enum) ? schema.enum[0] : undefined,
  ];
  const value = candidates.find((candidate) => ['string', 'number', 'boolean'].includes(typeof candidate));
  return value === undefined ? undefined : String(value);
}

/** Whether every security requirement of the operation needs a bearer token (http bearer, oauth2 or OpenID Connect). */
function needsBearer(doc: Json, operation: Json): boolean {
  const requirements = operation.security ?? doc.security;
  if (!Array.isArray(requirements) || requirements.length === 0) return false;
  const schemes = asObject(doc, asObject(doc, doc.components)?.securitySchemes) ?? {};
  const bearer = (name: string) => {
    const scheme = asObject(doc, schemes[name]);
    if (!scheme) return false;
    if (scheme.type === 'http') return String(scheme.scheme).toLowerCase() === 'bearer';
    return scheme.type === 'oauth2' || scheme.type === 'openIdConnect';
  };
  // Protected (no anonymous alternative), and a bearer token is one of the ways in (DPoP may be another).
  if (requirements.some((requirement) => isJsonObject(requirement) && Object.keys(requirement).length === 0)) return false;
  return requirements.some((requirement) => isJsonObject(requirement) && Object.keys(requirement).some(bearer));
}

/** Whether the operation can be called anonymously: no security, or one requirement that is `{}`. */
function isAnonymous(doc: Json, operation: Json): boolean {
  const requirements = operation.security ?? doc.security;
  if (!Array.isArray(requirements) || requirements.length === 0) return true;
  return requirements.some((requirement) => isJsonObject(requirement) && Object.keys(requirement).length === 0);
}

const pathParameters = (path: string): string[] => [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string);

/** The path with each `{name}` replaced by its example, or undefined when one has none. */
function filled(doc: Json, op: Operation, fallback?: (name: string, parameter: Json | undefined) => string | undefined) {
  let path = op.path;
  for (const name of pathParameters(op.path)) {
    const parameter = op.parameters.find((p) => p.in === 'path' && p.name === name);
    const value = (parameter && exampleOf(doc, parameter)) ?? fallback?.(name, parameter);
    if (value === undefined) return undefined;
    path = path.replace(`{${name}}`, encodeURIComponent(value));
  }
  return path;
}

/** The query string of the required query parameters, filled from examples; undefined when one has none. */
function requiredQuery(doc: Json, op: Operation, skip?: string): string | undefined {
  const pairs: string[] = [];
  for (const parameter of op.parameters) {
    if (parameter.in !== 'query' || parameter.required !== true || parameter.name === skip) continue;
    const value = exampleOf(doc, parameter);
    if (value === undefined) return undefined;
    pairs.push(`${encodeURIComponent(String(parameter.name))}=${encodeURIComponent(value)}`);
  }
  return pairs.join('&');
}

const withQuery = (path: string, query: string) => (query === '' ? path : `${path}?${query}`);

/** A path of `base`'s origin from a URL the document gives (`tokenUrl`), or undefined when it is elsewhere. */
function sameOriginPath(url: string, base: URL): string | undefined {
  if (url.startsWith('/')) return url;
  try {
    const parsed = new URL(url, base);
    return parsed.origin === base.origin ? `${parsed.pathname}${parsed.search}` : undefined;
  } catch {
    return undefined;
  }
}

/** What the checker takes from the document; `base` is the checked API's base URL (for absolute `tokenUrl`s). */
export function planFromOpenApi(doc: Json, base: URL): OpenApiPlan {
  const operations = operationsOf(doc);
  const gets = operations.filter((op) => op.method === 'get');
  const resource = resourceOf(doc, gets);
  const protectedPath = protectedPathOf(doc, gets);
  const tokenEndpoint = tokenEndpointOf(doc, operations, base);
  const reflect = reflectOf(doc, gets);
  return {
    paths: plainGetPaths(doc, gets),
    lintPaths: Object.keys(doc.paths as Json),
    ...(resource ? { resource } : {}),
    ...(protectedPath ? { protected: protectedPath } : {}),
    ...(tokenEndpoint ? { tokenEndpoint } : {}),
    ...(reflect ? { reflect } : {}),
  };
}

/** The GETs without path parameters, their required query parameters filled from examples. */
function plainGetPaths(doc: Json, gets: readonly Operation[]): string[] {
  const paths: string[] = [];
  for (const op of gets) {
    if (pathParameters(op.path).length > 0) continue;
    const query = requiredQuery(doc, op);
    if (query !== undefined) paths.push(withQuery(op.path, query));
  }
  return paths;
}

/** A resource: an anonymous GET with path parameters, preferring one that declares an ETag. */
function resourceOf(doc: Json, gets: readonly Operation[]): OpenApiPlan['resource'] {
  const declaresEtag = (op: Operation) => {
    const ok = asObject(doc, asObject(doc, op.operation.responses)?.['200']);
    const headers = asObject(doc, ok?.headers) ?? {};
    return Object.keys(headers).some((name) => name.toLowerCase() === 'etag');
  };
  const templates = gets
    .filter((op) => pathParameters(op.path).length > 0 && isAnonymous(doc, op.operation))
    .sort((a, b) => Number(declaresEtag(b)) - Number(declaresEtag(a)) || a.path.length - b.path.length);
  for (const op of templates) {
    const path = filled(doc, op);
    if (path !== undefined) return { path };
    const names = pathParameters(op.path);
    const last = names[names.length - 1] as string;
    const collection = op.path.slice(0, op.path.lastIndexOf('/'));
    if (names.length === 1 && op.path.endsWith(`/{${last}}`) && gets.some((get) => get.path === collection))
      return { template: op.path, parameter: last, collection };
  }
  return undefined;
}

/** A protected GET: bearer needed, preferring one without path parameters (no example to find). */
function protectedPathOf(doc: Json, gets: readonly Operation[]): string | undefined {
  const bearerGets = gets
    .filter((op) => needsBearer(doc, op.operation))
    .sort((a, b) => pathParameters(a.path).length - pathParameters(b.path).length);
  for (const op of bearerGets) {
    // The token is refused before the route looks at the id: any well-formed value does.
    const path = filled(doc, op, (_name, parameter) => {
      const schema = parameter ? asObject(doc, parameter.schema) : undefined;
      if (schema?.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
      return schema?.type === 'integer' || schema?.type === 'number' ? '1' : 'express-api-conventions-probe';
    });
    if (path !== undefined) return path;
  }
  return undefined;
}

/** The token endpoint: a POST ending in `oauth2/token`, else the first same-origin `tokenUrl` of an oauth2 scheme. */
function tokenEndpointOf(doc: Json, operations: readonly Operation[], base: URL): string | undefined {
  const posted = operations.find((op) => op.method === 'post' && /oauth2?\/token$/.test(op.path))?.path;
  if (posted !== undefined) return posted;
  let tokenEndpoint: string | undefined;
  const schemes = asObject(doc, asObject(doc, doc.components)?.securitySchemes) ?? {};
  for (const raw of Object.values(schemes)) {
    const scheme = asObject(doc, raw);
    if (scheme?.type !== 'oauth2') continue;
    for (const flow of Object.values(asObject(doc, scheme.flows) ?? {})) {
      const url = asObject(doc, flow)?.tokenUrl;
      if (typeof url === 'string') tokenEndpoint ??= sameOriginPath(url, base);
    }
  }
  return tokenEndpoint;
}

/** A search to reflect a probe through: an anonymous GET with a string `q`, its other required parameters filled. */
function reflectOf(doc: Json, gets: readonly Operation[]): string | undefined {
  for (const op of gets) {
    if (pathParameters(op.path).length > 0 || !isAnonymous(doc, op.operation)) continue;
    const q = op.parameters.find((p) => p.in === 'query' && p.name === 'q');
    if (!q) continue;
    const type = asObject(doc, q.schema)?.type;
    if (type !== undefined && type !== 'string') continue;
    const rest = requiredQuery(doc, op, 'q');
    if (rest === undefined) continue;
    return `${op.path}?q={probe}${rest === '' ? '' : `&${rest}`}`;
  }
  return undefined;
}

/** One operation of the document, as the service's answers are read against it. */
export interface DocumentedOperation {
  readonly path: string;
  readonly method: string;
  /** The header names (lower case) declared for a status (`404`, then `4XX`, then `default`), or undefined when not listed. */
  responseHeaders(status: number): ReadonlySet<string> | undefined;
}

const templatePattern = (template: string): RegExp =>
  new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);

/**
 * The operation of the document that answers `method` on `path`: the path's
 * own operation, or GET for a HEAD the document does not list. A method the
 * path lacks (the 405 probe's TRACE) has none: it is not read.
 */
export function documentedOperation(doc: Json, method: string, path: string): DocumentedOperation | undefined {
  const paths = asObject(doc, doc.paths) ?? {};
  const template = path in paths ? path : Object.keys(paths).find((candidate) => templatePattern(candidate).test(path));
  if (template === undefined) return undefined;
  const item = asObject(doc, paths[template]) ?? {};
  const wanted = method.toLowerCase();
  const key = [wanted, ...(wanted === 'head' ? ['get'] : [])].find((name) => asObject(doc, item[name]));
  const operation = key === undefined ? undefined : asObject(doc, item[key]);
  if (!operation || key === undefined) return undefined;
  const responses = asObject(doc, operation.responses) ?? {};
  return {
    path: template,
    method: key,
    responseHeaders(status) {
      const listed = [String(status), `${String(status)[0]}XX`, 'default'].find((name) => name in responses);
      if (listed === undefined) return undefined;
      const headers = asObject(doc, asObject(doc, responses[listed])?.headers) ?? {};
      return new Set(Object.keys(headers).map((name) => name.toLowerCase()));
    },
  };
}
