import type { NextFunction, Request, RequestHandler, Response } from 'express';
import '../auth-context.js';
import { checkBoolean, checkInteger, checkString, invalidOption, readOptions } from '../config/options.js';
import { apiError, isApiError } from '../errors/api-error.js';
import { refuse } from '../errors/refuse.js';
import { isStoreFailure, storeUnavailable } from '../errors/store-unavailable.js';
import { parseBasicCredentials } from '../http/basic-credentials.js';
import { TOKEN_FAILURE_HEADERS } from '../http/spec.js';
import { type AccessTokenClaims, AccessTokenVerifier, TokenRejected } from './access-tokens.js';
import { checkAudience, checkRealm, checkSubjectActive, type SubjectActiveCheck } from './checks.js';
import { type AccessTokenKey, readKeys } from './keys.js';
import type { RevokedFamilies } from './revoked-families.js';
import { SCOPE_TOKEN } from './scope.js';
import { type ClientStore, clientSecretMatches } from './stores.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** The verified claims of the bearer access token, set by bearerAuth(). */
    accessToken?: AccessTokenClaims;
  }
}

// SPEC.md "Token failure": "`Cache-Control: no-store`, `Pragma: no-cache`" (the leaf layer's one value).
export { TOKEN_FAILURE_HEADERS };
/** Default leeway for `exp`, `nbf` and `iat`: a few seconds of clock skew between servers. */
export const DEFAULT_CLOCK_TOLERANCE = 5;

export interface BearerAuthOptions {
  /** Keys that verify access tokens, as given to tokenRouter() (public keys suffice). Required. */
  keys: readonly AccessTokenKey[];
  /** The expected `iss`. Required. */
  issuer: string;
  /** The expected `aud` (one of them, when several). Required. */
  audience: string | readonly string[];
  /** Realm of the `WWW-Authenticate: Bearer` challenge. Default: `'api'`. */
  realm?: string;
  /** Clock skew allowed on `exp` and `nbf`, in seconds (0 to 300). Default: 5. */
  clockToleranceSeconds?: number;
  /**
   * Let a request without bearer credentials (no `Authorization` header, or
   * one of another scheme such as the token endpoint's `Basic`) through
   * unauthenticated: for routes that also accept a session, and for the
   * preset, which identifies bearer callers before counting rate limits.
   * A `Bearer` header that is there must still hold a valid token.
   * Default: `false`.
   */
  optional?: boolean;
  /**
   * Refresh-token families revoked before their access tokens expire (the
   * same store given to tokenRouter() and revokeRefreshToken()): a token
   * whose `sid` names one is refused with 401 `invalid_token`, also when it
   * was accepted before. Default: none (a token is good until it expires).
   */
  revokedFamilies?: RevokedFamilies;
  /**
   * Asked on every request with the token's `sub`, after the token verified:
   * whether that user still exists (and may use the API). `false` refuses the
   * token with 401 `invalid_token`, so a deleted user's tokens stop at once;
   * read from the store every instance shares, that holds on every instance at
   * once. A lookup that throws a store failure is 503 with `Retry-After`.
   * Default: none (a token is good until it expires or its family is revoked).
   */
  isSubjectActive?: SubjectActiveCheck;
  /**
   * With `optional`: the registered applications. A request with
   * `Authorization: Basic` whose client secret verifies (constant time)
   * gets `req.verifiedClient = { id }`, so the rate limiter can count it as that
   * application; a wrong secret sets nothing and is not refused here (the
   * token endpoint refuses it). Default: none (Basic credentials are not read).
   */
  clients?: ClientStore;
}

const OPTION_NAMES = [
  'keys',
  'issuer',
  'audience',
  'realm',
  'clockToleranceSeconds',
  'optional',
  'revokedFamilies',
  'isSubjectActive',
  'clients',
] as const;
const FACTORY = 'bearerAuth';
const HINTS = { clockTolerance: 'It is now `clockToleranceSeconds` (seconds).' } as const;

// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const BEARER_SCHEME = /^Bearer(?: |$)/i;

