import { tokenError } from '../protocol/token-errors.js';
import type { Grant } from './grant.js';
import { allowedFor, requestedScopes } from './token-response.js';

/**
 * The client credentials grant (RFC 6749 §4.4): a confidential client
 * registered for it, authenticated (§4.4.2: "MUST authenticate"), gets an
 * access token for itself. The token's subject is the client (`sub` is its
 * id), it carries no refresh-token family, and no refresh token is issued
 * (§4.4.3: "A refresh token SHOULD NOT be included"). Its scopes are bounded
 * by the client's registration: the requested ones when all are allowed,
 * else invalid_scope; without `scope`, every scope the client may have.
 */
export const CLIENT_CREDENTIALS_GRANT: Grant = {
  type: 'client_credentials',
  parameters: [],
  clientTypes: ['confidential'],
  clientOptional: false,
  // With no client store there is no client to register for it.
  enabled: (config) => config.clients !== undefined,
  async handle(context, { params, client }) {
    // The router lets no request without an authenticated confidential client reach here.
    if (client === undefined) throw tokenError('invalid_request', 'The client_credentials grant needs client authentication.');
    const requested = requestedScopes(params);
    const allowed = allowedFor(context.config.scopes, client);
    if (requested?.some((scope) => !allowed.has(scope))) throw tokenError('invalid_scope', 'The requested scope is not allowed.');
    return { subject: client.id, clientId: client.id, scopes: requested ?? [...allowed], requested };
  },
};
