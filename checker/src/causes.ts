import type { CheckId } from './catalogue.js';
import { DEFAULT_CACHE_CONTROL, SECURITY_HEADERS } from './spec-values.js';

/**
 * How bad a failing check is, read from the wording of the rule it tests:
 * `must` for what docs/conventions.md states as a requirement ("is", "never", "always",
 * a value in its tables), `should` for what it prefers or gives as an
 * example, and for rules a black-box check can only approximate (English
 * plurals and verbs by word lists), `advice` for what it calls a default.
 */
export type Severity = 'must' | 'should' | 'advice';

/** Severities from the most to the least serious: the order of reports and of `--fail-on`. */
export const SEVERITIES = ['must', 'should', 'advice'] as const satisfies readonly Severity[];

/** Where the docs of this package live, for links that must be absolute (SARIF `helpUri`). */
export const DOCS_BASE = 'https://github.com/express-api-conventions/express-api-conventions/blob/main/';

/** One cause several checks can fail from, and how to remove it. */
export interface Cause {
  /** What is missing or wrong, in one line: "No security headers (`securityHeaders()`)". */
  readonly title: string;
  /** The fix with this package: the middleware, option or helper to use. */
  readonly fix: string;
  /** The fix for a service not built on this package: the header or behaviour to produce. */
  readonly elsewhere: string;
  /** The page of this package's docs that explains the fix, relative to the repository. */
  readonly docs: string;
}