const EMPTY_SCOPES: readonly string[] = Object.freeze([]);

/**
 * Authenticates `Authorization: Bearer <access token>` (RFC 6750; the conventions
 * "Using the token", "Token failure"). The token is verified with pinned
 * algorithms, issuer, audience and expiry; `req.auth` (subject, clientId,
 * scopes) and `req.accessToken` (the claims) are then set.
 *
 * No bearer credentials: 401 with `WWW-Authenticate: Bearer realm="…"`.
 * A token that fails: 401 `{ "error": "invalid_token", "error_description" }`
 * with `Cache-Control: no-store`, `Pragma: no-cache` and the challenge.
 * Both are JSON whether or not errorHandler() follows (refuse()).
 */
export function bearerAuth(options: Readonly<BearerAuthOptions>): RequestHandler {
  const given = readOptions<BearerAuthOptions>(FACTORY, options, OPTION_NAMES, HINTS);
  const keys = readKeys(FACTORY, given.keys, false);
  const issuer = checkString(FACTORY, 'issuer', given.issuer);
  const audience = checkAudience(FACTORY, given.audience);
  const realm = given.realm === undefined ? 'api' : checkRealm(FACTORY, given.realm);
  const tolerance =
    given.clockToleranceSeconds === undefined
      ? DEFAULT_CLOCK_TOLERANCE
      : checkInteger(FACTORY, 'clockToleranceSeconds', given.clockToleranceSeconds, { min: 0, max: 300 });
  const optional = given.optional === undefined ? false : checkBoolean(FACTORY, 'optional', given.optional);
  const revokedFamilies = given.revokedFamilies;
  if (revokedFamilies !== undefined && typeof (revokedFamilies as Partial<RevokedFamilies>).isRevoked !== 'function') {
    invalidOption(FACTORY, 'revokedFamilies', revokedFamilies, 'a RevokedFamilies (isRevoked)');
  }
  const isSubjectActive = checkSubjectActive(FACTORY, given.isSubjectActive);
  const clients = given.clients;
  if (clients !== undefined) {
    if (typeof (clients as Partial<ClientStore>).findById !== 'function') {
      invalidOption(FACTORY, 'clients', clients, 'a ClientStore (findById)');
    }
    // Without `optional` a Basic header is refused with 401 before it could be read.
    if (!optional) invalidOption(FACTORY, 'clients', clients, 'given only with `optional: true`');
  }
  const verifier = new AccessTokenVerifier(keys, issuer, audience, tolerance);
  const challenge = `Bearer realm="${realm}"`;

  const invalid = (description: string) =>
    apiError('invalidToken', {
      message: description,
      body: { error: 'invalid_token', error_description: description },
      headers: {
        ...TOKEN_FAILURE_HEADERS,
        'WWW-Authenticate': `${challenge}, error="invalid_token", error_description="${description}"`,
      },
    });

  /** Sets `req.verifiedClient` when the Basic credentials verify; never refuses. */
  async function identifyClient(req: Request, store: ClientStore, header: string): Promise<void> {
    const presented = parseBasicCredentials(header);
    if (!presented) return;
    let client: Awaited<ReturnType<ClientStore['findById']>>;
    try {
      client = await store.findById(presented.id);
    } catch {
      // The store is down: the request is counted by its address, as an anonymous one.
      return;
    }
    // Compared even when the client is unknown, so the time taken says nothing.
    const verified = clientSecretMatches(presented.secret, client?.secretHash);
    if (verified && client !== undefined && !client.blocked) req.verifiedClient = { id: client.id };
  }

  return function bearerAuthMiddleware(req: Request, res: Response, next: NextFunction) {
    const header = req.headers.authorization;
    if (header === undefined || !BEARER_SCHEME.test(header)) {
      if (optional) {
        if (clients !== undefined && header !== undefined) {
          identifyClient(req, clients, header).then(() => next(), next);
          return;
        }
        return next();
      }
      // RFC 6750 §3.1: no credentials of this scheme, so no error code, only the challenge.
      return refuse(
        req,
        res,
        next,
        apiError('unauthenticated', {
          message: 'A bearer access token is required.',
          headers: { 'WWW-Authenticate': challenge },
        }),
      );
    }
    const match = BEARER.exec(header);
    if (!match) return refuse(req, res, next, invalid('The Authorization header is not a valid bearer token.'));
    let claims: AccessTokenClaims;
    try {
      claims = verifier.verify(match[1] as string);
    } catch (error) {
      return refuse(req, res, next, invalid(error instanceof TokenRejected ? error.message : 'The access token is not valid.'));
    }
    // RFC 9449 §7.2: a token bound to a DPoP key is no bearer token; accepting it here would undo the binding.
    if (claims.cnf !== undefined) return refuse(req, res, next, invalid('The access token is bound to a DPoP key.'));
    // Checked on every request, after the verifier's cache too: a revoked family's tokens stop at once.
    if (revokedFamilies !== undefined && claims.sid !== undefined && revokedFamilies.isRevoked(claims.sid)) {
      return refuse(req, res, next, invalid('The access token was revoked.'));
    }
    if (isSubjectActive === undefined) return authenticated(req, claims, next);
    let active: boolean | Promise<boolean>;
    try {
      active = isSubjectActive(claims.sub);
    } catch (error) {
      return lookupFailed(req, res, next, error);
    }
    if (typeof active === 'boolean') {
      return active ? authenticated(req, claims, next) : refuse(req, res, next, invalid(SUBJECT_GONE));
    }
    active.then(
      (yes) => (yes ? authenticated(req, claims, next) : refuse(req, res, next, invalid(SUBJECT_GONE))),
      (error: unknown) => lookupFailed(req, res, next, error),
    );
  };
}

