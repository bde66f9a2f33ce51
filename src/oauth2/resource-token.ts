import type { Request } from 'express';
import '../auth-context.js';
import { checkBoolean, checkInteger, checkString, invalidOption } from '../config/options.js';
import { type ApiError, apiError } from '../errors/api-error.js';
import type { ErrorName } from '../errors/catalogue.js';
import { noteSecurityEvent, TOKEN_EVENTS } from '../errors/refusal-events.js';
import { isStoreFailure, storeUnavailable } from '../errors/store-unavailable.js';
import { securityEventsWanted } from '../events/index.js';
import { TOKEN_FAILURE_HEADERS } from '../http/spec.js';
import {
  type AccessTokenClaims,
  AccessTokenVerifier,
  DEFAULT_MAX_TOKEN_LIFETIME,
  type KeySource,
  TOKEN_EXPIRED,
  TokenRejected,
} from './access-tokens.js';
import { checkAudience, checkRealm, checkSubjectActive, type SubjectActiveCheck } from './checks.js';
import { type ReadyKey, readKeys } from './keys.js';
import type { RevokedFamilies } from './revoked-families.js';

/**
 * The access token at the API (the resource server of RFC 6750 and RFC 9449
 * §7): what bearerAuth() and dpopAuth() share, from reading their common
 * options to the claims they set on the request.
 */

/** The realm of the challenges when none is configured. */
export const DEFAULT_REALM = 'api';

/** Default leeway for `exp`, `nbf` and `iat`: a few seconds of clock skew between servers. */
export const DEFAULT_CLOCK_TOLERANCE = 5;

/**
 * The options both middlewares take, as given (each documents them on its
 * own options type): the reader checks every value.
 */
export interface AccessTokenCheckOptions {
  readonly keys?: unknown;
  readonly jwksUri?: unknown;
  readonly jwks?: unknown;
  readonly requireAccessTokenType?: unknown;
  readonly checkClaims?: unknown;
  readonly issuer?: unknown;
  readonly audience?: unknown;
  readonly realm?: unknown;
  readonly clockToleranceSeconds?: unknown;
  readonly maxTokenLifetimeSeconds?: unknown;
  readonly revokedFamilies?: unknown;
  readonly isSubjectActive?: unknown;
}

/** How an access token is checked, read once from the options both middlewares share. */
export interface AccessTokenCheck {
  /** Verifies signature, algorithm, issuer, audience and expiry, with the clock tolerance. */
  readonly verifier: AccessTokenVerifier;
  /** Realm of the challenges. Default: `'api'`. */
  readonly realm: string;
  /** Revoked refresh-token families. Default: none. */
  readonly revokedFamilies: RevokedFamilies | undefined;
  /** Whether a token's user still exists. Default: none. */
  readonly isSubjectActive: SubjectActiveCheck | undefined;
}

// The issuer's key set (fetch, discovery, JWK) is loaded only when configured: an app that verifies its own keys never loads it.
const remoteKeyOptions = () => require('./remote-key-options.js') as typeof import('./remote-key-options.js');

/** The configured keys, or the issuer's key set (`jwksUri`, or discovery) when there are none. */
function readKeySource(factory: string, issuer: string, given: AccessTokenCheckOptions): readonly ReadyKey[] | KeySource {
  if (given.keys === undefined) return remoteKeyOptions().readIssuerKeys(factory, issuer, given.jwksUri, given.jwks);
  for (const name of ['jwksUri', 'jwks'] as const) {
    if (given[name] !== undefined)
      invalidOption(factory, name, given[name], 'left out with `keys` (the keys are given, not fetched)');
  }
  return readKeys(factory, given.keys, false);
}

