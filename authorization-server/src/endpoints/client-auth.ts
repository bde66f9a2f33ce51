import type { Request } from 'express';
import type { ApiError } from 'express-api-conventions/errors';
import {
  clientSecretMatches,
  noteSecurityEvent,
  parseBasicCredentials,
  securityEventsWanted,
} from 'express-api-conventions/extend';
import type { ClientStore } from 'express-api-conventions/oauth2';
import type { Params } from '../protocol/params.js';
import { invalidClient, tokenError } from '../protocol/token-errors.js';
import { type RegisteredClient, registeredClient } from '../stores/client-registration.js';

/** The `WWW-Authenticate` challenge of a client refused at an OAuth endpoint (RFC 7617). */
export const basicChallenge = (realm: string): string => `Basic realm="${realm}", charset="UTF-8"`;

/**
 * RFC 6749 §5.2, one rule at every OAuth endpoint: a client refused is
 * `invalid_client`, 401 with the Basic challenge when it used the
 * Authorization header or sent nothing, 400 without one when it sent its
 * credentials in the body (a challenge would ask for the header it did not use).
 */
export function refuseClient(description: string, header: string | undefined, params: Params, challenge: string): ApiError {
  return invalidClient(description, header === undefined && hasBodyCredentials(params) ? undefined : challenge);
}

const hasBodyCredentials = (params: Params): boolean => params.client_id !== undefined || params.client_secret !== undefined;

/**
 * Client authentication at the token endpoint (the conventions' "Client
 * authentication"; RFC 6749 §2.3.1): optional; the Basic header or
 * `client_id`/`client_secret` in the body, never both. Resolves to the
 * authenticated client, or undefined when none was presented (and none is
 * required).
 */
export function clientAuthenticator(
  clients: ClientStore | undefined,
  requireClient: boolean,
  realm: string,
): (req: Request, params: Params) => Promise<RegisteredClient | undefined> {
  const challenge = basicChallenge(realm);

  return async function authenticateClient(req, params) {
    const header = req.headers.authorization;
    const inBody = hasBodyCredentials(params);
    if (header !== undefined && inBody) {
      throw tokenError(
        'invalid_request',
        'Use one client authentication method: the Authorization header or the body, not both.',
      );
    }
    let presented: { id: string; secret: string | undefined } | undefined;
    if (header !== undefined) {
      presented = parseBasicCredentials(header);
      // RFC 6749 §5.2: a failed or unsupported client authentication is invalid_client.
      if (!presented) throw invalidClient('The Authorization header is not valid Basic client authentication.', challenge);
    } else if (inBody) {
      if (params.client_id === undefined) throw tokenError('invalid_request', 'client_secret was sent without client_id.');
      presented = { id: params.client_id, secret: params.client_secret };
    }
    if (!presented) {
      // Nothing presented: the challenge says how to authenticate (RFC 6749 §5.2 allows the 401 here).
      if (requireClient) throw invalidClient('Client authentication is required.', challenge);
      return undefined;
    }
    const found = await clients?.findById(presented.id);
    // A record of an application's own ClientStore, or one written before registrations had a type and grants.
    const client = found === undefined ? undefined : registeredClient(found);
    // Compared even when the client is unknown or public, so the time taken says nothing.
    const secretOk = clientSecretMatches(presented.secret ?? '', client?.secretHash);
    // A public client (no secret registered) is identified by its id and sends no secret.
    const authenticated = client !== undefined && (client.secretHash === undefined ? !presented.secret : secretOk);
    // The refusal's event names the client id tried as claimed only (anyone can send a real client's id),
    // a blocked client's as verified; the secret never.
    if ((!authenticated || client.blocked) && securityEventsWanted())
      noteSecurityEvent(req, authenticated ? { clientId: client.id } : { claimedClientId: presented.id });
    if (!authenticated) throw refuseClient('Client authentication failed.', header, params, challenge);
    if (client.blocked) throw tokenError('unauthorized_client', 'This client is not allowed to use the token endpoint.');
    return client;
  };
}
