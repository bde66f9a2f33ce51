import { SECURITY_HEADERS, type SecurityHeaderCheckId } from './spec-values.js';

/** The sections of the conventions the checks are grouped by, in the order they are reported. */
export const CONFORMANCE_SECTIONS = [
  'Common response behaviour',
  'Conventions for every resource',
  'Common query parameters',
  'Methods',
  'Errors',
  'Security response headers',
  'Cross-origin (CORS)',
  'Caching',
  'Limits',
  'Authentication',
  'Path rules',
  'JSON output escaping',
] as const;

export type ConformanceSection = (typeof CONFORMANCE_SECTIONS)[number];

/** One check the conformance run can report: its section, what holds when it passes, and where the conventions say so. */
export interface CheckDefinition {
  readonly section: ConformanceSection;
  readonly title: string;
  readonly rule: string;
}

/** The page every rule is cited from: shipped with the repository, one row per sentence of the conventions. */
export const RULE_PAGE = 'docs/spec-coverage.md';

/**
 * A rule as the report cites it: the section anchor of docs/spec-coverage.md
 * and the rows (first column) of that section's table, e.g.
 * `docs/spec-coverage.md#errors "2", "4"; #common-response-behaviour "3"`.
 */
export function cite(...references: readonly (readonly [anchor: string, ...rows: string[]])[]): string {
  return references
    .map(([anchor, ...rows], index) => `${index === 0 ? RULE_PAGE : ''}#${anchor} ${rows.map((row) => `"${row}"`).join(', ')}`)
    .join('; ');
}

type Reference = readonly [anchor: string, ...rows: string[]];
const define =
  (section: ConformanceSection) =>
  (title: string, ...references: Reference[]): CheckDefinition => ({ section, title, rule: cite(...references) });

const common = define('Common response behaviour');
const resource = define('Conventions for every resource');
const query = define('Common query parameters');
const methods = define('Methods');
const errors = define('Errors');
const securityDefinition = define('Security response headers');
const security = (title: string, row = 'table'): CheckDefinition => securityDefinition(title, ['security-response-headers', row]);
const cors = (title: string, ...references: Reference[]): CheckDefinition =>
  define('Cross-origin (CORS)')(title, ...(references.length > 0 ? references : [['cross-origin-cors', 'Preflight'] as const]));
const caching = define('Caching');
const limits = define('Limits');
const auth = define('Authentication');
const paths = define('Path rules');
const escaping = define('JSON output escaping');

/** One check per row of the security header table that fixes a value: `Name: value`. */
function securityHeaderChecks(): Record<SecurityHeaderCheckId, CheckDefinition> {
  const checks = SECURITY_HEADERS.map((row) => [row.id, security(`\`${row.header}: ${row.value}\``)] as const);
  return Object.fromEntries(checks) as Record<SecurityHeaderCheckId, CheckDefinition>;
}

/**
 * Every check of the conformance run, by stable id. The ids are public: they
 * appear in the report, in `--json`, in `--ignore`, and in docs/conformance.md.
 */
