import express, { type Request, type Response, type Router } from 'express';
import { readOptions } from 'express-api-conventions/extend';
import type { RevokedFamilies, TokenService } from 'express-api-conventions/oauth2';
import type { AuthorizationConfiguration, AuthorizationOptions } from '../authorization-options.js';
import { derivedKey } from '../derived-key.js';
import { AccessTokenSigner } from '../grants/access-token-signer.js';
import { enabledGrants, GRANTS, type Grant, grantParameters } from '../grants/index.js';
import { refreshDerivationKey } from '../grants/refresh-grace.js';
import { type GrantContext, type Issued, sendTokens } from '../grants/token-response.js';
import { invalidClient, tokenError } from '../protocol/token-errors.js';
import { CONSENT_CSRF_INFO } from '../sessions/consent-csrf.js';
import { consentWithdrawal } from '../sessions/consent-withdrawal.js';
import { arrivalMarker } from '../sign-in/request-deadline.js';
import type { RegisteredClient } from '../stores/client-registration.js';
import { recordRevokedFamily } from '../stores/revoked-family.js';
import { hashRefreshToken, type RefreshTokenStore } from '../stores/stores.js';
import { publishTokenCreated } from '../token-events.js';
import {
  MAX_ACCESS_TOKEN_TTL,
  readTokenRouterOptions,
  TOKEN_ROUTER_HINTS,
  type TokenRouterConfiguration,
  type TokenRouterOptions,
} from '../token-options.js';
import { type AuthorizationHelpers, mountAuthorization } from './authorization-endpoint.js';
import { basicChallenge } from './client-auth.js';
import { type TokenEndpoints, tokenServiceDocumentPart } from './document-part.js';
import { releaseTokenEndpointProof, reserveTokenEndpointProof, tokenEndpointProof } from './dpop-token-endpoint.js';
import { oauthEndpoint } from './endpoint.js';
import { introspectionEndpoint } from './introspection.js';
import { jwksEndpoint } from './jwks-endpoint.js';
import { metadataEndpoint } from './metadata-endpoint.js';
import { type OAuthRequestReader, oauthRequestReader } from './oauth-request.js';
import { revocationEndpoint } from './revocation.js';
import { tokenEndpointErrors } from './token-endpoint-errors.js';

export { TOKEN_TYPE } from '../grants/token-response.js';
export {
  DEFAULT_ACCESS_TOKEN_TTL,
  DEFAULT_REFRESH_TOKEN_TTL,
  INTROSPECTION_PATH,
  REVOCATION_PATH,
  TOKEN_PATH,
  type TokenRouterConfiguration,
  type TokenRouterOptions,
} from '../token-options.js';
export { TOKEN_REQUEST_TYPE } from './form.js';

/**
 * The token endpoint (the conventions' "Token endpoint" and "Authentication"; RFC
 * 6749 §4.3 and §6; RFC 9700): `app.use(tokenRouter({ keys, issuer,
 * audience, users, clients }))`. Answers the grants of the grant table
 * (grants/index.ts) that the configuration turns on, each for the clients
 * registered for it, with JWT access tokens and rotating opaque refresh tokens, bound to a
 * DPoP key when the request proves one (dpop-token-endpoint.ts). Beside it,
 * each unless turned off: RFC 7009 revocation (revocation.ts), RFC 7662
 * introspection (introspection.ts) and the RFC 8414 metadata
 * (metadata-endpoint.ts). Every error is an RFC 6749 §5.2 JSON body
 * (endpoint.ts): refuse() hands it to errorHandler() when one is mounted,
 * else writes it here (the endpoints work alone).
 *
 * The router carries its endpoints, its part of the OpenAPI document and
 * tokenEndpointErrors() configured for their paths: given to conventions()
 * as `tokenRouter`, the preset puts that error stage first and the router
 * last, and withConventions() adds the part.
 */
