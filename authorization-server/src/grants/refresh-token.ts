import type { Request } from 'express';
import type { ClientRecord } from 'express-api-conventions/oauth2';
import type { Params } from '../protocol/params.js';
import { tokenError } from '../protocol/token-errors.js';
import { recordRevokedFamily } from '../stores/revoked-family.js';
import { hashRefreshToken, newRefreshToken, type RefreshFamily } from '../stores/stores.js';
import { noteRefreshRefusal, publishTokenRevoked } from '../token-events.js';
import type { Grant } from './grant.js';
import { deriveAccessTokenId, deriveRefreshToken, describeIssued, readIssued } from './refresh-grace.js';
import { type GrantContext, type Issued, requestedScopes } from './token-response.js';

/**
 * The refresh_token grant (RFC 6749 §6; RFC 9700 §4.14.2): every use
 * rotates the token; an older token of a live family revokes the family,
 * and with `revokedFamilies` its access tokens too. Within the refresh
 * grace, a client that proves itself (see graceFor()) presenting the token
 * rotated last again gets the same new refresh token and the same access
 * token (its answer was lost); the store allows that once per rotation and
 * never for two rotations in a row.
 */
export async function refreshTokenGrant(
  context: GrantContext,
  req: Request,
  params: Params,
  client: ClientRecord | undefined,
  jkt?: string,
): Promise<Issued> {
  const { config } = context;
  const presented = params.refresh_token;
  if (presented === undefined) throw tokenError('invalid_request', 'The refresh_token grant needs refresh_token.');
  const requested = requestedScopes(params);
  const tokenHash = hashRefreshToken(presented);
  const family = await checkedFamily(context, req, tokenHash, client, jkt);
  // RFC 6749 §6: the scope may narrow, never widen.
  if (requested?.some((scope) => !family.scopes.includes(scope))) {
    throw tokenError('invalid_scope', 'The requested scope exceeds the scope originally granted.');
  }
  // With a grace, the successor is derived from the presented token, so a retry derives the same one.
  const key = context.refreshKey;
  const refreshToken = key === undefined ? newRefreshToken() : deriveRefreshToken(key, presented);
  const scopes = requested ?? family.scopes;
  const iat = Math.floor(Date.now() / 1000);
  const outcome = await config.refreshTokens.rotate(
    tokenHash,
    hashRefreshToken(refreshToken),
    Date.now() + config.refreshTokenTtlMs,
    graceFor(config.refreshGraceMs, client, family),
    describeIssued(iat, scopes),
  );
  if (outcome.status === 'reused') {
    await recordRevokedFamily(config.revokedFamilies, outcome.familyId, config.accessTokenTtlSeconds);
    // Token theft or a broken client (RFC 9700 §4.14.2): the family ends, and the refusal is CRITICAL.
    publishTokenRevoked(req, family, 'The token family was revoked: one of its refresh tokens was used again.');
    noteRefreshRefusal(
      req,
      'authn_token_reuse',
      family,
      'A refresh token was used again outside the grace; its family is revoked.',
    );
    throw tokenError('invalid_grant', 'The refresh token was already used; its token family is revoked.');
  }
  if (outcome.status !== 'rotated' && outcome.status !== 'retried') {
    noteRefreshRefusal(req, 'authn_token_invalid', family, 'The refresh token is no longer valid.');
    throw tokenError('invalid_grant', 'The refresh token is not valid.');
  }
  const granted = outcome.family;
  const issued = { subject: granted.subject, clientId: granted.clientId, familyId: granted.familyId, requested, refreshToken };
  if (key === undefined) return { ...issued, scopes };
  // Under a grace, the access token's identity is fixed by the rotation: a retry answers that very token.
  const rotation = outcome.status === 'retried' ? readIssued(outcome.issued) : { iat, scopes };
  const identity = { iat: rotation?.iat ?? iat, jti: deriveAccessTokenId(key, refreshToken) };
  return { ...issued, scopes: rotation?.scopes ?? scopes, identity, graceRetry: outcome.status === 'retried' };
}

/** The live family of `tokenHash`, checked against the client, its DPoP key and its subject. */
async function checkedFamily(
  context: GrantContext,
  req: Request,
  tokenHash: string,
  client: ClientRecord | undefined,
  jkt: string | undefined,
): Promise<RefreshFamily> {
  const { config } = context;
  const family = await config.refreshTokens.find(tokenHash);
  if (!family) {
    noteRefreshRefusal(req, 'authn_token_invalid', undefined, 'The refresh token is unknown, expired or revoked.');
    throw tokenError('invalid_grant', 'The refresh token is not valid.');
  }
  // RFC 6749 §6: a token issued to a client is only refreshed by that client.
  if (family.clientId !== client?.id) {
    // The client named is the one that presented it (noted by the router), not the family's.
    const { subject } = family;
    noteRefreshRefusal(
      req,
      'authn_token_invalid',
      { subject, clientId: undefined },
      'The refresh token was presented by another client.',
    );
    throw tokenError('invalid_grant', 'The refresh token was issued to another client.');
  }
  // RFC 9449 §5: a bound refresh token is refreshed only with a proof of its key.
  if (family.jkt !== undefined && family.jkt !== jkt) {
    throw tokenError('invalid_dpop_proof', 'The refresh token is bound to a DPoP key: send a proof of that key.');
  }
  // The user is gone (deleted, disabled): nothing more is issued in their name, and the family ends.
  if (config.isSubjectActive && !(await config.isSubjectActive(family.subject))) {
    await config.refreshTokens.revokeFamily(family.familyId);
    publishTokenRevoked(req, family, 'The token family was revoked: its user is no longer active.');
    noteRefreshRefusal(req, 'authn_token_invalid', family, 'The refresh token belongs to a user who is no longer active.');
    throw tokenError('invalid_grant', 'The refresh token is not valid.');
  }
  return family;
}

/**
 * The grace this refresh gets: only a client that proves itself beyond
 * holding the token, by its secret (a confidential client, authenticated
 * before any grant) or by a proof of the key its family is bound to (a
 * public client with DPoP). Anyone else rotates strictly: a token stolen
 * from a public client is reuse the moment the victim has refreshed.
 */
export function graceFor(graceMs: number, client: ClientRecord | undefined, family: RefreshFamily): number {
  return client?.secretHash !== undefined || family.jkt !== undefined ? graceMs : 0;
}

/** The refresh_token grant's row of the grant table: any client type, or none (docs/conventions.md rule 13.5). */
export const REFRESH_TOKEN_GRANT: Grant = {
  type: 'refresh_token',
  parameters: ['refresh_token'],
  clientTypes: ['public', 'confidential'],
  clientOptional: true,
  handle: (context, { req, params, client, jkt }) => refreshTokenGrant(context, req, params, client, jkt),
};
