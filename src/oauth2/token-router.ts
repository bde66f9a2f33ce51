import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { readOptions } from '../config/options.js';
import { isApiError } from '../errors/api-error.js';
import { setErrorShape } from '../errors/error-shape.js';
import { refuse } from '../errors/refuse.js';
import { isStoreFailure, storeUnavailable } from '../errors/store-unavailable.js';
import { AccessTokenSigner } from './access-tokens.js';
import { clientAuthenticator, type Params } from './client-auth.js';
import { passwordGrant } from './grants/password.js';
import { recordRevokedFamily, refreshTokenGrant } from './grants/refresh-token.js';
import { type GrantContext, sendTokens } from './grants/token-response.js';
import type { RevokedFamilies } from './revoked-families.js';
import { GRANT_TYPES, type GrantType, hashRefreshToken, type RefreshTokenStore } from './stores.js';
import { SERVER_ERROR_DESCRIPTION, TOKEN_CACHE_CONTROL, tokenError, tokenErrorShape } from './token-errors.js';
import { MAX_ACCESS_TOKEN_TTL, readTokenRouterOptions, TOKEN_ROUTER_HINTS, type TokenRouterOptions } from './token-options.js';

export { TOKEN_TYPE } from './grants/token-response.js';
export {
  DEFAULT_ACCESS_TOKEN_TTL,
  DEFAULT_REFRESH_TOKEN_TTL,
  TOKEN_PATH,
  type TokenRouterConfiguration,
  type TokenRouterOptions,
} from './token-options.js';

/** The conventions' "Token endpoint": "Request content type `application/x-www-form-urlencoded`, UTF-8". */
export const TOKEN_REQUEST_TYPE = 'application/x-www-form-urlencoded';

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

/** The form's parameters; a repeated or non-text one is invalid_request (RFC 6749 §3.2). */
function readParams(body: unknown): Params {
  if (typeof body !== 'object' || body === null) return {};
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    // RFC 6749 §3.2: "Request and response parameters MUST NOT be included more than once."
    if (typeof value !== 'string') throw tokenError('invalid_request', `The parameter ${name} is repeated or malformed.`);
    // RFC 6749 §3.1: parameters sent without a value are treated as omitted.
    if (value !== '') params[name] = value;
  }
  return params;
}

/** The request's media type and charset, as the conventions' "Token endpoint" fixes them. */
function checkContentType(req: Request): void {
  const contentType = req.headers['content-type'];
  if (contentType === undefined || !req.is(TOKEN_REQUEST_TYPE)) {
    throw tokenError('invalid_request', `The request body must be ${TOKEN_REQUEST_TYPE}.`);
  }
  const charset = CHARSET.exec(contentType)?.[1];
  if (charset !== undefined && charset.toLowerCase() !== 'utf-8') {
    throw tokenError('invalid_request', 'The request body must be encoded in UTF-8.');
  }
}

/**
 * The form body. A body parser that ran before (conventions()'s parsers)
 * has consumed the request stream (`readableEnded`), and its result is in
 * `req.body`; otherwise the stream is unread and the router's own bounded
 * parser (Express's urlencoded) reads it. No private field of body-parser
 * is looked at.
 */
function formReader(): (req: Request, res: Response) => Promise<unknown> {
  const parseForm = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 16, type: () => true });
  return function readForm(req, res) {
    if (req.readableEnded) {
      const body: unknown = req.body;
      if (typeof body === 'object' && body !== null && !Buffer.isBuffer(body)) return Promise.resolve(body);
      return Promise.reject(tokenError('invalid_request', 'The request body could not be read as a form.'));
    }
    return new Promise((resolve, reject) => {
      parseForm(req, res, (error?: unknown) => {
        if (error) reject(tokenError('invalid_request', 'The request body could not be read as a form.', {}, error));
        else resolve(req.body);
      });
    });
  };
}

/**
 * The token endpoint (the conventions' "Token endpoint" and "Authentication"; RFC
 * 6749 §4.3 and §6; RFC 9700): `app.use(tokenRouter({ keys, issuer,
 * audience, users, clients }))`. Answers the password grant
 * (grants/password.ts) and the refresh_token grant (grants/refresh-token.ts)
 * with JWT access tokens and rotating opaque refresh tokens. Every error is
 * an RFC 6749 §5.2 JSON body: the router sets the token endpoint's error
 * shape on its responses, and refuse() hands the error to errorHandler()
 * when one is mounted, else writes it here (the endpoint works alone).
 */
export function tokenRouter(options: Readonly<TokenRouterOptions>): Router {
  const config = readTokenRouterOptions(options);
  const context: GrantContext = {
    config,
    signer: new AccessTokenSigner(
      config.keys[0] as (typeof config.keys)[number],
      config.issuer,
      config.audience,
      config.accessTokenTtlSeconds,
    ),
  };
  const authenticateClient = clientAuthenticator(config.clients, config.requireClient, config.realm);
  const readForm = formReader();

  async function handle(req: Request, res: Response): Promise<void> {
    checkContentType(req);
    const params = readParams(await readForm(req, res));
    const client = await authenticateClient(req.headers.authorization, params);
    const grantType = params.grant_type;
    if (grantType === undefined) throw tokenError('invalid_request', 'The grant_type parameter is missing.');
    if (!(GRANT_TYPES as readonly string[]).includes(grantType)) {
      throw tokenError('unsupported_grant_type', `The grant type ${JSON.stringify(grantType.slice(0, 64))} is not supported.`);
    }
    if (client?.grants !== undefined && !client.grants.includes(grantType as GrantType)) {
      throw tokenError('unauthorized_client', `This client may not use the ${grantType} grant.`);
    }
    const issued =
      grantType === 'password'
        ? await passwordGrant(context, req, params, client)
        : await refreshTokenGrant(context, params, client);
    sendTokens(res, context, issued);
  }

  const router = express.Router();
  router.post(config.path, function tokenEndpointMiddleware(req: Request, res: Response, next: NextFunction) {
    // SPEC.md "Prevent cache exposure": on every token-endpoint response, success or error.
    res.setHeader('Cache-Control', TOKEN_CACHE_CONTROL);
    // Whatever fails here (the sign-in guard's 429, a store's 503) is answered in RFC 6749's shape.
    setErrorShape(res, tokenErrorShape);
    handle(req, res).catch((error: unknown) => {
      // A store that is down is 503 `temporarily_unavailable` (through the shape), anything else unknown 500.
      if (isApiError(error)) refuse(req, res, next, error);
      else if (isStoreFailure(error)) refuse(req, res, next, storeUnavailable(error));
      else refuse(req, res, next, tokenError('server_error', SERVER_ERROR_DESCRIPTION, {}, error));
    });
  });
  return router;
}

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