/** Every cause a failing check is grouped under, by stable id (the `cause` of a result). */
export const CONFORMANCE_CAUSES = {
  'security-headers': {
    title: 'The security response headers of the conventions are missing or differ',
    fix: "Mount `securityHeaders()` (express-api-conventions/security; `conventions()` mounts it first) and keep its defaults, which are the conventions' values.",
    elsewhere:
      `Send on every response: ${SECURITY_HEADERS.map((row) => `\`${row.header}: ${row.value}\``).join(', ')}, ` +
      `and \`Cache-Control: ${DEFAULT_CACHE_CONTROL}\` unless another cache value of the conventions applies.`,
    docs: 'docs/security.md',
  },
  'helmet-defaults': {
    title:
      "helmet's default values are sent where the conventions ask for others (`helmet()` mounted in front of the conventions, or alone)",
    fix: "Remove the app's own `helmet()`: `securityHeaders()` (in `conventions()`) is helmet configured with the conventions' values. To keep it, give it those values: `contentSecurityPolicy: { useDefaults: false, directives: { scriptSrc: [\"'self'\"] } }`, `strictTransportSecurity: { maxAge: 63072000 }`, `frameguard: { action: 'deny' }`, `xDownloadOptions: false`, `originAgentCluster: false`.",
    elsewhere:
      "Configure the middleware that sends helmet's defaults (a long `Content-Security-Policy`, `Strict-Transport-Security: max-age=31536000`, `X-Frame-Options: SAMEORIGIN`, `X-Download-Options: noopen`) with the conventions' values, or remove it.",
    docs: 'docs/coming-from-helmet-cors-express-rate-limit.md',
  },
  'cors-package': {
    title: 'Preflights are answered by the `cors` package with its defaults (204, no `Content-Type`), not as the conventions ask',
    fix: "Remove the app's own `cors()` in front of the conventions and give its origins to `conventions({ corsPolicy: { origins } })`, which answers preflights with 200, `Content-Length: 0`, `Content-Type: text/plain` and `Access-Control-Max-Age`; or keep `cors()` with `preflightContinue: true`, so that `corsPolicy` answers them.",
    elsewhere:
      'Answer a preflight with 200, `Content-Length: 0`, `Content-Type: text/plain`, the origin echoed, comma lists of methods and headers and an integer `Access-Control-Max-Age` (the `cors` package answers 204 with no type and no max age by default).',
    docs: 'docs/coming-from-helmet-cors-express-rate-limit.md',
  },
  'retired-headers': {
    title: 'Headers the conventions do not use are sent',
    fix: '`securityHeaders()` sends none of them and `X-XSS-Protection: 0` only; remove the middleware or proxy rule that adds them.',
    elsewhere:
      'Stop sending `Public-Key-Pins`, `Expect-CT` and `Feature-Policy` (use `Permissions-Policy`); send `X-XSS-Protection` as `0` or not at all; send `Pragma` only on the token error response.',
    docs: 'docs/security.md',
  },
  'common-headers': {
    title: '`Date` or `X-Powered-By` is wrong',
    fix: 'Mount `commonHeaders()` (express-api-conventions/service; in `conventions()`): it writes `Date` and removes `X-Powered-By`.',
    elsewhere:
      'Send `Date` as an HTTP-date in GMT on every response but a 5xx; disable `X-Powered-By` (`app.disable("x-powered-by")`).',
    docs: 'docs/headers.md',
  },
  'json-writer': {
    title: 'JSON is not written as the conventions ask',
    fix: 'Answer through `jsonResponses()` (`res.json()`) or `sendJson()` (express-api-conventions/json; in `conventions()`): `application/json; charset=utf-8`, `<` and `>` as `\\u003C`/`\\u003E`, exact 64-bit ids with `idPair()`.',
    elsewhere:
      'Serve JSON as `application/json; charset=utf-8`; write `<` and `>` as `\\u003C` and `\\u003E`; give an `id` above 2^53 as an exact integer with its digits in `id_str`.',
    docs: 'docs/json.md',
  },
  'list-shape': {
    title: 'Lists are not objects with `hasNext`, or ignore `limit`',
    fix: 'Read `offset` and `limit` with `paging()` and answer with `sendList()` (express-api-conventions/request): `{ <collection>: [...], hasNext }`, 400 on malformed paging values.',
    elsewhere:
      'Answer a list as an object, `{ "users": [...], "hasNext": true }`, never a top-level array; honour `limit` and `offset`; refuse malformed values with 400 and a JSON error body.',
    docs: 'docs/request.md',
  },
  'field-selection': {
    title: '`fields` is not honoured',
    fix: "Use `selectFields()` (express-api-conventions/request) with the resource's field list; unknown names are refused with 400.",
    elsewhere:
      'Return only the fields named in `fields` (and their `_str` siblings); refuse unknown names with 400 and a JSON error body.',
    docs: 'docs/request.md',
  },
  'resource-keys': {
    title: 'Keys or values of resources break the resource conventions',
    fix: 'Rename in the code that shapes the resource; `responseLinter()` (express-api-conventions/lint) reports each key in development and tests.',
    elsewhere:
      'Use camelCase keys without the resource name as prefix, `At` on timestamp keys, RFC 3339 date-times, `male`/`female` for `gender`, flat objects.',
    docs: 'docs/lint.md',
  },
  'json-errors': {
    title: 'Errors are not answered as JSON `{ errors: [{ message, code }] }`',
    fix: 'Mount `notFound()` and `errorHandler()` (express-api-conventions/errors) after the routes, and raise `apiError(name)` in routes.',
    elsewhere:
      'Answer every 4xx and 5xx, the 404 of an unknown route included, with `Content-Type: application/json; charset=utf-8` and a body `{ "errors": [{ "message": "...", "code": 404 }] }`, never an HTML page or an empty body.',
    docs: 'docs/errors.md',
  },
  'missing-resource': {
    title: 'A missing resource cannot be told from a wrong URI',
    fix: "Answer a missing id with `apiError('notFound', { message: 'No user 42' })` in the route; `notFound()` answers unknown routes with its own message.",
    elsewhere: 'Give the 404 of a missing resource a message (or code) other than the 404 of a path no route answers.',
    docs: 'docs/errors.md',
  },
  'method-not-allowed': {
    title: 'A wrong method is not answered 405 with `Allow`',
    fix: "`notFound()` answers 405 with `Allow` when another method's route matches the path (option `methodNotAllowed`, default `true`).",
    elsewhere:
      'Answer a method no route takes on an existing path with 405, `Allow: <the methods it takes>` and a JSON error body.',
    docs: 'docs/errors.md',
  },
  redirects: {
    title: 'A redirect has no `Location`',
    fix: 'Redirect with `res.redirect(status, url)`, which sets `Location`.',
    elsewhere: 'Send `Location` with every 3xx but 304.',
    docs: 'docs/spec-coverage.md',
  },
  'method-override': {
    title: 'Method override is not honoured as the conventions say',
    fix: 'Mount `methodOverride()` (express-api-conventions/request; in `conventions()`): `X-HTTP-Method-Override` and `_method` on POST only.',
    elsewhere:
      'Treat a POST with `X-HTTP-Method-Override: PATCH` or a form field `_method=PATCH` as the PATCH; never honour it on GET.',
    docs: 'docs/request.md',
  },
  'conditional-get': {
    title: 'Conditional GET (`ETag`, `Last-Modified`, 304) is missing or wrong',
    fix: 'Set the validators with `setValidators()` and answer `notModified()` (express-api-conventions/caching); `caching()` in `conventions()` handles `If-None-Match`/`If-Modified-Since` and HEAD.',
    elsewhere:
      'Send `ETag` and `Last-Modified` on a resource; answer `If-None-Match`/`If-Modified-Since` with 304 and no body when unchanged, 200 with new validators when changed; answer HEAD like GET without a body.',
    docs: 'docs/caching.md',
  },
  cors: {
    title: 'Cross-origin answers are not as the conventions ask',
    fix: "Mount `corsPolicy({ origins: ['https://app.example.com'] })` (express-api-conventions/cors; `conventions({ corsPolicy })`).",
    elsewhere:
      'Answer a preflight with 200, `Content-Length: 0`, `Content-Type: text/plain`, the origin echoed, comma lists of methods and headers and an integer `Access-Control-Max-Age`; echo only exact allowed origins.',
    docs: 'docs/cors.md',
  },
  'rate-limit': {
    title: 'Rate-limit signalling differs from the conventions',
    fix: 'Mount `rateLimit()` (express-api-conventions/rate-limit; in `conventions()`): `RateLimit-Policy`, `RateLimit`, 429 with `Retry-After`.',
    elsewhere:
      "Send `RateLimit-Policy` and `RateLimit` as structured lists, no `X-RateLimit-*`; answer 429 with `Retry-After` in seconds, the same instant as `RateLimit`'s `t`.",
    docs: 'docs/rate-limit.md',
  },
  'token-endpoint': {
    title: 'The token endpoint does not answer as the conventions ask',
    fix: 'Mount `tokenRouter()` (express-api-conventions/oauth2; `conventions({ tokenRouter })`) at `/v1/oauth2/token`.',
    elsewhere:
      'Answer the password and refresh grants with 200 `{ access_token, token_type: "bearer", expires_in, refresh_token }` and no `Pragma`; accept client credentials in Basic or in the body, or none; refuse with 400/401 `{ error }`.',
    docs: 'docs/oauth2-token.md',
  },
  'bearer-auth': {
    title: 'Protected paths do not refuse as the conventions ask',
    fix: 'Protect routes with `bearerAuth()` and `requireScope()` (express-api-conventions/oauth2).',
    elsewhere:
      'Answer a missing or invalid bearer token with 401, `Content-Type: application/json`, `Cache-Control: no-store`, `Pragma: no-cache` and `{ "error": "invalid_token" }`; a valid token without the right with 403.',
    docs: 'docs/bearer-auth.md',
  },
  'clear-site-data': {
    title: '`Clear-Site-Data` is not `"cache", "cookies", "storage"`',
    fix: 'Use `clearSiteData()` (express-api-conventions/security) on the sign-out route.',
    elsewhere: 'Send `Clear-Site-Data: "cache", "cookies", "storage"` on sign-out.',
    docs: 'docs/security.md',
  },
  cookies: {
    title: 'Cookies lack `Secure` or `HttpOnly`',
    fix: 'Mount `secureCookies()` (express-api-conventions/security), which adds both to every cookie set.',
    elsewhere: 'Set every cookie with `Secure` and `HttpOnly`.',
    docs: 'docs/security.md',
  },
  'path-names': {
    title: 'Paths break the path rules of the conventions',
    fix: 'Rename the routes; `checkRoutes(app)` (express-api-conventions/lint) names each at start-up with a suggestion, and accepts a deliberate exception per rule.',
    elsewhere:
      'Use `/v<major>/<plural-collection>[/<id>][/<sub-collection>]`, lower case, hyphens, no verbs, no `list`, no extensions.',
    docs: 'docs/lint.md',
  },
  'openapi-document': {
    title: 'The OpenAPI document does not say what the conventions answer',
    fix: 'Build the document with `withConventions(document, options)` (express-api-conventions/openapi), given the options of `conventions()`: it adds the headers, error answers and parameters the preset sends.',
    elsewhere:
      'Declare in the document, for each operation, every status the service answers (400, 401, 403, 404, 405, 429, 500, 503 ...) and, for each status, the headers it sends (security headers, `Cache-Control`, `RateLimit`, `RateLimit-Policy`, `Retry-After`, `ETag`, CORS).',
    docs: 'docs/openapi.md',
  },
  'custom-headers': {
    title: 'New headers carry an `X-` prefix',
    fix: 'Rename the header where the app sets it (RFC 6648); the headers the conventions name keep their names.',
    elsewhere: 'Name new response headers without `X-`.',
    docs: 'docs/spec-coverage.md',
  },
} as const satisfies Record<string, Cause>;

