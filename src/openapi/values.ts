/**
 * What the preset sends, as OpenAPI needs to state it. The values come from
 * the modules that send them; the ones living in a module that loads a
 * wrapped library (helmet, express-rate-limit, jsonwebtoken) are
 * repeated here so that describing a service never loads its middlewares
 * (docs/design.md principle 9), and test/openapi-values.test.ts keeps each copy
 * equal to its source.
 */

/** securityHeaders()'s SECURITY_HEADERS: the conventions' "Security response headers", value by value. */
export const SECURITY_HEADER_VALUES = {
  'Strict-Transport-Security': 'max-age=63072000; includeSubDomains',
  'Content-Security-Policy': "script-src 'self'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'deny',
  'Referrer-Policy': 'no-referrer',
  'X-Permitted-Cross-Domain-Policies': 'none',
  'X-DNS-Prefetch-Control': 'off',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
} as const;

/** securityHeaders()'s option that turns each header off (`false`). */
export const SECURITY_HEADER_OPTIONS: Readonly<Record<keyof typeof SECURITY_HEADER_VALUES, string | undefined>> = {
  'Strict-Transport-Security': 'strictTransportSecurity',
  'Content-Security-Policy': 'contentSecurityPolicy',
  // commonHeaders() sends it whatever securityHeaders() says (the conventions' rule 4).
  'X-Content-Type-Options': undefined,
  'X-Frame-Options': 'xFrameOptions',
  'Referrer-Policy': 'referrerPolicy',
  'X-Permitted-Cross-Domain-Policies': 'xPermittedCrossDomainPolicies',
  'X-DNS-Prefetch-Control': 'xDnsPrefetchControl',
  'Cross-Origin-Opener-Policy': 'crossOriginOpenerPolicy',
  'Cross-Origin-Resource-Policy': 'crossOriginResourcePolicy',
  'Cross-Origin-Embedder-Policy': 'crossOriginEmbedderPolicy',
};

/** rateLimit()'s defaults (src/rate-limit/options.ts): the reference server's `RATE_LIMIT` and `RATE_WINDOW`. */
export const RATE_LIMIT_DEFAULTS = { limit: 100, windowSeconds: 60, policies: ['user', 'application'] } as const;

/** corsPolicy()'s CORS_DEFAULT_EXPOSED_HEADERS. */
export const CORS_EXPOSED_HEADERS = ['ETag', 'Location', 'RateLimit', 'RateLimit-Policy', 'Retry-After'] as const;

/** tokenRouter()'s TOKEN_PATH, REVOCATION_PATH and INTROSPECTION_PATH (src/oauth2/token-options.ts). */
export const TOKEN_SERVICE_PATHS = {
  token: '/v1/oauth2/token',
  revocation: '/v1/oauth2/revocations',
  introspection: '/v1/oauth2/introspections',
} as const;

/** paging()'s defaults (src/request/paging.ts): `limit` when none is sent, and the largest one accepted. */
export const PAGING_DEFAULTS = { defaultLimit: 20, maxLimit: 100 } as const;

/** conventions()'s option keys (PRESET_STAGES' names, then `before`, `after`, `reportOnly`). */
export const CONVENTIONS_OPTION_NAMES = [
  'tokenEndpointErrors',
  'commonHeaders',
  'securityHeaders',
  'caching',
  'corsPolicy',
  'secureCookies',
  'jsonResponses',
  'maintenance',
  'bearerAuth',
  'rateLimit',
  'crossSiteProtection',
  'parseBodies',
  'methodOverride',
  'csrfProtection',
  'responseLinter',
  'tokenRouter',
  'before',
  'after',
  'reportOnly',
] as const;
