import type { RequestHandler } from 'express';

/**
 * What conventions() takes as its `tokenRouter` stage: the router that
 * express-api-conventions-authorization-server's tokenRouter() returns. It
 * carries its own RFC 6749 error stage, which the preset puts first, at the
 * router's paths, so that a 413, 429 or 503 there keeps the token
 * endpoint's error shape. The library only reads this contract; the package
 * that answers at the token endpoint makes it.
 */
export interface TokenService extends RequestHandler {
  /** What the router answers where: read by withConventions() to describe it. */
  readonly endpoints: TokenEndpoints;
  /** tokenEndpointErrors() configured for the token, revocation and introspection paths. */
  readonly tokenEndpointErrors: RequestHandler;
}

/** The endpoints of a token router: each path, or undefined when that endpoint is off. */
export interface TokenEndpoints {
  readonly token: string;
  readonly revocation: string | undefined;
  readonly introspection: string | undefined;
  readonly metadata: string | undefined;
  /** Whether the token endpoint binds tokens to a DPoP key (RFC 9449). */
  readonly dpop: boolean;
}

/** Whether `value` is a router made by the authorization server's tokenRouter(). */
export function isTokenService(value: unknown): value is TokenService {
  const candidate = value as Partial<TokenService> | undefined;
  return (
    typeof value === 'function' && typeof candidate?.endpoints === 'object' && typeof candidate.tokenEndpointErrors === 'function'
  );
}
