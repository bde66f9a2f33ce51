import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { writeJsonAnswer } from 'express-api-conventions/extend';
import { stringifyJson } from 'express-api-conventions/json';
import { enabledGrants, GRANTS } from '../grants/index.js';
import type { TokenRouterConfiguration } from '../token-options.js';
import { authorizationServerMetadata } from './metadata.js';

/**
 * GET of the RFC 8414 document. The text is serialized once, at
 * construction: the configuration cannot change while the router runs.
 */
export function metadataEndpoint(config: TokenRouterConfiguration): RequestHandler {
  const text = stringifyJson(
    authorizationServerMetadata({
      issuer: config.issuer,
      tokenPath: config.path,
      revocationPath: config.revocationPath,
      introspectionPath: config.introspectionPath,
      grantTypes: [...enabledGrants(config, GRANTS).keys()],
      confidentialClients: config.clients !== undefined,
      scopes: config.scopes,
      ...(config.jwksPath === undefined ? {} : { jwksPath: config.jwksPath }),
      ...(config.dpop === undefined ? {} : { dpopAlgorithms: config.dpop.verifier.algorithms }),
      ...(config.authorization === undefined ? {} : { authorizationPath: config.authorization.path }),
    }),
  );
  return function authorizationServerMetadataMiddleware(_req: Request, res: Response, _next: NextFunction) {
    writeJsonAnswer(res, 200, text);
  };
}
