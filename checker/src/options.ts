import {
  checkBoolean,
  checkFunction,
  checkInteger,
  checkString,
  invalidOption,
  PATH_RULES,
  readOptions,
} from 'express-api-conventions/extend';
import type { PathExceptions, PathRule } from 'express-api-conventions/lint';
import type { Severity } from './causes.js';
import { type ConformanceBaseline, readBaseline, readFailOn, readIgnore } from './gate.js';
import { CONFORMANCE_DEFAULT_REQUESTS, CONFORMANCE_REQUEST_CAP } from './probe.js';

/** Credentials for the token-endpoint checks. The CLI reads them from `EAC_*` environment variables. */
export interface ConformanceCredentials {
  /** Registered application id, sent as `Authorization: Basic` with the secret. Default: none (no client authentication). */
  clientId?: string;
  /** Registered application secret. Default: none. */
  clientSecret?: string;
  /** A user's name for the password grant. Default: none (the token checks are skipped). */
  username?: string;
  /** That user's password. Default: none (the token checks are skipped). */
  password?: string;
  /**
   * A second user, without the right to use `forbidden`: its token must get
   * 403 there. Default: none (the `username` user, with `limitedScope`).
   */
  limitedUsername?: string;
  /** That second user's password. Default: none. */
  limitedPassword?: string;
}

/** What a check may write: a resource the run may change (and a client delete), and how to change it. */
export type ConformanceChange = Readonly<Record<string, string | number | boolean>>;

/** The phase of a run: following the API's links to find paths, then checking. */
export type ConformancePhase = 'exploring' | 'checking';

