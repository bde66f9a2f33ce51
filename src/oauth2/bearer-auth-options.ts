import { checkBoolean, invalidOption, readOptions } from '../config/options.js';
import type { SubjectActiveCheck } from './checks.js';
import type { ClientStore } from './clients.js';
import type { AccessTokenKey } from './keys.js';
import type { JwksOptions } from './remote-key-options.js';
import { type AccessTokenCheck, readAccessTokenCheck } from './resource-token.js';
import type { RevokedFamilies } from './revoked-families.js';

/**
 * Where the keys that verify tokens come from, and the RFC 9068 checks
 * beyond signature and time: shared by bearerAuth() and dpopAuth().
 */
export interface TokenKeyOptions {
  /**
   * Keys that verify access tokens, as given to tokenRouter() (public keys
   * suffice). Default: none, and the keys are the issuer's key set: at
   * `jwksUri`, or at the `jwks_uri` of the issuer's metadata (RFC 8414,
   * then OpenID Connect Discovery).
   */
  keys?: readonly AccessTokenKey[];
  /** The issuer's key set (JWKS) address, when its metadata is not to be read. Default: discovered. Not with `keys`. */
  jwksUri?: string;
  /** How the issuer's key set is fetched and kept (cooldown, cache age, grace, bounds, algorithms). Not with `keys`. Default: the defaults of JwksOptions. */
  jwks?: JwksOptions;
  /**
   * Whether the token's header must say `typ: at+jwt` (RFC 9068 §2.1).
   * Default: `true` with `keys` (tokenRouter() always writes it), `false`
   * for an issuer's key set (most providers still write `JWT`).
   */
  requireAccessTokenType?: boolean;
  /**
   * A last check of a token's verified claims, such as its tenant (`tid`):
   * `false` refuses it with 401 `invalid_token`. Default: none.
   */
  checkClaims?: (claims: Readonly<Record<string, unknown>>) => boolean;
  /** The expected `iss`: with no `keys`, the issuer URL its metadata is found from. Required. */
  issuer: string;
  /** The expected `aud` (one of them, when several; the token's may be a string or a list). Required. */
  audience: string | readonly string[];
}

export interface BearerAuthOptions extends TokenKeyOptions {
  /** Realm of the `WWW-Authenticate: Bearer` challenge. Default: `'api'`. */
  realm?: string;
  /** Clock skew allowed on `exp` and `nbf`, in seconds (0 to 300). Default: 5. */
  clockToleranceSeconds?: number;
  /**
   * The longest lifetime (`exp` − `iat`) a token is accepted with, in seconds
   * (60 to 31536000): a token that claims more, or has no `iat`, is refused
   * with 401 `invalid_token`, however far its `exp`. Default: 86400 (one
   * day, the longest tokenRouter() issues).
   */
  maxTokenLifetimeSeconds?: number;
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

/** The names of TokenKeyOptions, which dpopAuth() takes too. */
export const TOKEN_KEY_OPTION_NAMES = [
  'keys',
  'jwksUri',
  'jwks',
  'requireAccessTokenType',
  'checkClaims',
  'issuer',
  'audience',
] as const;

const OPTION_NAMES = [
  ...TOKEN_KEY_OPTION_NAMES,
  'realm',
  'clockToleranceSeconds',
  'maxTokenLifetimeSeconds',
  'optional',
  'revokedFamilies',
  'isSubjectActive',
  'clients',
] as const;
const FACTORY = 'bearerAuth';

/** What bearerAuth() answers to an option name without its unit (a number's unit is in its name). */
const HINTS = { clockTolerance: 'It is now `clockToleranceSeconds` (seconds).' } as const;

/** bearerAuth()'s options, checked, with their defaults. */
export interface BearerAuthConfiguration extends AccessTokenCheck {
  /** `Bearer realm="…"`: the challenge of a request without a token, and the start of every other. */
  readonly challenge: string;
  /** Whether a request without bearer credentials goes on unauthenticated. Default: `false`. */
  readonly optional: boolean;
  /** Where Basic credentials are verified, with `optional`. Default: none (they are not read). */
  readonly clients: ClientStore | undefined;
  /** The challenge of another scheme this resource accepts too (dpopAuth()'s DPoP), written after every Bearer one. */
  readonly otherChallenge?: string;
}

/** The configuration of a bearerAuth() that is required and reads no Basic credentials (dpopAuth()'s bearer path). */
export function requiredBearer(check: AccessTokenCheck): BearerAuthConfiguration {
  return { ...check, challenge: `Bearer realm="${check.realm}"`, optional: false, clients: undefined };
}

/** Turns bearerAuth()'s options into its configuration, or throws a ConfigurationError at start-up. */
export function readBearerAuthOptions(options: unknown): BearerAuthConfiguration {
  const given = readOptions<BearerAuthOptions>(FACTORY, options, OPTION_NAMES, HINTS);
  const check = readAccessTokenCheck(FACTORY, given);
  const optional = given.optional === undefined ? false : checkBoolean(FACTORY, 'optional', given.optional);
  const clients = given.clients;
  if (clients !== undefined) {
    if (typeof (clients as Partial<ClientStore>).findById !== 'function') {
      invalidOption(FACTORY, 'clients', clients, 'a ClientStore (findById)');
    }
    // Without `optional` a Basic header is refused with 401 before it could be read.
    if (!optional) invalidOption(FACTORY, 'clients', clients, 'given only with `optional: true`');
  }
  return { ...requiredBearer(check), optional, clients };
}
