import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { checkString, invalidOption, readOptions } from '../config/options.js';
import { setErrorShape } from '../errors/error-shape.js';
import { tokenErrorShape } from './token-errors.js';
import { TOKEN_PATH } from './token-options.js';

export interface TokenEndpointErrorsOptions {
  /** Path of the token endpoint, as given to tokenRouter(). Default: `'/v1/oauth2/token'`. */
  path?: string;
}

const OPTION_NAMES = ['path'] as const;
const FACTORY = 'tokenEndpointErrors';

/**
 * Every answer of the token endpoint keeps RFC 6749's shape (§5.2), also
 * the errors raised before tokenRouter() runs: a 413 of the body parsers, a
 * 429 of the rate limiter, a 503 of a store. Mount it BEFORE that shared
 * middleware; on requests to the token path it sets tokenErrorShape() on
 * the response, which errorHandler() applies when it renders the error.
 * Other paths keep `{ "errors": [...] }`.
 */
export function tokenEndpointErrors(options?: Readonly<TokenEndpointErrorsOptions>): RequestHandler {
  const given = readOptions<TokenEndpointErrorsOptions>(FACTORY, options, OPTION_NAMES);
  const path = given.path === undefined ? TOKEN_PATH : checkString(FACTORY, 'path', given.path);
  if (!path.startsWith('/')) invalidOption(FACTORY, 'path', path, "a path starting with '/'");
  return function tokenEndpointErrorsMiddleware(req: Request, res: Response, next: NextFunction) {
    if (req.path === path) setErrorShape(res, tokenErrorShape);
    next();
  };
}
