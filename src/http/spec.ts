/**
 * the conventions' values that several modules write, as constants, each with the
 * sentence it implements. This is the leaf layer: it imports no other folder
 * of src/ (test/meta/layers.test.ts), so every module can use it without a loop.
 */

/** The conventions' "Common response behaviour" rule 3: "`application/json; charset=utf-8` for JSON". */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8' as const;

/** The conventions' "Common response behaviour" rule 4: "`X-Content-Type-Options: nosniff` is sent." */
export const NOSNIFF_HEADER = 'X-Content-Type-Options' as const;
export const NOSNIFF_VALUE = 'nosniff' as const;

/** The conventions' "Caching", intent "Client must not reuse without checking": `no-cache`. */
export const CACHE_CONTROL_NO_CACHE = 'no-cache' as const;
/** The conventions' "Caching", intent "Confidential data, no storage by clients or proxies": `no-store`. */
export const CACHE_CONTROL_NO_STORE = 'no-store' as const;
/**
 * the conventions' "Security response headers", "Prevent cache exposure":
 * `Cache-Control: no-store, max-age=0`. The default of every response that
 * states no caching of its own, and of every error.
 */
export const CACHE_CONTROL_SENSITIVE = 'no-store, max-age=0' as const;

/**
 * the conventions' "Token failure": "When the token is invalid the response is 401
 * with headers `Content-Type: application/json`, `Cache-Control: no-store`,
 * `Pragma: no-cache`". The one value of a token failure's Cache-Control.
 */
export const TOKEN_FAILURE_CACHE_CONTROL = CACHE_CONTROL_NO_STORE;
/** The conventions' "Security response headers": `Pragma` "appears only in the token error response". */
export const TOKEN_FAILURE_PRAGMA = 'no-cache' as const;
/** The conventions' "Token failure": both cache headers of the answer, as one map. */
export const TOKEN_FAILURE_HEADERS = {
  'Cache-Control': TOKEN_FAILURE_CACHE_CONTROL,
  Pragma: TOKEN_FAILURE_PRAGMA,
} as const;

/**
 * Methods that never change state (RFC 9110 §9.2.1): preconditions leave
 * them alone, CSRF does not check them.
 */
export const SAFE_METHODS = ['GET', 'HEAD', 'OPTIONS', 'TRACE'] as const;

const SAFE = new Set<string>(SAFE_METHODS);

/** Whether a method is safe (RFC 9110 §9.2.1). */
export const isSafeMethod = (method: string): boolean => SAFE.has(method);