/** Options of checkConventions(): what the checker cannot guess about the API. */
export interface ConformanceOptions {
  /**
   * An origin the API allows cross-origin (`http://localhost:5173`): turns on
   * the CORS checks. Default: none (CORS checks skipped).
   */
  origin?: string;
  /**
   * A path (or same-origin URL) of one existing resource that supports
   * conditional GET, e.g. `/v1/users/1`: turns on the caching checks and is
   * the path of the 405 and CORS probes. Default: none.
   */
  resource?: string;
  /** More paths to GET and to check against the path rules. Default: `[]`. */
  paths?: readonly string[];
  /** A path that needs a bearer token: turns on the `invalid_token` checks. Default: none. */
  protected?: string;
  /** The token endpoint path, e.g. `/v1/oauth2/token`. Its checks need `allowWrites` and credentials. Default: none. */
  tokenEndpoint?: string;
  /**
   * A GET path that writes a request value back into its JSON body, with
   * `{probe}` where the value goes (`/v1/users/search?q={probe}`); without
   * `{probe}` the value is added as the `q` parameter. Default: none.
   */
  reflect?: string;
  /** Token-endpoint credentials. Default: none. */
  credentials?: Readonly<ConformanceCredentials>;
  /**
   * A GET path that a valid token without the right to act is refused with
   * 403 (`/v1/exports/1` for a token without the `exports` scope): turns on
   * the 403 check, with a token from `limitedScope` or the limited user.
   * Default: none.
   */
  forbidden?: string;
  /**
   * The scope asked for in the password grant of the limited token, a scope
   * that does not give the right to use `forbidden` (`users:write`).
   * Default: none (the limited user's token, asked without `scope`).
   */
  limitedScope?: string;
  /**
   * An existing resource the run may change, and which a faulty method
   * override could delete (`/v1/users/42`): turns on the conditional-change
   * and method-override checks. Needs `allowWrites` and `change`. Default: none.
   */
  disposable?: string;
  /**
   * The fields a PATCH of `disposable` sets, e.g. `{ name: 'Conformance probe' }`:
   * sent as JSON, and as form fields beside `_method`. Default: none.
   */
  change?: ConformanceChange;
  /**
   * Allow requests that may change state: POST to the token endpoint, and
   * PATCH and POST (method override) to `disposable`.
   * Default: `false`: only GET, HEAD, OPTIONS and TRACE are sent.
   */
  allowWrites?: boolean;
  /** Most requests to send, 1 to 200 (the hard cap). Default: `60`. */
  maxRequests?: number;
  /**
   * Opt-in rate-limit probe: up to this many GETs of `resource` (or the first
   * of `paths`) until one answers 429, whose `Retry-After` is then checked; a
   * 5xx on the way fails `limits.retry-after` (a 429 another layer made a 500
   * of). Counts against `maxRequests`. Default: none sent.
   */
  probeLimit?: number;
  /** Milliseconds to wait for each answer, 100 to 120000. Default: `10000`. */
  timeoutMs?: number;
  /** Method named in the CORS preflight's `Access-Control-Request-Method`. Default: `'GET'`. */
  preflightMethod?: string;
  /** Headers named in the CORS preflight's `Access-Control-Request-Headers`. Default: `['Authorization']`. */
  preflightHeaders?: readonly string[];
  /**
   * Check ids or patterns (`*` for any characters: `security.*`) whose
   * failures do not count. They still run, and an ignored failure is listed
   * in the report (`report.ignored`). Each must name at least one check.
   * Default: `[]`.
   */
  ignore?: readonly string[];
  /**
   * The least severity whose failure fails the run (`report.ok`): `'must'`,
   * `'should'` (must and should) or `'advice'` (any). Default: `'must'`.
   */
  failOn?: Severity;
  /**
   * Accepted findings (the content of a `--baseline` file, see
   * readBaseline()): a failing check listed there, and not past its
   * `expires` date, is reported as accepted and does not count. Default: none.
   */
  baseline?: ConformanceBaseline;
  /**
   * Called before each request: the count so far, the planned count (what
   * the run means to send, never more than `maxRequests`), `METHOD path`,
   * and the phase. While `'exploring'` (following links when no option
   * names a path) the planned count is an estimate; once `'checking'` it is
   * fixed, and grows only if the run sends more than it planned. Default: none.
   */
  onProgress?: (sent: number, planned: number, request: string, phase: ConformancePhase) => void;
  /**
   * An OpenAPI 3 document to take the missing options from: a file path, an
   * http(s) URL (JSON or YAML), or the parsed document. The options given
   * win over what the document says. Default: none.
   */
  openapi?: string | URL | Readonly<Record<string, unknown>>;
  /**
   * Follow what the API links (`Link` headers, `Location`, list items' ids)
   * to find a resource and paths when no option names one. Default: `true`.
   */
  explore?: boolean;
  /**
   * Segments allowed to break one path rule, as checkRoutes()'s `exceptions`:
   * `{ plural: ['health'] }` accepts `/v1/health`. Default: `{}` (the conventions' own
   * `oauth2` is always accepted).
   */
  pathExceptions?: PathExceptions;
}

const OPTION_NAMES = [
  'origin',
  'resource',
  'paths',
  'protected',
  'tokenEndpoint',
  'reflect',
  'credentials',
  'forbidden',
  'limitedScope',
  'disposable',
  'change',
  'allowWrites',
  'maxRequests',
  'probeLimit',
  'timeoutMs',
  'preflightMethod',
  'preflightHeaders',
  'ignore',
  'failOn',
  'baseline',
  'onProgress',
  'openapi',
  'explore',
  'pathExceptions',
] as const;

const FACTORY = 'checkConventions';

/** The checked options, with defaults applied. */
export interface ConformanceConfiguration {
  readonly origin: string | undefined;
  readonly resource: string | undefined;
  readonly paths: readonly string[];
  readonly protected: string | undefined;
  readonly tokenEndpoint: string | undefined;
  readonly reflect: string | undefined;
  readonly credentials: Readonly<ConformanceCredentials>;
  readonly forbidden: string | undefined;
  readonly limitedScope: string | undefined;
  readonly disposable: string | undefined;
  readonly change: ConformanceChange | undefined;
  readonly allowWrites: boolean;
  readonly maxRequests: number;
  readonly probeLimit: number | undefined;
  readonly timeoutMs: number;
  readonly preflightMethod: string;
  readonly preflightHeaders: readonly string[];
  readonly ignore: readonly string[];
  readonly failOn: Severity;
  readonly baseline: ConformanceBaseline | undefined;
  readonly onProgress: ConformanceOptions['onProgress'];
  // Exploring (explore.ts, openapi-source.ts).
  readonly openapi: string | URL | Readonly<Record<string, unknown>> | undefined;
  readonly explore: boolean;
  readonly pathExceptions: PathExceptions;
  /** Paths only linted, never requested (an OpenAPI document's templates and non-GET paths). */
  readonly lintPaths: readonly string[];
  /** The options the checker found itself (in an OpenAPI document or by following links) rather than was given. */
  readonly discovered: ReadonlySet<'resource' | 'protected' | 'tokenEndpoint' | 'reflect'>;
}

