import type { Params } from '../client-auth.js';
import { deriveRefreshToken } from '../refresh-grace.js';
import type { RevokedFamilies } from '../revoked-families.js';
import { type ClientRecord, hashRefreshToken, newRefreshToken } from '../stores.js';
import { tokenError } from '../token-errors.js';
import { type GrantContext, type Issued, requestedScopes } from './token-response.js';

/** Seconds added to an access token's lifetime when its family is revoked: bearerAuth()'s clock tolerance at most. */
const REVOCATION_MARGIN_SECONDS = 300;

/**
 * Records a revoked family in `revokedFamilies` for as long as one of its
 * access tokens can live: `ttlSeconds` from now, plus the largest clock
 * tolerance bearerAuth() accepts.
 */
export function recordRevokedFamily(
  revokedFamilies: RevokedFamilies | undefined,
  familyId: string,
  ttlSeconds: number,
): Promise<void> {
  if (!revokedFamilies) return Promise.resolve();
  return revokedFamilies.revoke(familyId, Date.now() + (ttlSeconds + REVOCATION_MARGIN_SECONDS) * 1000);
}

/**
 * The refresh_token grant (RFC 6749 §6; RFC 9700 §4.14.2): every use
 * rotates the token; an older token of a live family revokes the family,
 * and with `revokedFamilies` its access tokens too. Within the refresh
 * grace, the token rotated last presented again answers the same new
 * refresh token (its answer was lost) with a newly signed access token.
 */
export async function refreshTokenGrant(
  context: GrantContext,
  params: Params,
  client: ClientRecord | undefined,
  jkt?: string,
): Promise<Issued> {
  const { config } = context;
  const presented = params.refresh_token;
  if (presented === undefined) throw tokenError('invalid_request', 'The refresh_token grant needs refresh_token.');
  const requested = requestedScopes(params);
  const tokenHash = hashRefreshToken(presented);
  const family = await config.refreshTokens.find(tokenHash);
  if (!family) throw tokenError('invalid_grant', 'The refresh token is not valid.');
  // RFC 6749 §6: a token issued to a client is only refreshed by that client.
  if (family.clientId !== client?.id) throw tokenError('invalid_grant', 'The refresh token was issued to another client.');
  // RFC 9449 §5: a bound refresh token is refreshed only with a proof of its key.
  if (family.jkt !== undefined && family.jkt !== jkt) {
    throw tokenError('invalid_dpop_proof', 'The refresh token is bound to a DPoP key: send a proof of that key.');
  }
  // The user is gone (deleted, disabled): nothing more is issued in their name, and the family ends.
  if (config.isSubjectActive && !(await config.isSubjectActive(family.subject))) {
    await config.refreshTokens.revokeFamily(family.familyId);
    throw tokenError('invalid_grant', 'The refresh token is not valid.');
  }
  // RFC 6749 §6: the scope may narrow, never widen.
  if (requested?.some((scope) => !family.scopes.includes(scope))) {
    throw tokenError('invalid_scope', 'The requested scope exceeds the scope originally granted.');
  }
  // With a grace, the successor is derived from the presented token, so a retry derives the same one.
  const refreshToken = context.refreshKey === undefined ? newRefreshToken() : deriveRefreshToken(context.refreshKey, presented);
  const outcome = await config.refreshTokens.rotate(
    tokenHash,
    hashRefreshToken(refreshToken),
    Date.now() + config.refreshTokenTtlMs,
    config.refreshGraceMs,
  );
  if (outcome.status === 'reused') {
    await recordRevokedFamily(config.revokedFamilies, outcome.familyId, config.accessTokenTtlSeconds);
    throw tokenError('invalid_grant', 'The refresh token was already used; its token family is revoked.');
  }
  if (outcome.status !== 'rotated' && outcome.status !== 'retried') {
    throw tokenError('invalid_grant', 'The refresh token is not valid.');
  }
  const granted = outcome.family;
  return {
    subject: granted.subject,
    clientId: granted.clientId,
    familyId: granted.familyId,
    scopes: requested ?? granted.scopes,
    requested,
    refreshToken,
  };
}