/** Checks the options bearerAuth() and dpopAuth() share; a wrong one throws ConfigurationError naming `factory`. */
export function readAccessTokenCheck(factory: string, given: AccessTokenCheckOptions): AccessTokenCheck {
  const issuer = checkString(factory, 'issuer', given.issuer);
  const keys = readKeySource(factory, issuer, given);
  const audience = checkAudience(factory, given.audience);
  const realm = given.realm === undefined ? DEFAULT_REALM : checkRealm(factory, given.realm);
  const tolerance =
    given.clockToleranceSeconds === undefined
      ? DEFAULT_CLOCK_TOLERANCE
      : checkInteger(factory, 'clockToleranceSeconds', given.clockToleranceSeconds, { min: 0, max: 300 });
  const maxLifetime =
    given.maxTokenLifetimeSeconds === undefined
      ? DEFAULT_MAX_TOKEN_LIFETIME
      : checkInteger(factory, 'maxTokenLifetimeSeconds', given.maxTokenLifetimeSeconds, { min: 60, max: 31_536_000 });
  const revokedFamilies = given.revokedFamilies as RevokedFamilies | undefined;
  if (revokedFamilies !== undefined && typeof (revokedFamilies as Partial<RevokedFamilies>).isRevoked !== 'function') {
    invalidOption(factory, 'revokedFamilies', revokedFamilies, 'a RevokedFamilies (isRevoked)');
  }
  // RFC 9068 §2.1's `typ` is checked by default on tokens of configured keys (the library's own carry it); most providers send `JWT`.
  const requireType =
    given.requireAccessTokenType === undefined
      ? given.keys !== undefined
      : checkBoolean(factory, 'requireAccessTokenType', given.requireAccessTokenType);
  if (given.checkClaims !== undefined && typeof given.checkClaims !== 'function') {
    invalidOption(factory, 'checkClaims', given.checkClaims, 'a function (claims) => boolean');
  }
  const checkClaims = given.checkClaims as ((claims: Readonly<Record<string, unknown>>) => boolean) | undefined;
  return {
    verifier: new AccessTokenVerifier(keys, issuer, audience, tolerance, maxLifetime, { requireType, checkClaims }),
    realm,
    revokedFamilies,
    isSubjectActive: checkSubjectActive(factory, given.isSubjectActive),
  };
}

/** The description of a token whose user `isSubjectActive` denies. */
export const SUBJECT_GONE = 'The user of the access token no longer exists.';

/** The same for a client credentials token, whose subject is its client (RFC 9068 §2.2: `sub` is `client_id`). */
export const CLIENT_GONE = 'The client of the access token is no longer allowed.';

/** The description of a token `isSubjectActive` denied: its user's, or its client's when it names no user. */
export const subjectGone = (claims: AccessTokenClaims): string => (claims.sub === claims.client_id ? CLIENT_GONE : SUBJECT_GONE);

/**
 * A refused token: the `error_description` of its refusal, why (its
 * security event), and its claims when it verified (a revoked family, a
 * binding that does not fit).
 */
export class TokenRefusal {
  constructor(
    readonly description: string,
    readonly reason: keyof typeof TOKEN_EVENTS,
    readonly claims?: AccessTokenClaims,
  ) {}
}

/** The claims of an accepted token, or its refusal. */
export type TokenCheckResult = AccessTokenClaims | TokenRefusal;

/**
 * The claims of `token` when it verifies, is bound to a DPoP key exactly
 * when `bound` asks for one, and its family is not revoked; otherwise its
 * `invalid_token` refusal. A value rather than a throw, and a promise only when an issuer's keys must be fetched first:
 * the bearer path runs this on every request. Throws (or rejects with) a
 * StoreUnavailableError when the issuer's keys cannot be had (503).
 */
export function checkAccessToken(
  check: AccessTokenCheck,
  token: string,
  bound: boolean,
): TokenCheckResult | Promise<TokenCheckResult> {
  try {
    return checkedToken(check, bound, check.verifier.verify(token, true));
  } catch (error) {
    // An issuer's key set that must be fetched first (remote-key-set.ts' KeysPending): ask once more when it settled.
    const settled = (error as { settled?: unknown } | null)?.settled;
    if (settled instanceof Promise) return settled.then(() => checkAccessTokenNow(check, token, bound));
    return rejection(error);
  }
}

/** checkAccessToken() without waiting for keys: a key still unknown is a 401 at once. */
function checkAccessTokenNow(check: AccessTokenCheck, token: string, bound: boolean): TokenCheckResult {
  try {
    return checkedToken(check, bound, check.verifier.verify(token, false));
  } catch (error) {
    return rejection(error);
  }
}

/** A refused token's refusal; a store failure (the issuer's keys) is thrown on. */
function rejection(error: unknown): TokenRefusal {
  if (error instanceof TokenRejected)
    return new TokenRefusal(error.message, error.message === TOKEN_EXPIRED ? 'expired' : 'invalid');
  if (isStoreFailure(error)) throw error;
  return new TokenRefusal('The access token is not valid.', 'invalid');
}

