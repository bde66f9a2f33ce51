import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { noteSecurityEvent, securityEventsWanted } from 'express-api-conventions/extend';
import type { ClientRecord } from 'express-api-conventions/oauth2';
import type { Params } from '../protocol/params.js';
import { tokenError } from '../protocol/token-errors.js';
import { signInFacts } from '../sign-in/sign-in-guard.js';
import { hashRefreshToken, newRefreshToken } from '../stores/stores.js';
import type { Grant } from './grant.js';
import { allowedFor, type GrantContext, type Issued, requestedScopes } from './token-response.js';

/** Longest username and password read (every byte of the password counts: it is pre-hashed before bcrypt). */
const MAX_USERNAME_LENGTH = 256;
const MAX_PASSWORD_LENGTH = 1024;

/**
 * The password grant (RFC 6749 §4.3; the conventions' "Password grant"): the
 * password is checked by the configuration's passwordSignIn() (sign-in
 * guard first, dummy hash for unknown users), then a new refresh-token
 * family starts.
 */
export async function passwordGrant(
  context: GrantContext,
  req: Request,
  params: Params,
  client: ClientRecord | undefined,
  jkt?: string,
): Promise<Issued> {
  const { config } = context;
  // RFC 9700 §2.4: the service may keep the grant for its own applications only, or turn it off.
  if (config.passwordGrant === 'off') throw tokenError('unsupported_grant_type', 'The password grant is turned off.');
  if (config.passwordGrant !== 'all' && (client === undefined || !config.passwordGrant.has(client.id))) {
    throw tokenError('unauthorized_client', 'This client may not use the password grant.');
  }
  const { username, password } = params;
  if (username === undefined || password === undefined) {
    throw tokenError('invalid_request', 'The password grant needs username and password.');
  }
  if (username.length > MAX_USERNAME_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    throw tokenError('invalid_request', 'The username or password is too long.');
  }
  const requested = requestedScopes(params);
  const allowed = allowedFor(config.scopes, client);
  if (requested?.some((scope) => !allowed.has(scope))) throw tokenError('invalid_scope', 'The requested scope is not allowed.');
  // The device the guard may know (docs/oauth2-choices.md): the proved DPoP key, else the authenticated confidential client.
  const device = jkt !== undefined ? `dpop:${jkt}` : client?.secretHash !== undefined ? `client:${client.id}` : undefined;
  const user = await config.checkPassword(req, username, password, {
    ...(device === undefined ? {} : { device }),
    ...(client === undefined ? {} : { clientId: client.id }),
  });
  // One answer for an unknown user, a wrong password and a user who is gone: no user enumeration.
  if (!user) throw tokenError('invalid_grant', 'The username or password is not correct.');
  if (config.isSubjectActive && !(await config.isSubjectActive(user.subject))) {
    if (securityEventsWanted()) {
      noteSecurityEvent(req, {
        ...signInFacts(username, undefined),
        subject: user.subject,
        event: 'authn_login_fail',
        description: 'Sign-in refused: the user is no longer active.',
      });
    }
    throw tokenError('invalid_grant', 'The username or password is not correct.');
  }
  const userScopes = user.scopes === undefined ? undefined : new Set(user.scopes);
  if (requested && userScopes && requested.some((scope) => !userScopes.has(scope))) {
    throw tokenError('invalid_scope', 'The requested scope is not allowed for this user.');
  }
  const scopes = requested ?? [...allowed].filter((scope) => userScopes === undefined || userScopes.has(scope));
  const refreshToken = newRefreshToken();
  const familyId = randomUUID();
  // RFC 9449 §5: a public client's refresh tokens are bound to the key it proved.
  const bound = jkt !== undefined && client?.secretHash === undefined;
  await config.refreshTokens.create(
    bound
      ? { familyId, subject: user.subject, clientId: client?.id, scopes, jkt }
      : { familyId, subject: user.subject, clientId: client?.id, scopes },
    hashRefreshToken(refreshToken),
    Date.now() + config.refreshTokenTtlMs,
  );
  return { subject: user.subject, clientId: client?.id, familyId, scopes, requested, refreshToken };
}

/** The password grant's row of the grant table: any client type, or none (docs/conventions.md rule 13.5). */
export const PASSWORD_GRANT: Grant = {
  type: 'password',
  parameters: ['username', 'password'],
  clientTypes: ['public', 'confidential'],
  clientOptional: true,
  enabled: (config) => config.passwordGrant !== 'off',
  handle: (context, { req, params, client, jkt }) => passwordGrant(context, req, params, client, jkt),
};
