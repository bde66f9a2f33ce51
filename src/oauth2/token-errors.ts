import { CACHE_CONTROL_SENSITIVE } from '../caching/cache-control.js';
import { type ApiError, apiError } from '../errors/api-error.js';
import type { ErrorName } from '../errors/catalogue.js';

/**
 * Token-endpoint errors: RFC 6749 §5.2 bodies `{ error, error_description }`
 * rendered through the one error model (an ApiError with `body`).
 */

/** SPEC.md "Security response headers", "Prevent cache exposure": every token-endpoint response. */
export const TOKEN_CACHE_CONTROL = CACHE_CONTROL_SENSITIVE;
/** SPEC.md: `Pragma` "appears only in the token error response". */
export const TOKEN_ERROR_PRAGMA = 'no-cache';

/** RFC 6749 §5.2 error codes, with this package's catalogue entry for each. */
export const TOKEN_ERRORS = {
  invalid_request: 'oauthInvalidRequest',
  invalid_client: 'oauthInvalidClient',
  invalid_grant: 'oauthInvalidGrant',
  unauthorized_client: 'oauthUnauthorizedClient',
  unsupported_grant_type: 'oauthUnsupportedGrantType',
  invalid_scope: 'oauthInvalidScope',
  // RFC 6749 §8.5 allows extension codes: the brute-force guard's 429.
  too_many_requests: 'tooManyLoginFailures',
  // RFC 6749 §4.1.2.1's code for a server that cannot answer now (a store is down).
  temporarily_unavailable: 'stateStoreUnavailable',
  // RFC 6749 §4.1.2.1's code for an unexpected failure.
  server_error: 'internal',
} as const satisfies Record<string, ErrorName>;

export type TokenErrorCode = keyof typeof TOKEN_ERRORS;

/** The ApiError of a token-endpoint error: RFC 6749 body, no-store and Pragma. */
export function tokenError(
  error: TokenErrorCode,
  description: string,
  headers: Readonly<Record<string, string>> = {},
  cause?: unknown,
): ApiError {
  return apiError(TOKEN_ERRORS[error], {
    message: description,
    body: { error, error_description: description },
    headers: { 'Cache-Control': TOKEN_CACHE_CONTROL, Pragma: TOKEN_ERROR_PRAGMA, ...headers },
    cause,
  });
}