function checkedToken(check: AccessTokenCheck, bound: boolean, claims: AccessTokenClaims): TokenCheckResult {
  if (bound) {
    if (claims.cnf === undefined) return new TokenRefusal('The access token is not bound to a DPoP key.', 'invalid', claims);
  } else if (claims.cnf !== undefined) {
    // RFC 9449 §7.2: a token bound to a DPoP key is no bearer token; accepting it here would undo the binding.
    return new TokenRefusal('The access token is bound to a DPoP key.', 'invalid', claims);
  }
  // Checked on every request, after the verifier's cache too: a revoked family's tokens stop at once.
  if (check.revokedFamilies !== undefined && claims.sid !== undefined && check.revokedFamilies.isRevoked(claims.sid)) {
    return new TokenRefusal('The access token was revoked.', 'revoked', claims);
  }
  return claims;
}

/** Who a verified token names, for a security event: never the token, at most its `jti`. */
export const tokenActor = (claims: AccessTokenClaims) =>
  ({ subject: claims.sub, clientId: claims.client_id ?? claims.azp, jti: claims.jti }) as const;

/** Notes why a token was refused, and whom it named when it verified, on the event of the refusal about to be made. */
export function noteTokenRefusal(req: Request, reason: keyof typeof TOKEN_EVENTS, claims?: AccessTokenClaims): void {
  if (securityEventsWanted()) noteSecurityEvent(req, { ...TOKEN_EVENTS[reason], ...(claims && tokenActor(claims)) });
}

/**
 * The 503 of a store that is down (the conventions' Errors: `Retry-After`);
 * an issuer's key set that cannot be had says so, with its own `Retry-After`.
 */
export function unavailable(error: unknown): ApiError {
  const seconds = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
  if (typeof seconds !== 'number') return storeUnavailable(error);
  return storeUnavailable(error, {
    message: "The token issuer's keys cannot be fetched.",
    headers: { 'Retry-After': String(seconds) },
  });
}

/**
 * A refused token (docs/conventions.md rule 13.7; RFC 6750 §3, RFC 9449 §7.1):
 * 401 with the RFC body `{ error, error_description }`, `Cache-Control:
 * no-store`, `Pragma: no-cache`, and the scheme's challenge (`challenge`,
 * its scheme and parameters) followed by the error and its description.
 */
export function tokenFailure(
  name: ErrorName,
  error: string,
  challenge: string,
  description: string,
  extra?: Readonly<Record<string, string>>,
  otherChallenge?: string,
): ApiError {
  const own = `${challenge}, error="${error}", error_description="${description}"`;
  return apiError(name, {
    message: description,
    body: { error, error_description: description },
    headers: {
      ...TOKEN_FAILURE_HEADERS,
      'WWW-Authenticate': otherChallenge === undefined ? own : `${own}, ${otherChallenge}`,
      ...extra,
    },
  });
}

const EMPTY_SCOPES: readonly string[] = Object.freeze([]);

/** RFC 9068 §2.2.3 `scope`, or the `scp` of Okta and Entra ID (a list, or a space-separated string). */
function scopesOf(claims: AccessTokenClaims): readonly string[] {
  const granted = claims.scope ?? claims.scp;
  if (granted === undefined || granted.length === 0) return EMPTY_SCOPES;
  return typeof granted === 'string' ? granted.split(' ') : granted;
}

/**
 * The challenge of the authentication that ran on a request, when it is not
 * bearerAuth()'s default: the one that accepted its token, or an optional
 * bearerAuth() that let it through without one. requireScope() answers in
 * its scheme and realm (403 and 401).
 */
export const challengeOf = new WeakMap<Request, string>();

/**
 * Sets `req.accessToken` (the claims) and `req.auth` (subject, clientId,
 * scopes) of an accepted token; `challenge`, when given, is the one
 * requireScope() then answers in.
 */
export function setTokenAuth(req: Request, claims: AccessTokenClaims, challenge?: string): void {
  if (challenge !== undefined) challengeOf.set(req, challenge);
  req.accessToken = claims;
  req.auth = {
    subject: claims.sub,
    // RFC 9068 §2.2 `client_id`; OpenID Connect issuers (Entra ID v2, Keycloak) name the application in `azp`.
    clientId: claims.client_id ?? claims.azp,
    scopes: scopesOf(claims),
  };
}
