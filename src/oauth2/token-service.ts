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
  /** The paths the router answers (token, revocation, introspection, metadata). */
  readonly paths: readonly string[];
  /** tokenEndpointErrors() configured for those paths. */
  readonly tokenEndpointErrors: RequestHandler;
}

/** Whether `value` is a router made by the authorization server's tokenRouter(). */
export function isTokenService(value: unknown): value is TokenService {
  const candidate = value as Partial<TokenService> | undefined;
  return typeof value === 'function' && Array.isArray(candidate?.paths) && typeof candidate?.tokenEndpointErrors === 'function';
}
