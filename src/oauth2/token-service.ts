import type { RequestHandler } from 'express';
import { carriesDocumentPart, type DocumentPart } from '../document-parts.js';

/**
 * What conventions() takes as its `tokenRouter` stage: the router that
 * express-api-conventions-authorization-server's tokenRouter() returns. It
 * carries its own RFC 6749 error stage, which the preset puts first, at the
 * router's paths, so that a 413, 429 or 503 there keeps the token
 * endpoint's error shape; and its part of the OpenAPI document, which
 * withConventions() adds. The library only reads this contract: the
 * package that answers at the token endpoint makes it, and only it knows
 * its paths and grants.
 */
export interface TokenService extends RequestHandler {
  /** What the router adds to withConventions()'s document: its operations, and the paths of its error shape. */
  readonly documentPart: DocumentPart;
  /** tokenEndpointErrors() configured for the router's paths. */
  readonly tokenEndpointErrors: RequestHandler;
}

/** Whether `value` is a router made by the authorization server's tokenRouter(). */
export function isTokenService(value: unknown): value is TokenService {
  return (
    typeof value === 'function' &&
    carriesDocumentPart(value) &&
    typeof (value as Partial<TokenService>).tokenEndpointErrors === 'function'
  );
}
