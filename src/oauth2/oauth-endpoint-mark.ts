/**
 * Responses to requests for an OAuth endpoint (token, revocation,
 * introspection), marked by tokenEndpointErrors() before any shared
 * middleware runs. There a bearer token is no credential: the endpoint
 * authenticates the client itself (RFC 6749 §2.3), so an `Authorization:
 * Bearer` header is a client authentication it does not support, answered
 * with RFC 6749 §5.2 `invalid_client`, and bearerAuth() leaves it alone
 * rather than answer RFC 6750's `invalid_token` first.
 */
const OAUTH_ENDPOINT_RESPONSES = new WeakSet<object>();

export function markOAuthEndpoint(res: object): void {
  OAUTH_ENDPOINT_RESPONSES.add(res);
}

export const isOAuthEndpoint = (res: object): boolean => OAUTH_ENDPOINT_RESPONSES.has(res);
