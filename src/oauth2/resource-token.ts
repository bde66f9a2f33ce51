import type { Request } from 'express';
import '../auth-context.js';
import { checkInteger, checkString, invalidOption } from '../config/options.js';
import { type ApiError, apiError } from '../errors/api-error.js';
import type { ErrorName } from '../errors/catalogue.js';
import { TOKEN_FAILURE_HEADERS } from '../http/spec.js';
import { type AccessTokenClaims, AccessTokenVerifier, DEFAULT_MAX_TOKEN_LIFETIME, TokenRejected } from './access-tokens.js';
import { checkAudience, checkRealm, checkSubjectActive, type SubjectActiveCheck } from './checks.js';
import { readKeys } from './keys.js';
import type { RevokedFamilies } from './revoked-families.js';

/**
 * The access token at the API (the resource server of RFC 6750 and RFC 9449
 * §7): what bearerAuth() and dpopAuth() share, from reading their common
 * options to the claims they set on the request.
 */

/** Default leeway for `exp`, `nbf` and `iat`: a few seconds of clock skew between servers. */
export const DEFAULT_CLOCK_TOLERANCE = 5;

/**
 * The options both middlewares take, as given (each documents them on its
 * own options type): the reader checks every value.
 */
export interface AccessTokenCheckOptions {
  readonly keys?: unknown;
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

/** Checks the options bearerAuth() and dpopAuth() share; a wrong one throws ConfigurationError naming `factory`. */
export function readAccessTokenCheck(factory: string, given: AccessTokenCheckOptions): AccessTokenCheck {
  const keys = readKeys(factory, given.keys, false);
  const issuer = checkString(factory, 'issuer', given.issuer);
  const audience = checkAudience(factory, given.audience);
  const realm = given.realm === undefined ? 'api' : checkRealm(factory, given.realm);
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
  return {
    verifier: new AccessTokenVerifier(keys, issuer, audience, tolerance, maxLifetime),
    realm,
    revokedFamilies,
    isSubjectActive: checkSubjectActive(factory, given.isSubjectActive),
  };
}

/** The description of a token whose user `isSubjectActive` denies. */
export const SUBJECT_GONE = 'The user of the access token no longer exists.';

/**
 * The claims of `token` when it verifies, is bound to a DPoP key exactly
 * when `bound` asks for one, and its family is not revoked; otherwise the
 * `error_description` of its `invalid_token` refusal. A string rather than
 * a throw: the bearer path runs this on every request.
 */
export function checkAccessToken(check: AccessTokenCheck, token: string, bound: boolean): AccessTokenClaims | string {
  let claims: AccessTokenClaims;
  try {
    claims = check.verifier.verify(token);
  } catch (error) {
    return error instanceof TokenRejected ? error.message : 'The access token is not valid.';
  }
  if (bound) {
    if (claims.cnf === undefined) return 'The access token is not bound to a DPoP key.';
  } else if (claims.cnf !== undefined) {
    // RFC 9449 §7.2: a token bound to a DPoP key is no bearer token; accepting it here would undo the binding.
    return 'The access token is bound to a DPoP key.';
  }
  // Checked on every request, after the verifier's cache too: a revoked family's tokens stop at once.
  if (check.revokedFamilies !== undefined && claims.sid !== undefined && check.revokedFamilies.isRevoked(claims.sid)) {
    return 'The access token was revoked.';
  }
  return claims;
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

/** Sets `req.accessToken` (the claims) and `req.auth` (subject, clientId, scopes) of an accepted token. */
export function setTokenAuth(req: Request, claims: AccessTokenClaims): void {
  req.accessToken = claims;
  req.auth = {
    subject: claims.sub,
    clientId: claims.client_id,
    scopes: claims.scope === undefined ? EMPTY_SCOPES : claims.scope.split(' '),
  };
}
