import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { isApiError, storeUnavailable } from 'express-api-conventions/errors';
import { isStoreFailure, refuse, setErrorShape, setResponseHeader } from 'express-api-conventions/extend';
import { SERVER_ERROR_DESCRIPTION, TOKEN_CACHE_CONTROL, tokenError, tokenErrorShape } from '../protocol/token-errors.js';

/**
 * One OAuth endpoint (token, revocation, introspection): every answer is
 * `Cache-Control: no-store, max-age=0` (docs/conventions.md rule 11.8;
 * RFC 6749 §5.1, RFC 7662 §2.2), and every error, whatever raised it (the
 * sign-in guard's 429, a store's 503), has RFC 6749 §5.2's shape. refuse()
 * hands the error to errorHandler() when one is mounted, else writes it
 * here, so the endpoint works alone.
 */
export function oauthEndpoint(handle: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return function oauthEndpointMiddleware(req: Request, res: Response, next: NextFunction) {
    setResponseHeader(res, 'Cache-Control', TOKEN_CACHE_CONTROL);
    setErrorShape(res, tokenErrorShape);
    handle(req, res).catch((error: unknown) => {
      // A store that is down is 503 `temporarily_unavailable` (through the shape), anything else unknown 500.
      if (isApiError(error)) refuse(req, res, next, error);
      else if (isStoreFailure(error)) refuse(req, res, next, storeUnavailable(error));
      else refuse(req, res, next, tokenError('server_error', SERVER_ERROR_DESCRIPTION, {}, error));
    });
  };
}
