import type { NextFunction, Request, RequestHandler, Response } from 'express';
import '../auth-context.js';
import { invalidOption } from '../config/options.js';
import { type ApiError, apiError, isApiError } from '../errors/api-error.js';
import { noteSecurityEvent } from '../errors/refusal-events.js';
import { refuse } from '../errors/refuse.js';
import { isStoreFailure } from '../errors/store-unavailable.js';
import { securityEventsWanted } from '../events/index.js';
import type { AccessTokenClaims } from './access-tokens.js';
import { parseBasicCredentials } from './basic-credentials.js';
import { type BearerAuthConfiguration, type BearerAuthOptions, readBearerAuthOptions } from './bearer-auth-options.js';
import { type ClientStore, clientSecretMatches } from './clients.js';
import { isOAuthEndpoint } from './oauth-endpoint-mark.js';
import {
  challengeOf,
  checkAccessToken,
  DEFAULT_REALM,
  noteTokenRefusal,
  setTokenAuth,
  subjectGone,
  type TokenCheckResult,
  TokenRefusal,
  tokenFailure,
  unavailable,
} from './resource-token.js';
import { SCOPE_TOKEN } from './scope.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** The verified claims of the bearer access token, set by bearerAuth(). */
    accessToken?: AccessTokenClaims;
  }
}

/** The challenge of a request without a token, with the default realm. */
const DEFAULT_CHALLENGE = `Bearer realm="${DEFAULT_REALM}"`;

// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const BEARER_SCHEME = /^Bearer(?: |$)/i;

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
  return bearerAuthWith(readBearerAuthOptions(options));
}

/** bearerAuth() over a configuration already read (also dpopAuth()'s answer to a `Bearer` header). */
export function bearerAuthWith(config: BearerAuthConfiguration): RequestHandler {
  return function bearerAuthMiddleware(req: Request, res: Response, next: NextFunction) {
    const header = req.headers.authorization;
    // At an OAuth endpoint a Bearer header is a client authentication the endpoint refuses itself (RFC 6749 §5.2).
    const bearerHere = header !== undefined && BEARER_SCHEME.test(header) && !(config.optional && isOAuthEndpoint(res));
    if (!bearerHere) return withoutBearer(config, req, res, next, header);
    const match = BEARER.exec(header);
    if (!match) {
      noteTokenRefusal(req, 'invalid');
      return refuse(req, res, next, invalid(config, 'The Authorization header is not a valid bearer token.'));
    }
    let checked: ReturnType<typeof checkAccessToken>;
    try {
      checked = checkAccessToken(config, match[1] as string, false);
    } catch (error) {
      return lookupFailed(req, res, next, error);
    }
    if (checked instanceof Promise) {
      checked.then(
        (claims) => checkedToken(config, req, res, next, claims),
        (error: unknown) => lookupFailed(req, res, next, error),
      );
    } else checkedToken(config, req, res, next, checked);
  };
}

/** A token checked: refused with its description, or its subject asked about. */
function checkedToken(
  config: BearerAuthConfiguration,
  req: Request,
  res: Response,
  next: NextFunction,
  claims: TokenCheckResult,
): void {
  if (claims instanceof TokenRefusal) {
    noteTokenRefusal(req, claims.reason, claims.claims);
    refuse(req, res, next, invalid(config, claims.description));
  } else checkSubject(config, req, res, next, claims);
}

/** 401 `invalid_token` with the bearer challenge. */
function invalid(config: BearerAuthConfiguration, description: string): ApiError {
  return tokenFailure('invalidToken', 'invalid_token', config.challenge, description, undefined, config.otherChallenge);
}

/** A request without bearer credentials: on unauthenticated when optional (its Basic client identified), else 401. */
function withoutBearer(
  config: BearerAuthConfiguration,
  req: Request,
  res: Response,
  next: NextFunction,
  header: string | undefined,
): void {
  if (config.optional) {
    if (config.challenge !== DEFAULT_CHALLENGE) challengeOf.set(req, config.challenge);
    if (config.clients !== undefined && header !== undefined)
      identifyClient(req, config.clients, header).then(() => next(), next);
    else next();
    return;
  }
  // RFC 6750 §3.1: no credentials of this scheme, so no error code, only the challenge.
  refuse(
    req,
    res,
    next,
    apiError('unauthenticated', {
      message: 'A bearer access token is required.',
      // RFC 9449 §7.1: where DPoP is accepted too, its challenge (with `algs`) follows.
      headers: {
        'WWW-Authenticate':
          config.otherChallenge === undefined ? config.challenge : `${config.challenge}, ${config.otherChallenge}`,
      },
    }),
  );
}

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

