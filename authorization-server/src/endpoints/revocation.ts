import type { Request, Response } from 'express';
import { AccessTokenVerifier, TokenRejected, writeJsonAnswer } from 'express-api-conventions/extend';
import type { ClientRecord } from 'express-api-conventions/oauth2';
import { tokenError } from '../protocol/token-errors.js';
import { recordRevokedFamily } from '../stores/revoked-family.js';
import { hashRefreshToken } from '../stores/stores.js';
import { publishTokenRevoked } from '../token-events.js';
import { verifierKeys } from '../token-keys.js';
import type { TokenRouterConfiguration } from '../token-options.js';
import { looksLikeJwt, type OAuthRequestReader } from './oauth-request.js';

/** The largest clock tolerance bearerAuth() accepts: a token some instance may still take is revoked too. */
const REVOCATION_CLOCK_TOLERANCE = 300;

/** RFC 7009 §2.2: the answer is 200 whether the token was revoked or was never valid; the body carries nothing. */
const REVOKED_BODY = '{}';

/**
 * The revocation endpoint (RFC 7009): a client revokes a refresh token, and
 * with it its whole family (every token rotated from the same sign-in), or
 * an access token, and with it the family it was issued with (§2.1 lets the
 * server revoke the related grant). The client authenticates exactly as at
 * the token endpoint. An unknown, expired or already revoked token answers
 * 200 (§2.2). A family's access tokens stop at once on every instance that
 * shares `revokedFamilies` with bearerAuth(); without that store access
 * tokens cannot be revoked, and one presented is `unsupported_token_type`
 * (§2.2.1).
 */
export function revocationEndpoint(
  config: TokenRouterConfiguration,
  read: OAuthRequestReader,
): (req: Request, res: Response) => Promise<void> {
  const verifier = new AccessTokenVerifier(verifierKeys(config.keys), config.issuer, config.audience, REVOCATION_CLOCK_TOLERANCE);

  const checkOwner = (issuedTo: string | undefined, client: ClientRecord | undefined) => {
    // RFC 7009 §2.1: the token must have been issued to the client asking.
    if (issuedTo !== client?.id) throw tokenError('unauthorized_client', 'The token was issued to another client.');
  };

  async function revokeAccessToken(req: Request, token: string, client: ClientRecord | undefined): Promise<void> {
    let claims: ReturnType<AccessTokenVerifier['verify']>;
    try {
      claims = verifier.verify(token);
    } catch (error) {
      if (error instanceof TokenRejected) return;
      throw error;
    }
    checkOwner(claims.client_id, client);
    if (config.revokedFamilies === undefined || claims.sid === undefined) {
      throw tokenError('unsupported_token_type', 'This server does not revoke access tokens; revoke the refresh token.');
    }
    await config.refreshTokens.revokeFamily(claims.sid);
    await recordRevokedFamily(config.revokedFamilies, claims.sid, config.accessTokenTtlSeconds);
    const owner = { subject: claims.sub, clientId: claims.client_id };
    publishTokenRevoked(req, owner, 'An access token was revoked, and its token family with it.', claims.jti);
  }

  async function revokeRefreshToken(req: Request, token: string, client: ClientRecord | undefined): Promise<void> {
    const tokenHash = hashRefreshToken(token);
    const family = await config.refreshTokens.find(tokenHash);
    if (family === undefined) return;
    checkOwner(family.clientId, client);
    await config.refreshTokens.revokeByTokenHash(tokenHash);
    await recordRevokedFamily(config.revokedFamilies, family.familyId, config.accessTokenTtlSeconds);
    publishTokenRevoked(req, family, 'A refresh token was revoked, and its token family with it.');
  }

  return async function revoke(req, res) {
    const { params, client } = await read(req, res);
    const token = params.token;
    if (token === undefined) throw tokenError('invalid_request', 'The token parameter is missing.');
    // The hint (§2.1) only saves a lookup; the two kinds of token are told apart by their shape.
    if (looksLikeJwt(token)) await revokeAccessToken(req, token, client);
    else await revokeRefreshToken(req, token, client);
    writeJsonAnswer(res, 200, REVOKED_BODY);
  };
}
