import type { Request, Response } from 'express';
import { writeJsonAnswer } from '../http/json-writer.js';
import { stringifyJson } from '../http/serialize.js';
import { type AccessTokenClaims, AccessTokenVerifier, TokenRejected } from './access-tokens.js';
import { basicChallenge } from './client-auth.js';
import { DPOP_TOKEN_TYPE } from './dpop.js';
import { TOKEN_TYPE } from './grants/token-response.js';
import { looksLikeJwt, type OAuthRequestReader } from './oauth-request.js';
import { hashRefreshToken } from './stores.js';
import { invalidClient, tokenError } from './token-errors.js';
import type { TokenRouterConfiguration } from './token-options.js';

/** RFC 7662 §2.2: all a caller learns of a token that is not active. */
const INACTIVE_BODY = '{"active":false}';

/** RFC 7662 §2.2's members for an active access token. */
function describeAccessToken(claims: AccessTokenClaims): Record<string, unknown> {
  const body: Record<string, unknown> = { active: true };
  if (claims.scope !== undefined) body.scope = claims.scope;
  if (claims.client_id !== undefined) body.client_id = claims.client_id;
  // RFC 9449 §6.2: a bound token is introspected as DPoP, with its key thumbprint.
  body.token_type = claims.cnf === undefined ? TOKEN_TYPE : DPOP_TOKEN_TYPE;
  if (claims.cnf !== undefined) body.cnf = { jkt: claims.cnf.jkt };
  body.exp = claims.exp;
  body.iat = claims.iat;
  body.sub = claims.sub;
  body.aud = claims.aud;
  body.iss = claims.iss;
  body.jti = claims.jti;
  return body;
}

/**
 * The introspection endpoint (RFC 7662), for resource servers that do not
 * verify the JWTs themselves. Only a client that authenticates with its
 * secret may ask (§2.1; a public client proves nothing): others get 401
 * `invalid_client`. A token that is revoked, expired, unknown, malformed or
 * a rotated-out refresh token is `{ "active": false }` and nothing more
 * (§2.2). Expiry is checked with no clock tolerance.
 */
export function introspectionEndpoint(
  config: TokenRouterConfiguration,
  read: OAuthRequestReader,
): (req: Request, res: Response) => Promise<void> {
  const verifier = new AccessTokenVerifier(config.keys, config.issuer, config.audience, 0);
  const challenge = basicChallenge(config.realm);

  function accessToken(token: string): Record<string, unknown> | undefined {
    let claims: AccessTokenClaims;
    try {
      claims = verifier.verify(token);
    } catch (error) {
      if (error instanceof TokenRejected) return undefined;
      throw error;
    }
    if (claims.sid !== undefined && config.revokedFamilies?.isRevoked(claims.sid) === true) return undefined;
    return describeAccessToken(claims);
  }

  async function refreshToken(token: string): Promise<Record<string, unknown> | undefined> {
    const family = await config.refreshTokens.find(hashRefreshToken(token));
    // Only the family's current token refreshes; a rotated one is spent.
    if (family === undefined || family.current !== true) return undefined;
    const body: Record<string, unknown> = { active: true };
    if (family.scopes.length > 0) body.scope = family.scopes.join(' ');
    if (family.clientId !== undefined) body.client_id = family.clientId;
    body.sub = family.subject;
    return body;
  }

  return async function introspect(req, res) {
    const { params, client } = await read(req, res);
    if (client === undefined || client.secretHash === undefined) {
      throw invalidClient('Introspection needs client authentication with a client secret.', challenge);
    }
    const token = params.token;
    if (token === undefined) throw tokenError('invalid_request', 'The token parameter is missing.');
    const answer = looksLikeJwt(token) ? accessToken(token) : await refreshToken(token);
    writeJsonAnswer(res, 200, answer === undefined ? INACTIVE_BODY : stringifyJson(answer));
  };
}
