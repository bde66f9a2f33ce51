import type { Request } from 'express';
import { noteCodeReplay } from '../authorization-events.js';
import type { AuthorizationConfiguration } from '../authorization-options.js';
import type { Params } from '../protocol/params.js';
import { tokenError } from '../protocol/token-errors.js';
import type { RegisteredClient } from '../stores/client-registration.js';
import { type CodeGrant, hashAuthorizationCode } from '../stores/code-store.js';
import { consentCovers } from '../stores/consent-store.js';
import { recordRevokedFamily } from '../stores/revoked-family.js';
import { hashRefreshToken, newRefreshToken } from '../stores/stores.js';
import { publishTokenRevoked } from '../token-events.js';
import type { Grant, GrantRequest } from './grant.js';
import { verifierMatches } from './pkce.js';
import type { GrantContext, Issued } from './token-response.js';

/**
 * The authorization code grant (RFC 6749 §4.1.3, RFC 7636 §4.5, RFC 9700
 * §4.5): the code is redeemed once, by the client it was issued to, with
 * the redirect URI of its request and the PKCE verifier of its challenge; a
 * code presented again is refused and what it issued is revoked. The tokens
 * start a refresh-token family that rotates as every other.
 */

/** The code's refresh family ends, and with `revokedFamilies` its access tokens too (RFC 6749 §4.1.2). */
async function revokeReplayed(context: GrantContext, req: Request, grant: CodeGrant): Promise<never> {
  const { config } = context;
  await config.refreshTokens.revokeFamily(grant.familyId);
  await recordRevokedFamily(config.revokedFamilies, grant.familyId, config.accessTokenTtlSeconds);
  const facts = { subject: grant.subject, clientId: grant.clientId, scopes: grant.scopes };
  publishTokenRevoked(req, facts, 'The token family was revoked: its authorization code was presented again.');
  noteCodeReplay(req, facts);
  throw tokenError('invalid_grant', 'The authorization code was already used; the tokens it issued are revoked.');
}

/** The grant's checks of what the token request says against what the code was bound to. */
function checkBinding(grant: CodeGrant, params: Params, client: RegisteredClient, jkt: string | undefined): void {
  // RFC 6749 §4.1.3: the code was issued to this client, for this redirect URI.
  if (grant.clientId !== client.id) throw tokenError('invalid_grant', 'The authorization code was issued to another client.');
  if (params.redirect_uri !== grant.redirectUri) {
    throw tokenError('invalid_grant', 'redirect_uri differs from the one of the authorization request.');
  }
  // RFC 7636 §4.6: the verifier's S256 must be the challenge.
  if (!verifierMatches(params.code_verifier as string, grant.codeChallenge)) {
    throw tokenError('invalid_grant', 'The code_verifier does not match the code_challenge.');
  }
  // RFC 9449 §10: a code bound by dpop_jkt is redeemed only with a proof of that key.
  if (grant.jkt !== undefined && grant.jkt !== jkt) {
    throw tokenError('invalid_dpop_proof', 'The authorization code is bound to a DPoP key (dpop_jkt): send a proof of that key.');
  }
}

/**
 * After its family is stored: a third-party client's code is refused when the
 * user withdrew the consent it was issued under. The withdrawal removes the
 * consent before it revokes the client's families (sessions/consent-withdrawal.ts),
 * so a family stored too late for it to find is revoked here.
 */
async function refuseWithoutConsent(context: GrantContext, grant: CodeGrant, client: RegisteredClient): Promise<void> {
  if (client.firstParty === true) return;
  const { consents } = context.config.authorization as AuthorizationConfiguration;
  if (consentCovers(await consents.find(grant.subject, client.id), grant.scopes)) return;
  await context.config.refreshTokens.revokeFamily(grant.familyId);
  throw tokenError('invalid_grant', 'The user withdrew the consent this authorization code was issued under.');
}

async function authorizationCodeGrant(context: GrantContext, { req, params, client, jkt }: GrantRequest): Promise<Issued> {
  const { config } = context;
  const codes = (config.authorization as AuthorizationConfiguration).codes;
  const { code } = params;
  if (code === undefined || params.redirect_uri === undefined || params.code_verifier === undefined) {
    throw tokenError('invalid_request', 'The authorization_code grant needs code, redirect_uri and code_verifier.');
  }
  // RFC 6749 §4.1.3: a public client names itself (client_id); a confidential one authenticated before any grant.
  if (client === undefined) throw tokenError('invalid_request', 'The authorization_code grant needs client_id.');
  const codeHash = hashAuthorizationCode(code);
  const outcome = await codes.redeem(codeHash);
  if (outcome.status === 'replayed') return revokeReplayed(context, req, outcome.grant);
  if (outcome.status !== 'redeemed') throw tokenError('invalid_grant', 'The authorization code is not valid or has expired.');
  const { grant } = outcome;
  checkBinding(grant, params, client, jkt);
  if (config.isSubjectActive && !(await config.isSubjectActive(grant.subject))) {
    throw tokenError('invalid_grant', 'The authorization code is not valid or has expired.');
  }
  const refreshToken = newRefreshToken();
  // RFC 9449 §5: a public client's refresh tokens are bound to the key it proved.
  const bound = jkt !== undefined && client.secretHash === undefined;
  const family = { familyId: grant.familyId, subject: grant.subject, clientId: client.id, scopes: grant.scopes };
  await config.refreshTokens.create(
    bound ? { ...family, jkt } : family,
    hashRefreshToken(refreshToken),
    Date.now() + config.refreshTokenTtlMs,
  );
  // A replay that came while the family did not exist yet could not revoke it: this answer does, and is refused.
  if (await codes.wasReplayed(codeHash)) return revokeReplayed(context, req, grant);
  await refuseWithoutConsent(context, grant, client);
  return { ...family, requested: grant.requested, refreshToken };
}

/** The grant table's row: on when the router has its authorization endpoint (the `authorization` option). */
export const AUTHORIZATION_CODE_GRANT: Grant = {
  type: 'authorization_code',
  // RFC 6749 §4.1.3 and RFC 7636 §4.5.
  parameters: ['code', 'redirect_uri', 'code_verifier'],
  clientTypes: ['public', 'confidential'],
  // RFC 6749 §4.1.3: the client authenticates, or a public one names itself with client_id.
  clientOptional: false,
  enabled: (config) => config.authorization !== undefined,
  handle: authorizationCodeGrant,
};
