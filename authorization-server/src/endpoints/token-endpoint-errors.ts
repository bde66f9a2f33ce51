import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { checkString, invalidOption, markOAuthEndpoint, readOptions, setErrorShape } from 'express-api-conventions/extend';
import { tokenErrorShape } from '../protocol/token-errors.js';
import { markArrival } from '../sign-in/request-deadline.js';
import { INTROSPECTION_PATH, REVOCATION_PATH, TOKEN_PATH } from '../token-options.js';

export interface TokenEndpointErrorsOptions {
  /** Path of the token endpoint, as given to tokenRouter(). Default: `'/v1/oauth2/token'`. */
  path?: string;
  /**
   * The other OAuth endpoints whose errors have the same shape: the
   * revocation and introspection paths given to tokenRouter(). Default:
   * `['/v1/oauth2/revocations', '/v1/oauth2/introspections']`.
   */
  otherPaths?: readonly string[];
}

const OPTION_NAMES = ['path', 'otherPaths'] as const;

function checkPath(name: string, value: unknown): string {
  const path = checkString(FACTORY, name, value);
  if (!path.startsWith('/')) invalidOption(FACTORY, name, path, "a path starting with '/'");
  return path;
}
const FACTORY = 'tokenEndpointErrors';

/**
 * Every answer of the token endpoint (and of the revocation and
 * introspection endpoints beside it) keeps RFC 6749's shape (§5.2), also
 * the errors raised before tokenRouter() runs: a 413 of the body parsers, a
 * 429 of the rate limiter, a 503 of a store. Mount it BEFORE that shared
 * middleware; on requests to the token path it sets tokenErrorShape() on
 * the response, which errorHandler() applies when it renders the error.
 * Other paths keep `{ "errors": [...] }`.
 */
export function tokenEndpointErrors(options?: Readonly<TokenEndpointErrorsOptions>): RequestHandler {
  const given = readOptions<TokenEndpointErrorsOptions>(FACTORY, options, OPTION_NAMES);
  const paths = new Set([given.path === undefined ? TOKEN_PATH : checkPath('path', given.path)]);
  const otherPaths = given.otherPaths ?? [REVOCATION_PATH, INTROSPECTION_PATH];
  if (!Array.isArray(otherPaths)) invalidOption(FACTORY, 'otherPaths', otherPaths, 'an array of paths');
  for (const [index, other] of otherPaths.entries()) paths.add(checkPath(`otherPaths[${index}]`, other));
  return function tokenEndpointErrorsMiddleware(req: Request, res: Response, next: NextFunction) {
    if (paths.has(req.path)) {
      setErrorShape(res, tokenErrorShape);
      markOAuthEndpoint(res);
      // The first stage of the preset: a sign-in's deadline counts from here, not from the router.
      markArrival(req);
    }
    next();
  };
}
