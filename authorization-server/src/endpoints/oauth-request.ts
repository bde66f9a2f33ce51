import type { Request, Response } from 'express';
import { noteSecurityEvent, securityEventsWanted } from 'express-api-conventions/extend';
import type { Params } from '../protocol/params.js';
import type { RegisteredClient } from '../stores/client-registration.js';
import type { TokenRouterConfiguration } from '../token-options.js';
import { clientAuthenticator } from './client-auth.js';
import { checkContentType, definedParameters, formReader, readParams } from './form.js';

/** A form request to an OAuth endpoint, read and its client authenticated. */
export interface OAuthRequest {
  readonly params: Params;
  /** The authenticated client; undefined when none was presented (and none is required). */
  readonly client: RegisteredClient | undefined;
}

export type OAuthRequestReader = (req: Request, res: Response) => Promise<OAuthRequest>;

/**
 * Reads the form (docs/conventions.md rule 13.1: urlencoded, UTF-8, each
 * parameter once) and authenticates the client as the token endpoint does
 * (docs/conventions.md rule 13.5): the revocation and introspection
 * endpoints accept exactly what the token endpoint accepts. The form
 * parameters read are the endpoints' and those of `grantParameters`.
 */
export function oauthRequestReader(config: TokenRouterConfiguration, grantParameters: readonly string[]): OAuthRequestReader {
  const defined = definedParameters(grantParameters);
  const authenticateClient = clientAuthenticator(config.clients, config.requireClient, config.realm);
  const readForm = formReader();
  return async function readOAuthRequest(req, res) {
    checkContentType(req);
    const params = readParams(await readForm(req, res), defined);
    const client = await authenticateClient(req, params);
    // Any refusal from here on is published naming the authenticated client.
    if (client !== undefined && securityEventsWanted()) noteSecurityEvent(req, { clientId: client.id });
    return { params, client };
  };
}

/** A JWS compact serialization has three parts; the opaque refresh tokens have one. */
export const looksLikeJwt = (token: string): boolean => token.split('.', 4).length === 3;
