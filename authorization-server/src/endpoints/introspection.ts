import type { Request, Response } from 'express';
import { AccessTokenVerifier, DPOP_TOKEN_TYPE, TokenRejected, writeJsonAnswer } from 'express-api-conventions/extend';
import { stringifyJson } from 'express-api-conventions/json';
import type { AccessTokenClaims, ClientRecord } from 'express-api-conventions/oauth2';
import { TOKEN_TYPE } from '../grants/token-response.js';
import type { IntrospectionRight } from '../protocol/introspectors.js';
import type { Params } from '../protocol/params.js';
import { tokenError } from '../protocol/token-errors.js';
import { hashRefreshToken } from '../stores/stores.js';
import { verifierKeys } from '../token-keys.js';
import type { TokenRouterConfiguration } from '../token-options.js';
import { basicChallenge, refuseClient } from './client-auth.js';
import { looksLikeJwt, type OAuthRequestReader } from './oauth-request.js';

/** RFC 7662 §2.2: all a caller learns of a token that is not active, or that it may not see. */
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

/** A client introspecting: who it is and what it may see. */
interface Introspector {
  readonly id: string;
  readonly right: IntrospectionRight;
}

/**
 * The introspection endpoint (RFC 7662), for resource servers that do not
 * verify the JWTs themselves. Only a client named in `introspectors` that
 * authenticates with its secret may ask (§2.1; a public client proves
 * nothing): a failed authentication is `invalid_client` (401 with a
 * challenge for the header or none, 400 for body credentials, as at the token
 * endpoint), a client not named `unauthorized_client`. A token that is
 * revoked, expired, unknown, malformed, rotated out, of a user
 * `isSubjectActive` denies, or that the caller may not see is
 * `{ "active": false }` and nothing more (§2.2, §4). Expiry is checked with
 * no clock tolerance.
 */
export function introspectionEndpoint(
  config: TokenRouterConfiguration,
  read: OAuthRequestReader,
): (req: Request, res: Response) => Promise<void> {
  const verifier = new AccessTokenVerifier(verifierKeys(config.keys), config.issuer, config.audience, 0);
  const challenge = basicChallenge(config.realm);
  // An access token's claims go with its subject: a client credentials token names a client, not a user.
  const subjectActive = async (subject: string, claims?: AccessTokenClaims) =>
    config.isSubjectActive === undefined || (await config.isSubjectActive(subject, claims));

  async function accessToken(token: string, caller: Introspector): Promise<Record<string, unknown> | undefined> {
    let claims: AccessTokenClaims;
    try {
      claims = verifier.verify(token);
    } catch (error) {
      if (error instanceof TokenRejected) return undefined;
      throw error;
    }
    if (caller.right !== 'resource-server' && claims.client_id !== caller.id) return undefined;
    if (claims.sid !== undefined && config.revokedFamilies?.isRevoked(claims.sid) === true) return undefined;
    if (!(await subjectActive(claims.sub, claims))) return undefined;
    return describeAccessToken(claims);
  }

  async function refreshToken(token: string, caller: Introspector): Promise<Record<string, unknown> | undefined> {
    const family = await config.refreshTokens.find(hashRefreshToken(token));
    // Only the family's current token refreshes; a rotated one is spent. Only its own client may know either.
    if (family === undefined || family.current !== true || family.clientId !== caller.id) return undefined;
    if (!(await subjectActive(family.subject))) return undefined;
    const body: Record<string, unknown> = { active: true };
    if (family.scopes.length > 0) body.scope = family.scopes.join(' ');
    body.client_id = family.clientId;
    body.sub = family.subject;
    return body;
  }

  function introspector(req: Request, params: Params, client: ClientRecord | undefined): Introspector {
    if (client === undefined || client.secretHash === undefined) {
      const description = 'Introspection needs client authentication with a client secret.';
      throw refuseClient(description, req.headers.authorization, params, challenge);
    }
    const right = config.introspectors.get(client.id);
    if (right === undefined) throw tokenError('unauthorized_client', 'This client may not introspect tokens.');
    return { id: client.id, right };
  }

  return async function introspect(req, res) {
    const { params, client } = await read(req, res);
    const caller = introspector(req, params, client);
    const token = params.token;
    if (token === undefined) throw tokenError('invalid_request', 'The token parameter is missing.');
    const answer = looksLikeJwt(token) ? await accessToken(token, caller) : await refreshToken(token, caller);
    writeJsonAnswer(res, 200, answer === undefined ? INACTIVE_BODY : stringifyJson(answer));
  };
}
