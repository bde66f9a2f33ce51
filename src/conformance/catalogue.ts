import type { ConformanceSection } from './report.js';

/** One check the conformance run can report: its section, what holds when it passes, and where SPEC.md says so. */
export interface CheckDefinition {
  readonly section: ConformanceSection;
  readonly title: string;
  readonly rule: string;
}

const common = (title: string, rule: string): CheckDefinition => ({ section: 'Common response behaviour', title, rule });
const errors = (title: string, rule: string): CheckDefinition => ({ section: 'Errors', title, rule });
const security = (title: string): CheckDefinition => ({
  section: 'Security response headers',
  title,
  rule: 'SPEC.md "Security response headers"',
});
const cors = (title: string, rule = 'SPEC.md "Cross-origin (CORS)", Preflight row'): CheckDefinition => ({
  section: 'Cross-origin (CORS)',
  title,
  rule,
});
const caching = (title: string, rule: string): CheckDefinition => ({ section: 'Caching', title, rule });
const limits = (title: string, rule: string): CheckDefinition => ({ section: 'Limits', title, rule });
const auth = (title: string, rule: string): CheckDefinition => ({ section: 'Authentication', title, rule });
const paths = (title: string, rule: string): CheckDefinition => ({ section: 'Path rules', title, rule });

/**
 * Every check of the conformance run, by stable id. The ids are public: they
 * appear in the report, in `--json`, in `--ignore`, and in docs/conformance.md.
 */