export function tokenRouter(
  options: Readonly<TokenRouterOptions & { authorization: AuthorizationOptions }>,
): TokenRouter & { readonly authorization: AuthorizationHelpers };
export function tokenRouter(options: Readonly<TokenRouterOptions>): TokenRouter;
export function tokenRouter(options: Readonly<TokenRouterOptions>): TokenRouter {
  const config = readTokenRouterOptions(options);
  const read = oauthRequestReader(config, grantParameters(GRANTS));
  const router = express.Router();
  // The request's arrival, for the password grant's deadline (request-deadline.ts).
  router.post(config.path, arrivalMarker, oauthEndpoint(tokenEndpoint(config, read)));
  if (config.revocationPath !== undefined) router.post(config.revocationPath, oauthEndpoint(revocationEndpoint(config, read)));
  if (config.introspectionPath !== undefined) {
    router.post(config.introspectionPath, oauthEndpoint(introspectionEndpoint(config, read)));
  }
  if (config.metadataPath !== undefined) router.get(config.metadataPath, metadataEndpoint(config));
  if (config.jwksPath !== undefined) router.get(config.jwksPath, jwksEndpoint(config.keys));
  const authorization =
    config.authorization === undefined ? undefined : mountAuthorizationEndpoint(router, config, config.authorization);
  const endpoints: TokenEndpoints = {
    token: config.path,
    revocation: config.revocationPath,
    introspection: config.introspectionPath,
    metadata: config.metadataPath,
    dpop: config.dpop !== undefined,
  };
  const otherPaths = [config.revocationPath, config.introspectionPath].filter((path) => path !== undefined);
  return Object.defineProperties(router as TokenRouter, {
    endpoints: { value: Object.freeze(endpoints), enumerable: true },
    documentPart: { value: tokenServiceDocumentPart(endpoints), enumerable: true },
    tokenEndpointErrors: { value: tokenEndpointErrors({ path: config.path, otherPaths }), enumerable: true },
    authorization: { value: authorization, enumerable: true },
  });
}

/** What every grant signs and derives with: the access-token signer and, when the grace is on, the refresh derivation key. */
function grantContext(config: TokenRouterConfiguration): GrantContext {
  return {
    config,
    signer: new AccessTokenSigner(config.keys, config.issuer, config.audience, config.accessTokenTtlSeconds),
    // Derived from what no rotation changes (token-keys.ts), so a retried refresh keeps its answer across one.
    ...(config.refreshGraceMs > 0 ? { refreshKey: refreshDerivationKey(config.keys.derivationKey) } : {}),
  };
}

/**
 * The token endpoint's handler: reads the request, picks the grant, checks
 * the client may use it and the DPoP proof, runs the grant and sends the
 * tokens (RFC 6749 §5.1).
 */
function tokenEndpoint(
  config: TokenRouterConfiguration,
  read: OAuthRequestReader,
): (req: Request, res: Response) => Promise<void> {
  const context = grantContext(config);
  const grants = enabledGrants(config, GRANTS);
  const challenge = basicChallenge(config.realm);
  return async function handle(req: Request, res: Response): Promise<void> {
    const { params, client } = await read(req, res);
    const grantType = params.grant_type;
    if (grantType === undefined) throw tokenError('invalid_request', 'The grant_type parameter is missing.');
    const grant = grants.get(grantType);
    if (grant === undefined) {
      throw tokenError(
        'unsupported_grant_type',
        GRANTS.some((row) => row.type === grantType)
          ? `The ${grantType} grant is turned off.`
          : 'The grant type is not supported; grant_types_supported in the server metadata lists those that are.',
      );
    }
    checkClientMayUse(grant, client, challenge);
    // RFC 9449 §5: the proof is checked and its jti reserved before the grant has any effect, so a replay
    // changes nothing; a refused grant gives the jti back.
    const proof = tokenEndpointProof(config, req, res);
    const jkt = proof?.jkt;
    if (proof !== undefined) await reserveTokenEndpointProof(config, req, proof);
    let issued: Issued;
    try {
      issued = await grant.handle(context, { req, params, client, jkt });
    } catch (error) {
      if (proof !== undefined) await releaseTokenEndpointProof(config, proof);
      throw error;
    }
    sendTokens(res, context, jkt === undefined ? issued : { ...issued, jkt }, (accessToken) =>
      publishTokenCreated(req, {
        subject: issued.subject,
        clientId: issued.clientId,
        accessToken,
        grantType,
        graceRetry: issued.graceRetry === true,
      }),
    );
  };
}