export type CauseId = keyof typeof CONFORMANCE_CAUSES;

const must = (cause: CauseId) => ({ severity: 'must', cause }) as const;
const should = (cause: CauseId) => ({ severity: 'should', cause }) as const;
const advice = (cause: CauseId) => ({ severity: 'advice', cause }) as const;

/** Each check's severity and cause. */
export const CHECK_TRIAGE: Readonly<Record<CheckId, { readonly severity: Severity; readonly cause: CauseId }>> = {
  'common.date': must('common-headers'),
  'common.json-content-type': must('json-writer'),
  'common.top-level-object': must('list-shape'),
  // Path rule 8 is about the URI; the header is the same leak by another way.
  'common.no-x-powered-by': should('common-headers'),
  'common.location-on-3xx': must('redirects'),
  // A contract test (Schemathesis, Dredd, Prism) fails on what the document leaves out.
  'common.openapi-statuses': should('openapi-document'),
  'common.openapi-headers': should('openapi-document'),

  'resource.key-case': must('resource-keys'),
  'resource.timestamp-suffix': should('resource-keys'),
  'resource.no-resource-prefix': should('resource-keys'),
  'resource.date-time': must('resource-keys'),
  'resource.gender': must('resource-keys'),
  // "Flat by default".
  'resource.flat': advice('resource-keys'),
  'resource.large-integers': must('json-writer'),
  'resource.has-next': must('list-shape'),

  'query.limit': must('list-shape'),
  'query.has-next-while-more': must('list-shape'),
  // docs/conventions.md section 5 names the parameters, not what a malformed one gets: rule 14.3 makes it a 400.
  'query.invalid-paging': should('list-shape'),
  'query.fields': must('field-selection'),
  'query.fields-unknown': should('field-selection'),

  'methods.head': must('conditional-get'),
  'methods.override-header': must('method-override'),
  'methods.override-form': must('method-override'),
  'methods.override-post-only': should('method-override'),

  'errors.not-found.status': must('json-errors'),
  'errors.not-found.json': must('json-errors'),
  // Errors rule 7 gives the body as an "example shape".
  'errors.not-found.body': should('json-errors'),
  'errors.not-found.distinct': must('missing-resource'),
  'errors.method-not-allowed.status': should('method-not-allowed'),
  'errors.method-not-allowed.allow': should('method-not-allowed'),
  'errors.method-not-allowed.json': must('json-errors'),
  'errors.method-not-allowed.body': should('json-errors'),
  'errors.json-bodies': must('json-errors'),
  'errors.body-shape': should('json-errors'),

  'security.hsts': must('security-headers'),
  'security.csp': must('security-headers'),
  'security.nosniff': must('security-headers'),
  'security.frame-options': must('security-headers'),
  'security.referrer-policy': must('security-headers'),
  'security.cross-domain-policies': must('security-headers'),
  'security.dns-prefetch-control': must('security-headers'),
  'security.coop': must('security-headers'),
  'security.corp': must('security-headers'),
  'security.coep': must('security-headers'),
  // "Headers that are not used": a list of what to leave out, not a refusal.
  'security.x-xss-protection': should('retired-headers'),
  'security.no-public-key-pins': should('retired-headers'),
  'security.no-expect-ct': should('retired-headers'),
  'security.no-feature-policy': should('retired-headers'),
  'security.pragma': should('retired-headers'),
  'security.cache-control': must('security-headers'),
  'security.clear-site-data': must('clear-site-data'),
  'security.cookies': must('cookies'),

  'cors.preflight.status': must('cors'),
  'cors.preflight.content-length': must('cors'),
  'cors.preflight.content-type': must('cors'),
  'cors.preflight.allow-origin': must('cors'),
  'cors.preflight.allow-methods': must('cors'),
  'cors.preflight.allow-headers': must('cors'),
  'cors.preflight.max-age': must('cors'),
  'cors.actual.allow-origin': must('cors'),
  'cors.look-alike-refused': must('cors'),

  // The caching table lists what each header is for; the conditional request is spelled out for If-Modified-Since.
  'caching.etag': should('conditional-get'),
  'caching.last-modified': should('conditional-get'),
  'caching.if-none-match': should('conditional-get'),
  'caching.if-modified-since': must('conditional-get'),
  'caching.not-modified-only-conditional': must('conditional-get'),
  'caching.changed': must('conditional-get'),

  'limits.policy-syntax': must('rate-limit'),
  'limits.state-syntax': must('rate-limit'),
  'limits.policy-constant': must('rate-limit'),
  // "Superseded", not forbidden.
  'limits.no-x-ratelimit': should('rate-limit'),
  'limits.retry-after': must('rate-limit'),

  'auth.token.response': must('token-endpoint'),
  'auth.token.expires-in': must('token-endpoint'),
  'auth.token.refresh-token': must('token-endpoint'),
  'auth.token.no-pragma': should('token-endpoint'),
  'auth.token.client-optional': must('token-endpoint'),
  'auth.token.client-in-body': must('token-endpoint'),
  'auth.token.refresh': must('token-endpoint'),
  'auth.token.error': must('token-endpoint'),
  'auth.missing-credential': must('bearer-auth'),
  'auth.invalid-token.status': must('bearer-auth'),
  'auth.invalid-token.headers': must('bearer-auth'),
  'auth.invalid-token.body': must('bearer-auth'),
  'auth.insufficient-rights': must('bearer-auth'),

  'paths.version-first': must('path-names'),
  'paths.shape': must('path-names'),
  'paths.lowercase': must('path-names'),
  // Plural nouns, verbs, search words and singular/plural twins are judged by English word lists: a guess.
  'paths.plural-nouns': should('path-names'),
  'paths.no-verbs': should('path-names'),
  'paths.no-percent-encoding': must('path-names'),
  'paths.hyphens': must('path-names'),
  'paths.search-segment': should('path-names'),
  'paths.no-list': must('path-names'),
  'paths.no-extensions': must('path-names'),
  'paths.consistent': should('path-names'),
  'paths.no-x-prefix': must('custom-headers'),

  'json.escape-angle-brackets': must('json-writer'),
};