export const CONFORMANCE_CHECKS = {
  'common.date': common(
    '`Date` in HTTP-date format (GMT) on every response except 5xx',
    'SPEC.md "Common response behaviour" rule 2',
  ),
  'common.json-content-type': common(
    'JSON is served as `application/json; charset=utf-8`, never as `text/html`',
    'SPEC.md "Common response behaviour" rule 3',
  ),
  'common.top-level-object': common(
    'Every JSON body is an object, never a top-level array or scalar',
    'SPEC.md "Conventions for every resource", Top-level value; "JSON output escaping" rule 4',
  ),
  'common.no-x-powered-by': common(
    'No `X-Powered-By`: the implementation technology is not revealed',
    'SPEC.md "Path rules" rule 8',
  ),
  'common.location-on-3xx': common('A 3xx response carries `Location`', 'SPEC.md "Common response behaviour" rule 5'),

  'errors.not-found.status': errors('An unknown route answers 404', 'SPEC.md "Errors" rules 2 and 4'),
  'errors.not-found.json': errors(
    'The 404 of an unknown route is `application/json; charset=utf-8`, never HTML',
    'SPEC.md "Errors" rule 2; "Common response behaviour" rule 3',
  ),
  'errors.not-found.body': errors('The 404 body is `{ errors: [{ message, code }] }`', 'SPEC.md "Errors" rule 7'),
  'errors.method-not-allowed.status': errors(
    'A method no route answers on an existing path gets 405',
    'SPEC.md "Errors", Status codes: 405',
  ),
  'errors.method-not-allowed.allow': errors(
    'The 405 carries `Allow` with the methods the path answers',
    'SPEC.md "Errors", Status codes: 405 (RFC 9110 §15.5.6)',
  ),
  'errors.method-not-allowed.json': errors(
    'The 405 is `application/json; charset=utf-8`, never HTML',
    'SPEC.md "Errors" rule 2; "Common response behaviour" rule 3',
  ),
  'errors.method-not-allowed.body': errors('The 405 body is `{ errors: [{ message, code }] }`', 'SPEC.md "Errors" rule 7'),
  'errors.json-bodies': errors(
    'Every 4xx and 5xx response describes the error in a JSON body, never HTML, never empty',
    'SPEC.md "Errors" rules 1 and 2',
  ),

  'security.hsts': security('`Strict-Transport-Security: max-age=63072000; includeSubDomains`'),
  'security.csp': security("`Content-Security-Policy: script-src 'self'`"),
  'security.nosniff': security('`X-Content-Type-Options: nosniff` on every response'),
  'security.frame-options': security('`X-Frame-Options: deny`'),
  'security.referrer-policy': security('`Referrer-Policy: no-referrer`'),
  'security.cross-domain-policies': security('`X-Permitted-Cross-Domain-Policies: none`'),
  'security.dns-prefetch-control': security('`X-DNS-Prefetch-Control: off`'),
  'security.coop': security('`Cross-Origin-Opener-Policy: same-origin`'),
  'security.corp': security('`Cross-Origin-Resource-Policy: same-origin`'),
  'security.coep': security('`Cross-Origin-Embedder-Policy: require-corp`'),
  'security.x-xss-protection': security('`X-XSS-Protection` absent, or `0`'),
  'security.no-public-key-pins': security('No `Public-Key-Pins`'),
  'security.no-expect-ct': security('No `Expect-CT`'),
  'security.no-feature-policy': security('No `Feature-Policy` (replaced by `Permissions-Policy`)'),
  'security.pragma': security('`Pragma` only on token error responses'),
  'security.cache-control': security(
    '`Cache-Control: no-store, max-age=0` unless another SPEC.md value (`no-cache`, `public, max-age=N`, `no-store`) is set',
  ),
  'security.clear-site-data': security('`Clear-Site-Data`, where sent, is `"cache", "cookies", "storage"`'),
  'security.cookies': security('Cookies carry `Secure` and `HttpOnly`'),

  'cors.preflight.status': cors('A preflight from the allowed origin answers 200'),
  'cors.preflight.content-length': cors('The preflight answer has `Content-Length: 0`'),
  'cors.preflight.content-type': cors('The preflight answer has `Content-Type: text/plain`'),
  'cors.preflight.allow-origin': cors(
    'The preflight answer echoes the origin in `Access-Control-Allow-Origin` (`*` only without credentials)',
    'SPEC.md "Cross-origin (CORS)", Allowed origin, Credentials and Preflight rows',
  ),
  'cors.preflight.allow-methods': cors('`Access-Control-Allow-Methods` is a comma list that holds the requested method'),
  'cors.preflight.allow-headers': cors('`Access-Control-Allow-Headers` is a comma list that holds the requested headers'),
  'cors.preflight.max-age': cors('`Access-Control-Max-Age` is an integer number of seconds'),
  'cors.actual.allow-origin': cors(
    'A request from the allowed origin gets its origin back in `Access-Control-Allow-Origin` (`*` only without credentials)',
    'SPEC.md "Cross-origin (CORS)", Allowed origin and Credentials rows',
  ),
  'cors.look-alike-refused': cors(
    'A look-alike of the allowed origin is not allowed',
    'SPEC.md "Cross-origin (CORS)", Allowed origin row ("the validated origin")',
  ),

  'caching.etag': caching('The resource carries an `ETag`', 'SPEC.md "Caching", ETag row; Conditional request rule 3'),
  'caching.last-modified': caching(
    'The resource carries `Last-Modified` as an HTTP-date',
    'SPEC.md "Caching", Last-Modified row; Conditional request rule 3',
  ),
  'caching.if-none-match': caching(
    '`If-None-Match` with the current tag answers 304 with an empty body',
    'SPEC.md "Caching", Conditional request rule 2; Status codes: 304',
  ),
  'caching.if-modified-since': caching(
    '`If-Modified-Since` with the current date answers 304 with an empty body',
    'SPEC.md "Caching", Conditional request rules 1 and 2; Status codes: 304',
  ),

  'limits.policy-syntax': limits(
    '`RateLimit-Policy` is a structured list of quoted policy names with `q` (and optional `qu`, `w`, `pk`)',
    'SPEC.md "Limits", Signalling table',
  ),
  'limits.state-syntax': limits(
    '`RateLimit` is a structured list of quoted policy names with `r` (and optional `t`, `pk`)',
    'SPEC.md "Limits", Signalling table',
  ),
  'limits.policy-constant': limits(
    '`RateLimit-Policy` is the same on every response of a path',
    'SPEC.md "Limits", Stability column',
  ),
  'limits.no-x-ratelimit': limits(
    'No `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`',
    'SPEC.md "Limits" rule 3',
  ),
  'limits.retry-after': limits(
    'A 429 carries `Retry-After` in seconds, the same instant as `RateLimit` `t`',
    'SPEC.md "Limits", Signalling and rule 2; Status codes: 429',
  ),

  'auth.token.response': auth(
    'The password grant answers 200 JSON with `access_token`, `token_type: "bearer"`, integer `expires_in`, `refresh_token`',
    'SPEC.md "Authentication", Password grant and Token response',
  ),
  'auth.token.refresh': auth(
    'The refresh grant answers the same token response',
    'SPEC.md "Authentication", Refresh grant and Token response',
  ),
  'auth.token.error': auth(
    'A refused token request answers 400 or 401 JSON with a string `error`',
    'SPEC.md "Records shown", Token error body (RFC 6749 §5.2)',
  ),
  'auth.invalid-token.status': auth('An invalid bearer token answers 401', 'SPEC.md "Authentication", Token failure'),
  'auth.invalid-token.headers': auth(
    'The 401 has `Content-Type: application/json`, `Cache-Control: no-store`, `Pragma: no-cache`',
    'SPEC.md "Authentication", Token failure',
  ),
  'auth.invalid-token.body': auth(
    'The 401 body is an object with `error: "invalid_token"`',
    'SPEC.md "Authentication", Token failure',
  ),

  'paths.version-first': paths(
    'The first path segment is `v<major>` (no minor version)',
    'SPEC.md "Path rules" rule 1; "Versioning" rules 1 and 4',
  ),
  'paths.shape': paths('Paths have the shape `/v<major>/<collection>[/<id>][/<sub-collection>]`', 'SPEC.md "Path rules" rule 1'),
  'paths.lowercase': paths('Paths are all lower case', 'SPEC.md "Path rules" rule 2'),
  'paths.plural-nouns': paths('Collection names are plural nouns', 'SPEC.md "Path rules" rule 3'),
  'paths.no-verbs': paths('No verbs in paths', 'SPEC.md "Path rules" rule 3'),
  'paths.no-percent-encoding': paths('No percent-encoded characters in paths', 'SPEC.md "Path rules" rule 3'),
  'paths.hyphens': paths('Words in a name are joined with a hyphen (no `_`, no camelCase)', 'SPEC.md "Path rules" rule 4'),
  'paths.search-segment': paths(
    'A search uses the segment `search` (not `find`, `query`, `filter`, `lookup`)',
    'SPEC.md "Path rules" rule 6',
  ),
  'paths.no-list': paths('No `list` segment', 'SPEC.md "Path rules" rule 7'),
  'paths.no-extensions': paths(
    'No file extension (`.json`, `.php`, ...) or technology name (`cgi-bin`, `servlet`) revealing the implementation',
    'SPEC.md "Path rules" rule 8',
  ),
  'paths.consistent': paths('No resource named singular in one path and plural in another', 'SPEC.md "Path rules" rule 9'),
  'paths.no-x-prefix': paths(
    'No new response header with an `X-` prefix (the ones SPEC.md names keep theirs)',
    'SPEC.md "Path rules" rule 10 (RFC 6648)',
  ),

  'json.escape-angle-brackets': {
    section: 'JSON output escaping',
    title: '`<` and `>` are written as `\\u003C` and `\\u003E` in JSON',
    rule: 'SPEC.md "JSON output escaping" rule 2',
  },
} as const satisfies Record<string, CheckDefinition>;

export type CheckId = keyof typeof CONFORMANCE_CHECKS;

export const CONFORMANCE_CHECK_IDS = Object.keys(CONFORMANCE_CHECKS) as CheckId[];