/** The authorization endpoint and consent decision on `router`, with the consent CSRF key derived from the signing key. */
function mountAuthorizationEndpoint(
  router: Router,
  config: TokenRouterConfiguration,
  authorization: AuthorizationConfiguration,
): AuthorizationHelpers {
  return mountAuthorization(router, {
    config: authorization,
    clients: config.clients,
    scopes: config.scopes,
    dpop: config.dpop !== undefined,
    issuer: config.issuer,
    csrfKey: derivedKey(config.keys.derivationKey, CONSENT_CSRF_INFO),
    withdrawConsent: consentWithdrawal({ ...config, consents: authorization.consents }),
  });
}

/**
 * A grant answers the clients registered for it (RFC 6749 §4: "unauthorized_client"
 * otherwise), of a type it serves; one that needs client authentication
 * refuses a request without it as RFC 6749 §5.2 says: invalid_client, 401
 * with the Basic challenge.
 */
function checkClientMayUse(grant: Grant, client: RegisteredClient | undefined, challenge: string): void {
  if (client === undefined) {
    if (!grant.clientOptional) throw invalidClient(`The ${grant.type} grant needs client authentication.`, challenge);
    return;
  }
  if (!client.grants.includes(grant.type) || !grant.clientTypes.includes(client.type)) {
    throw tokenError('unauthorized_client', `This client may not use the ${grant.type} grant.`);
  }
}

/**
 * The router tokenRouter() returns: mount it with `app.use()`, or give it
 * to conventions() as `tokenRouter`.
 */
export type TokenRouter = Router &
  TokenService & {
    /** What the router answers where (withConventions() reads its document part, made from these). */
    readonly endpoints: TokenEndpoints;
    /** The helpers of the application's sign-in and consent pages, when the `authorization` option is on. */
    readonly authorization: AuthorizationHelpers | undefined;
  };

/** Options of revokeRefreshToken(). */
export interface RevokeRefreshTokenOptions {
  /**
   * Where the family's revocation is recorded, so that bearerAuth() given
   * the same store refuses its access tokens at once. Default: none (the
   * access tokens live to their expiry).
   */
  revokedFamilies?: RevokedFamilies;
  /** The access-token lifetime the token router issues with, in seconds. Default: 86400 (the longest allowed). */
  accessTokenTtlSeconds?: number;
}

const REVOKE_OPTION_NAMES = ['revokedFamilies', 'accessTokenTtlSeconds'] as const;

/**
 * Logout: revokes the whole family of a refresh token (RFC 7009's effect),
 * so neither it nor any token rotated from it works again; with
 * `revokedFamilies`, the family's access tokens stop working too.
 * Resolves to false when the token belongs to no live family.
 */
export async function revokeRefreshToken(
  store: RefreshTokenStore,
  refreshToken: string,
  options: Readonly<RevokeRefreshTokenOptions> = {},
): Promise<boolean> {
  const given = readOptions<RevokeRefreshTokenOptions>('revokeRefreshToken', options, REVOKE_OPTION_NAMES, {
    accessTokenTtl: TOKEN_ROUTER_HINTS.accessTokenTtl,
  });
  const tokenHash = hashRefreshToken(refreshToken);
  const family = given.revokedFamilies ? await store.find(tokenHash) : undefined;
  const revoked = await store.revokeByTokenHash(tokenHash);
  if (family) {
    await recordRevokedFamily(given.revokedFamilies, family.familyId, given.accessTokenTtlSeconds ?? MAX_ACCESS_TOKEN_TTL);
  }
  return revoked;
}