export const CONFORMANCE_CHECKS = {
  'common.date': common('`Date` in HTTP-date format (GMT) on every response except 5xx', ['common-response-behaviour', '2']),
  'common.json-content-type': common('JSON is served as `application/json; charset=utf-8`, never as `text/html`', [
    'common-response-behaviour',
    '3',
  ]),
  'common.top-level-object': common(
    'Every JSON body is an object, never a top-level array or scalar',
    ['conventions-for-every-resource', 'Top-level value'],
    ['json-output-escaping', '4'],
  ),
  'common.no-x-powered-by': common('No `X-Powered-By`: the implementation technology is not revealed', [
    'endpoints-path-rules',
    '8',
  ]),
  'common.location-on-3xx': common('A 3xx response carries `Location`', ['common-response-behaviour', '5']),
  'common.openapi-statuses': common('The OpenAPI document lists, for the operation, every status the service answered', [
    'what-the-service-does',
    '1',
  ]),
  'common.openapi-headers': common(
    'The OpenAPI document declares, for the operation and status, every header of the conventions the service sent',
    ['what-the-service-does', '1'],
  ),

  'resource.key-case': resource("JSON keys are camelCase (the conventions' own `id_str` siblings and OAuth 2.0 fields aside)", [
    'conventions-for-every-resource',
    'Key naming / case',
  ]),
  'resource.timestamp-suffix': resource('A key whose value is an RFC 3339 date-time ends in `At`', [
    'conventions-for-every-resource',
    'Key naming / case',
  ]),
  'resource.no-resource-prefix': resource('No key repeats the name of its resource (no `user` prefix on users)', [
    'conventions-for-every-resource',
    'Key naming / case',
  ]),
  'resource.date-time': resource('Date-times are RFC 3339 strings, UTC with `Z` or an offset `+hh:mm`', [
    'conventions-for-every-resource',
    'Date-time',
  ]),
  'resource.gender': resource('A field named `gender` holds `male` or `female`', ['conventions-for-every-resource', 'Gender']),
  'resource.flat': resource('Bodies are flat: a nested object only where the same structure occurs more than once', [
    'conventions-for-every-resource',
    'Nesting',
  ]),
  'resource.large-integers': resource(
    'An integer `id` beyond 2^53 has `id_str` beside it, and the digits of the number (read from the body text) equal the string',
    ['conventions-for-every-resource', 'Large integers'],
  ),
  'resource.has-next': resource('Every list result carries a boolean `hasNext`', [
    'conventions-for-every-resource',
    'Paging flag',
  ]),

  'query.limit': query('`limit=1` returns at most one item', ['common-query-parameters', '`offset`, `limit`']),
  'query.has-next-while-more': query(
    '`hasNext` is `true` while more items follow (`limit=1` on a list of two or more)',
    ['conventions-for-every-resource', 'Paging flag'],
    ['common-query-parameters', '`offset`, `limit`'],
  ),
  'query.invalid-paging': query(
    '`limit=abc`, `limit=-1` and `offset=abc` are refused with 400 and a JSON error body',
    ['common-query-parameters', '`offset`, `limit`'],
    ['errors', '400'],
  ),
  'query.fields': query(
    '`fields=<one field>` returns that field only (with its `_str` sibling) in every item',
    ['conventions-for-every-resource', 'Field selection'],
    ['common-query-parameters', '`fields`'],
  ),
  'query.fields-unknown': query(
    'An unknown field name in `fields` is refused with 400 and a JSON error body',
    ['common-query-parameters', '`fields`'],
    ['errors', '400'],
  ),

  'methods.head': methods('`HEAD` on the resource answers 200 with the `ETag` of its `GET` and no body', [
    'endpoints-methods',
    'HEAD',
  ]),
  'methods.override-header': methods('`POST` with `X-HTTP-Method-Override: PATCH` is answered as the `PATCH`', [
    'endpoints-methods',
    'override 1',
  ]),
  'methods.override-form': methods(
    'A form `POST` with `_method=PATCH` in an `application/x-www-form-urlencoded` body is answered as the `PATCH`',
    ['endpoints-methods', 'override 2'],
  ),
  'methods.override-post-only': methods(
    '`GET` with `X-HTTP-Method-Override: DELETE` is answered as the `GET` or refused: override is honoured on POST only',
    ['endpoints-methods', 'override 1'],
  ),

  'errors.not-found.status': errors('An unknown route answers 404', ['errors', '2', '4']),
  'errors.not-found.json': errors(
    'The 404 of an unknown route is `application/json; charset=utf-8`, never HTML',
    ['errors', '2'],
    ['common-response-behaviour', '3'],
  ),
  'errors.not-found.body': errors('The 404 body is `{ errors: [{ message, code }] }`', ['errors', '7']),
  'errors.not-found.distinct': errors(
    "A missing resource answers 404 with a body other than the wrong URI's, telling the two apart",
    ['errors', '4'],
  ),
  'errors.method-not-allowed.status': errors('A method no route answers on an existing path gets 405', ['errors', '405']),
  'errors.method-not-allowed.allow': errors('The 405 carries `Allow` with the methods the path answers', ['errors', '405']),
  'errors.method-not-allowed.json': errors(
    'The 405 is `application/json; charset=utf-8`, never HTML',
    ['errors', '2'],
    ['common-response-behaviour', '3'],
  ),
  'errors.method-not-allowed.body': errors('The 405 body is `{ errors: [{ message, code }] }`', ['errors', '7']),
  'errors.json-bodies': errors('Every 4xx and 5xx response describes the error in a JSON body, never HTML, never empty', [
    'errors',
    '1',
    '2',
  ]),
  'errors.body-shape': errors(
    'Every 4xx and 5xx body is `{ errors: [{ message, code }] }` with an integer `code` (OAuth 2.0 answers: `{ error }`)',
    ['errors', '7'],
    ['records-shown', 'Error body', 'Token error body'],
  ),

  ...securityHeaderChecks(),
  'security.x-xss-protection': security('`X-XSS-Protection` absent, or `0`', 'not used'),
  'security.no-public-key-pins': security('No `Public-Key-Pins`', 'not used'),
  'security.no-expect-ct': security('No `Expect-CT`', 'not used'),
  'security.no-feature-policy': security('No `Feature-Policy` (replaced by `Permissions-Policy`)', 'not used'),
  'security.pragma': security('`Pragma` only on token error responses', 'not used'),
  'security.cache-control': security(
    '`Cache-Control: no-store, max-age=0` unless another value of the conventions (`no-cache`, `public, max-age=N`, `no-store`) is set',
    'Cache exposure',
  ),
  'security.clear-site-data': security('`Clear-Site-Data`, where sent, is `"cache", "cookies", "storage"`', 'Clear-Site-Data'),
  'security.cookies': security('Cookies carry `Secure` and `HttpOnly`', 'cookies'),

  'cors.preflight.status': cors('A preflight from the allowed origin answers 200'),
  'cors.preflight.content-length': cors('The preflight answer has `Content-Length: 0`'),
  'cors.preflight.content-type': cors('The preflight answer has `Content-Type: text/plain`'),
  'cors.preflight.allow-origin': cors(
    'The preflight answer echoes the origin in `Access-Control-Allow-Origin` (`*` only without credentials)',
    ['cross-origin-cors', 'Allowed origin', 'Credentials', 'Preflight'],
  ),
  'cors.preflight.allow-methods': cors('`Access-Control-Allow-Methods` is a comma list that holds the requested method'),
  'cors.preflight.allow-headers': cors('`Access-Control-Allow-Headers` is a comma list that holds the requested headers'),
  'cors.preflight.max-age': cors('`Access-Control-Max-Age` is an integer number of seconds'),
  'cors.actual.allow-origin': cors(
    'A request from the allowed origin gets its origin back in `Access-Control-Allow-Origin` (`*` only without credentials)',
    ['cross-origin-cors', 'Allowed origin', 'Credentials'],
  ),
  'cors.look-alike-refused': cors('A look-alike of the allowed origin is not allowed', [
    'cross-origin-cors',
    'Allowed origin',
    'Refused origin',
  ]),

  'caching.etag': caching('The resource carries an `ETag`', ['caching', 'ETag', 'conditional 3']),
  'caching.last-modified': caching('The resource carries `Last-Modified` as an HTTP-date', [
    'caching',
    'Last-Modified',
    'conditional 3',
  ]),
  'caching.if-none-match': caching(
    '`If-None-Match` with the current tag answers 304 with an empty body',
    ['caching', 'conditional 1–2'],
    ['errors', '304'],
  ),
  'caching.if-modified-since': caching(
    '`If-Modified-Since` with the current date answers 304 with an empty body',
    ['caching', 'conditional 1–2'],
    ['errors', '304'],
  ),
  'caching.not-modified-only-conditional': caching(
    'Every 304 has an empty body and answers a request that sent `If-None-Match` or `If-Modified-Since`',
    ['errors', '304'],
  ),
  'caching.changed': caching(
    'Once the resource changed, `If-Modified-Since` with the old date answers 200 with a new `Last-Modified` and a new `ETag`',
    ['caching', 'conditional 3'],
  ),

  'limits.policy-syntax': limits(
    '`RateLimit-Policy` is a structured list of quoted policy names with `q` (and optional `qu`, `w`, `pk`)',
    ['limits', 'RateLimit-Policy'],
  ),
  'limits.state-syntax': limits('`RateLimit` is a structured list of quoted policy names with `r` (and optional `t`, `pk`)', [
    'limits',
    'RateLimit',
  ]),
  'limits.policy-constant': limits('`RateLimit-Policy` is the same on every response of a path (the partition key `pk` aside)', [
    'limits',
    'RateLimit-Policy',
  ]),
  'limits.no-x-ratelimit': limits('No `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`', ['limits', '3']),
  'limits.retry-after': limits(
    'A 429 carries `Retry-After` in seconds, the same instant as `RateLimit` `t`',
    ['limits', 'signalling', '2'],
    ['errors', '429'],
  ),

  'auth.token.response': auth(
    'The password grant answers 200 JSON with a string `access_token` and `token_type: "bearer"`',
    ['token-endpoint-and-authentication', 'Password grant'],
    ['records-shown', 'Token response'],
  ),
  'auth.token.expires-in': auth("The token response's `expires_in` is an integer", ['records-shown', 'Token response']),
  'auth.token.refresh-token': auth('The refresh token is delivered together with the access token', [
    'token-endpoint-and-authentication',
    'Token response',
  ]),
  'auth.token.no-pragma': auth("The token endpoint's 200 carries no `Pragma` (it belongs to the token error response only)", [
    'security-response-headers',
    'not used',
  ]),
  'auth.token.client-optional': auth(
    'Client authentication is optional: the password grant without any client credentials answers 200 with a token',
    ['token-endpoint-and-authentication', 'Client authentication 1'],
  ),
  'auth.token.client-in-body': auth(
    'The password grant with `client_id` and `client_secret` in the body (no `Authorization`) answers 200 with a token',
    ['token-endpoint-and-authentication', 'Client authentication 2'],
  ),
  'auth.token.refresh': auth('The refresh grant answers the same token response', [
    'token-endpoint-and-authentication',
    'Refresh grant',
  ]),
  'auth.token.error': auth('A refused token request answers 400 or 401 JSON with a string `error`', [
    'records-shown',
    'Token error body',
  ]),
  'auth.missing-credential': auth('A protected path without any credential answers 401', [
    'token-endpoint-and-authentication',
    '401 / 403',
  ]),
  'auth.invalid-token.status': auth('An invalid bearer token answers 401', [
    'token-endpoint-and-authentication',
    'Token failure',
    '401 / 403',
  ]),
  'auth.invalid-token.headers': auth(
    'The 401 has `Content-Type: application/json`, `Cache-Control: no-store`, `Pragma: no-cache`',
    ['token-endpoint-and-authentication', 'Token failure'],
  ),
  'auth.invalid-token.body': auth('The 401 body is an object with `error: "invalid_token"`', [
    'token-endpoint-and-authentication',
    'Token failure',
  ]),
  'auth.insufficient-rights': auth('A valid credential without the right to act answers 403', [
    'token-endpoint-and-authentication',
    '401 / 403',
  ]),

  'paths.version-first': paths(
    'The first path segment is `v<major>` (no minor version)',
    ['endpoints-path-rules', '1'],
    ['versioning', '1', '4'],
  ),
  'paths.shape': paths('Paths have the shape `/v<major>/<collection>[/<id>][/<sub-collection>]`', ['endpoints-path-rules', '1']),
  'paths.lowercase': paths('Paths are all lower case', ['endpoints-path-rules', '2']),
  'paths.plural-nouns': paths('Collection names are plural nouns', ['endpoints-path-rules', '3']),
  'paths.no-verbs': paths('No verbs in paths', ['endpoints-path-rules', '3']),
  'paths.no-percent-encoding': paths('No percent-encoded characters in paths', ['endpoints-path-rules', '3']),
  'paths.hyphens': paths('Words in a name are joined with a hyphen (no `_`, no camelCase)', ['endpoints-path-rules', '4']),
  'paths.search-segment': paths('A search uses the segment `search` (not `find`, `query`, `filter`, `lookup`)', [
    'endpoints-path-rules',
    '6',
  ]),
  'paths.no-list': paths('No `list` segment', ['endpoints-path-rules', '7']),
  'paths.no-extensions': paths(
    'No file extension (`.json`, `.php`, ...) or technology name (`cgi-bin`, `servlet`) revealing the implementation',
    ['endpoints-path-rules', '8'],
  ),
  'paths.consistent': paths('No resource named singular in one path and plural in another', ['endpoints-path-rules', '9']),
  'paths.no-x-prefix': paths('No new response header with an `X-` prefix (the ones the conventions name keep theirs)', [
    'endpoints-path-rules',
    '10',
  ]),

  'json.escape-angle-brackets': escaping('`<` and `>` are written as `\\u003C` and `\\u003E` in JSON', [
    'json-output-escaping',
    '2',
  ]),
} as const satisfies Record<string, CheckDefinition>;

export type CheckId = keyof typeof CONFORMANCE_CHECKS;

export const CONFORMANCE_CHECK_IDS = Object.keys(CONFORMANCE_CHECKS) as CheckId[];