/**
 * Asks `isSubjectActive`, when given, before the request goes on. A check
 * that answers synchronously costs no promise: this runs on every request.
 */
function checkSubject(
  config: BearerAuthConfiguration,
  req: Request,
  res: Response,
  next: NextFunction,
  claims: AccessTokenClaims,
): void {
  const isSubjectActive = config.isSubjectActive;
  if (isSubjectActive === undefined) {
    authenticated(config, req, claims, next);
    return;
  }
  let active: boolean | Promise<boolean>;
  try {
    active = isSubjectActive(claims.sub, claims);
  } catch (error) {
    lookupFailed(req, res, next, error);
    return;
  }
  if (typeof active === 'boolean') subjectAnswered(config, req, res, next, claims, active);
  else {
    active.then(
      (yes) => subjectAnswered(config, req, res, next, claims, yes),
      (error: unknown) => lookupFailed(req, res, next, error),
    );
  }
}

/** The request goes on when the token's user is active, else 401 `invalid_token`. */
function subjectAnswered(
  config: BearerAuthConfiguration,
  req: Request,
  res: Response,
  next: NextFunction,
  claims: AccessTokenClaims,
  active: boolean,
): void {
  if (active) authenticated(config, req, claims, next);
  else {
    noteTokenRefusal(req, 'invalid', claims);
    refuse(req, res, next, invalid(config, subjectGone(claims)));
  }
}

function authenticated(config: BearerAuthConfiguration, req: Request, claims: AccessTokenClaims, next: NextFunction): void {
  // requireScope()'s 403 challenges in this realm too (only a configured one is kept: the default needs no entry).
  setTokenAuth(req, claims, config.challenge === DEFAULT_CHALLENGE ? undefined : config.challenge);
  next();
}

/** The keys or the subject could not be looked up: a store that is down is 503 (fail closed), anything else goes on as an error. */
function lookupFailed(req: Request, res: Response, next: NextFunction, error: unknown): void {
  if (isApiError(error)) refuse(req, res, next, error);
  else if (isStoreFailure(error)) refuse(req, res, next, unavailable(error));
  else next(error);
}

/** The scopes of `needed` that `granted` lacks, space-separated. */
const lacking = (needed: readonly string[], granted: readonly string[]): string =>
  needed.filter((scope) => !granted.includes(scope)).join(' ');

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
  // The challenge's parameters after the realm of the bearerAuth() that ran (RFC 6750 §3: the realm starts every challenge).
  const scopeParameters = `error="insufficient_scope", scope="${needed}", error_description="${description}"`;

  return function requireScopeMiddleware(req: Request, res: Response, next: NextFunction) {
    const auth = req.auth;
    if (auth === undefined) {
      return refuse(
        req,
        res,
        next,
        // The challenge bearerAuth() answers without a token (RFC 6750 §3), in the realm of the one that ran, if any.
        apiError('unauthenticated', {
          message: 'A bearer access token is required.',
          headers: { 'WWW-Authenticate': challengeOf.get(req) ?? DEFAULT_CHALLENGE },
        }),
      );
    }
    for (const scope of scopes) {
      if (!auth.scopes.includes(scope)) {
        if (securityEventsWanted()) noteSecurityEvent(req, { policy: { scope: lacking(scopes, auth.scopes) } });
        return refuse(
          req,
          res,
          next,
          apiError('insufficientScope', {
            message: description,
            body: { error: 'insufficient_scope', error_description: description },
            headers: { 'WWW-Authenticate': `${challengeOf.get(req) ?? DEFAULT_CHALLENGE}, ${scopeParameters}` },
          }),
        );
      }
    }
    next();
  };
}
