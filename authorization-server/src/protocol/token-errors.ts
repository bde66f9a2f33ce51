import { ApiError, type CatalogueEntry, entryForStatus, storeUnavailable } from 'express-api-conventions/errors';
import { CACHE_CONTROL_SENSITIVE, TOKEN_FAILURE_PRAGMA } from 'express-api-conventions/extend';
import { AUTHORIZATION_SERVER_ERRORS as OWN } from '../error-entries.js';

/**
 * Token-endpoint errors: RFC 6749 §5.2 bodies `{ error, error_description }`
 * rendered through the one error model (an ApiError with `body`).
 */

/** The conventions' "Security response headers", "Prevent cache exposure": every token-endpoint response. */
export const TOKEN_CACHE_CONTROL = CACHE_CONTROL_SENSITIVE;

/** The library's entry of a state store out of reach, as its storeUnavailable() answers it (503, code 50302). */
const STORE_UNAVAILABLE: CatalogueEntry = (({ status, code, message }) => ({ status, code, message }))(
  storeUnavailable(undefined),
);

/** RFC 6749 §5.2 error codes, with the catalogue entry of each (this package's, docs/errors.md). */
export const TOKEN_ERRORS = {
  invalid_request: OWN.oauthInvalidRequest,
  invalid_client: OWN.oauthInvalidClient,
  invalid_grant: OWN.oauthInvalidGrant,
  unauthorized_client: OWN.oauthUnauthorizedClient,
  unsupported_grant_type: OWN.oauthUnsupportedGrantType,
  invalid_scope: OWN.oauthInvalidScope,
  // RFC 7009 §2.2.1, at the revocation endpoint.
  unsupported_token_type: OWN.oauthUnsupportedTokenType,
  // RFC 9449 §5, at the token endpoint.
  invalid_dpop_proof: OWN.oauthInvalidDpopProof,
  use_dpop_nonce: OWN.oauthUseDpopNonce,
  // RFC 6749 §8.5 allows extension codes: the brute-force guard's 429.
  too_many_requests: OWN.tooManyLoginFailures,
  // RFC 6749 §4.1.2.1's code for a server that cannot answer now (a store is down).
  temporarily_unavailable: STORE_UNAVAILABLE,
  // RFC 6749 §4.1.2.1's code for an unexpected failure.
  server_error: entryForStatus(500),
} as const satisfies Record<string, CatalogueEntry>;

export type TokenErrorCode = keyof typeof TOKEN_ERRORS;

/** The ApiError of a token-endpoint error: RFC 6749 body, no-store and Pragma. */
export function tokenError(
  error: TokenErrorCode,
  description: string,
  headers: Readonly<Record<string, string>> = {},
  cause?: unknown,
): ApiError {
  return tokenErrorOf(TOKEN_ERRORS[error], error, description, headers, cause);
}

function tokenErrorOf(
  entry: CatalogueEntry,
  error: TokenErrorCode,
  description: string,
  headers: Readonly<Record<string, string>>,
  cause?: unknown,
): ApiError {
  return new ApiError(entry, {
    message: description,
    body: { error, error_description: description },
    headers: { 'Cache-Control': TOKEN_CACHE_CONTROL, Pragma: TOKEN_FAILURE_PRAGMA, ...headers },
    cause,
  });
}

/**
 * A failed client authentication, RFC 6749 §5.2 `invalid_client`: 401 with
 * the `WWW-Authenticate` challenge when the client authenticated with the
 * `Authorization` header (there the challenge is a MUST), else 400 without
 * one. A strict client (oauth4webapi) reads a 401 with a challenge as an
 * HTTP authentication challenge and never sees the body: a client that put
 * its credentials in the body must get the 400 to read `invalid_client`.
 */
export function invalidClient(description: string, challenge?: string): ApiError {
  return challenge === undefined
    ? tokenErrorOf(OWN.oauthInvalidClientRequest, 'invalid_client', description, {})
    : tokenErrorOf(OWN.oauthInvalidClient, 'invalid_client', description, { 'WWW-Authenticate': challenge });
}

/** The description of an unexpected failure: its cause stays in the log. */
export const SERVER_ERROR_DESCRIPTION = 'The token endpoint failed; try again later.';

/** The RFC 6749 code for an error status that has no code of its own. */
function codeForStatus(status: number): TokenErrorCode {
  if (status === 401) return 'invalid_client';
  if (status === 429) return 'too_many_requests';
  if (status === 503) return 'temporarily_unavailable';
  if (status >= 500) return 'server_error';
  return 'invalid_request';
}

/**
 * The ErrorShape of the token endpoint (pass it to `setErrorShape()`): an
 * ApiError raised by shared middleware that does not know RFC 6749 (a 413
 * of the body parser, a 429 of the rate limiter, a 503 of a store) keeps its
 * status and headers (`Retry-After`, `Allow`) and gets the RFC 6749 §5.2
 * body `{ error, error_description }`, `Cache-Control: no-store, max-age=0`
 * and `Pragma: no-cache`. An error that brings its own body (a token error,
 * an RFC 6750 bearer error) is left as it is. A 5xx other than 503 is
 * described generically.
 */
export function tokenErrorShape(error: ApiError): ApiError {
  if (error.body !== undefined) return error;
  const code = codeForStatus(error.status);
  const description = code === 'server_error' ? SERVER_ERROR_DESCRIPTION : error.message;
  return new ApiError(
    { status: error.status, code: error.code, message: description },
    {
      message: description,
      body: { error: code, error_description: description },
      headers: { ...error.headers, 'Cache-Control': TOKEN_CACHE_CONTROL, Pragma: TOKEN_FAILURE_PRAGMA },
      cause: error.cause ?? error,
    },
  );
}