function checkPathExceptions(value: unknown): PathExceptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    invalidOption(FACTORY, 'pathExceptions', value, "an object of rule names to segment lists, such as { plural: ['health'] }");
  const result: Partial<Record<PathRule, readonly string[]>> = {};
  for (const [rule, segments] of Object.entries(value)) {
    if (!Object.hasOwn(PATH_RULES, rule))
      invalidOption(FACTORY, 'pathExceptions', rule, `keyed by rule names (${Object.keys(PATH_RULES).join(', ')})`);
    result[rule as PathRule] = checkStringList(`pathExceptions.${rule}`, segments);
  }
  return result;
}

function checkOpenApi(value: unknown): ConformanceConfiguration['openapi'] {
  if (value instanceof URL || (typeof value === 'object' && value !== null && !Array.isArray(value)))
    return value as ConformanceConfiguration['openapi'];
  return checkString(FACTORY, 'openapi', value);
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const checkPath = (name: string, value: unknown): string => {
  const text = checkString(FACTORY, name, value);
  if (!text.startsWith('/') && !/^https?:\/\//.test(text))
    invalidOption(FACTORY, name, value, 'a path starting with "/" or an http(s) URL');
  return text;
};

const checkStringList = (name: string, value: unknown): string[] => {
  if (!Array.isArray(value)) invalidOption(FACTORY, name, value, 'an array of strings');
  return value.map((item, index) => checkString(FACTORY, `${name}[${index}]`, item));
};

const optionalPath = (name: string, value: unknown): string | undefined =>
  value === undefined ? undefined : checkPath(name, value);

function checkOrigin(value: unknown): string {
  const text = checkString(FACTORY, 'origin', value);
  let parsed: URL | undefined;
  try {
    parsed = new URL(text);
  } catch {
    parsed = undefined;
  }
  if (!parsed || parsed.origin !== text) invalidOption(FACTORY, 'origin', text, 'an origin: scheme://host[:port], no path');
  return text;
}

/** The credentials, each a non-empty string; the application's id and secret go together, and so do the limited user's. */
function checkCredentials(value: unknown): ConformanceCredentials {
  const names = ['clientId', 'clientSecret', 'username', 'password', 'limitedUsername', 'limitedPassword'] as const;
  const raw = readOptions<ConformanceCredentials>(`${FACTORY} credentials`, value, names);
  const credentials: ConformanceCredentials = {};
  for (const key of names) {
    if (raw[key] !== undefined) credentials[key] = checkString(FACTORY, `credentials.${key}`, raw[key]);
  }
  if ((credentials.clientId === undefined) !== (credentials.clientSecret === undefined)) {
    invalidOption(FACTORY, 'credentials', '(redacted)', 'clientId and clientSecret together, or neither');
  }
  if ((credentials.limitedUsername === undefined) !== (credentials.limitedPassword === undefined)) {
    invalidOption(FACTORY, 'credentials', '(redacted)', 'limitedUsername and limitedPassword together, or neither');
  }
  return credentials;
}

function checkChange(value: unknown): ConformanceChange {
  const flat =
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length > 0 &&
    Object.values(value).every((item) => ['string', 'number', 'boolean'].includes(typeof item));
  if (!flat) invalidOption(FACTORY, 'change', value, 'an object of field names and string, number or boolean values');
  return { ...(value as ConformanceChange) };
}

function checkScope(value: unknown): string {
  const scope = checkString(FACTORY, 'limitedScope', value);
  if (!/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/.test(scope))
    invalidOption(FACTORY, 'limitedScope', scope, 'an RFC 6749 scope: tokens separated by single spaces');
  return scope;
}

/** The method and headers the CORS preflight asks for, each an HTTP token. */
function checkPreflight(given: Partial<ConformanceOptions>): { method: string; headers: readonly string[] } {
  const method = given.preflightMethod === undefined ? 'GET' : checkString(FACTORY, 'preflightMethod', given.preflightMethod);
  if (!TOKEN.test(method)) invalidOption(FACTORY, 'preflightMethod', method, 'an HTTP method name');
  const headers =
    given.preflightHeaders === undefined ? ['Authorization'] : checkStringList('preflightHeaders', given.preflightHeaders);
  for (const name of headers) {
    if (!TOKEN.test(name)) invalidOption(FACTORY, 'preflightHeaders', name, 'header names');
  }
  return { method: method.toUpperCase(), headers };
}

/** Checks every option, one after another (the first wrong one throws), and applies the defaults. */
export function readConformanceOptions(options: unknown): ConformanceConfiguration {
  const given = readOptions<ConformanceOptions>(FACTORY, options, OPTION_NAMES);
  const origin = given.origin === undefined ? undefined : checkOrigin(given.origin);
  const credentials = given.credentials === undefined ? {} : checkCredentials(given.credentials);
  const change = given.change === undefined ? undefined : checkChange(given.change);
  const limitedScope = given.limitedScope === undefined ? undefined : checkScope(given.limitedScope);
  const disposable = optionalPath('disposable', given.disposable);
  if (disposable !== undefined && change === undefined)
    invalidOption(FACTORY, 'change', undefined, 'the fields a PATCH of `disposable` sets (`disposable` is given)');
  const preflight = checkPreflight(given);
  return {
    origin,
    resource: optionalPath('resource', given.resource),
    paths:
      given.paths === undefined ? [] : checkStringList('paths', given.paths).map((path, i) => checkPath(`paths[${i}]`, path)),
    protected: optionalPath('protected', given.protected),
    tokenEndpoint: optionalPath('tokenEndpoint', given.tokenEndpoint),
    reflect: optionalPath('reflect', given.reflect),
    credentials,
    forbidden: optionalPath('forbidden', given.forbidden),
    limitedScope,
    disposable,
    change,
    allowWrites: given.allowWrites === undefined ? false : checkBoolean(FACTORY, 'allowWrites', given.allowWrites),
    maxRequests:
      given.maxRequests === undefined
        ? CONFORMANCE_DEFAULT_REQUESTS
        : checkInteger(FACTORY, 'maxRequests', given.maxRequests, { min: 1, max: CONFORMANCE_REQUEST_CAP }),
    probeLimit:
      given.probeLimit === undefined
        ? undefined
        : checkInteger(FACTORY, 'probeLimit', given.probeLimit, { min: 1, max: CONFORMANCE_REQUEST_CAP }),
    timeoutMs:
      given.timeoutMs === undefined ? 10_000 : checkInteger(FACTORY, 'timeoutMs', given.timeoutMs, { min: 100, max: 120_000 }),
    preflightMethod: preflight.method,
    preflightHeaders: preflight.headers,
    ignore: readIgnore(given.ignore),
    failOn: readFailOn(given.failOn),
    baseline: readBaseline(given.baseline),
    onProgress:
      given.onProgress === undefined
        ? undefined
        : checkFunction<NonNullable<ConformanceOptions['onProgress']>>(FACTORY, 'onProgress', given.onProgress),
    openapi: given.openapi === undefined ? undefined : checkOpenApi(given.openapi),
    explore: given.explore === undefined ? true : checkBoolean(FACTORY, 'explore', given.explore),
    pathExceptions: given.pathExceptions === undefined ? {} : checkPathExceptions(given.pathExceptions),
    lintPaths: [],
    discovered: new Set(),
  };
}