const SUBJECT_GONE = 'The user of the access token no longer exists.';

function authenticated(req: Request, claims: AccessTokenClaims, next: NextFunction): void {
  req.accessToken = claims;
  req.auth = {
    subject: claims.sub,
    clientId: claims.client_id,
    scopes: claims.scope === undefined ? EMPTY_SCOPES : claims.scope.split(' '),
  };
  next();
}

/** The subject could not be looked up: a store that is down is 503 (fail closed), anything else goes on as an error. */
function lookupFailed(req: Request, res: Response, next: NextFunction, error: unknown): void {
  if (isApiError(error)) refuse(req, res, next, error);
  else if (isStoreFailure(error)) refuse(req, res, next, storeUnavailable(error));
  else next(error);
}

/**
 * Authorization by scope (RFC 6750 §3.1): after bearerAuth(), lets the
 * request through only when the token holds every scope listed; otherwise
 * 403 `insufficient_scope`, an authorization failure, distinct from 401
 * (the conventions' "401 is an authentication failure; 403 is an authorization failure"),
 * in JSON whether or not errorHandler() follows (refuse()).
 */
export function requireScope(...scopes: string[]): RequestHandler {
  if (scopes.length === 0) invalidOption('requireScope', 'scopes', scopes, 'at least one scope');
  for (const [index, scope] of scopes.entries()) {
    if (typeof scope !== 'string' || !SCOPE_TOKEN.test(scope))
      invalidOption('requireScope', `scopes[${index}]`, scope, 'an RFC 6749 §3.3 scope token');
  }
  const needed = scopes.join(' ');
  const description = `The access token lacks the scope: ${needed}.`;
  const headers = {
    'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${needed}", error_description="${description}"`,
  };

  return function requireScopeMiddleware(req: Request, res: Response, next: NextFunction) {
    const auth = req.auth;
    if (auth === undefined) {
      return refuse(
        req,
        res,
        next,
        apiError('unauthenticated', { message: 'A bearer access token is required.', headers: { 'WWW-Authenticate': 'Bearer' } }),
      );
    }
    for (const scope of scopes) {
      if (!auth.scopes.includes(scope)) {
        return refuse(
          req,
          res,
          next,
          apiError('insufficientScope', {
            message: description,
            body: { error: 'insufficient_scope', error_description: description },
            headers,
          }),
        );
      }
    }
    next();
  };
}
