import { checkBoolean, checkInteger, checkString, invalidOption, readOptions } from '../config/options.js';
import { checkAudience, checkRealm } from './checks.js';
import { type AccessTokenKey, type ReadyKey, readKeys } from './keys.js';
import type { PasswordHasher } from './password-hasher.js';
import { type PasswordSignIn, passwordSignIn } from './password-sign-in.js';
import type { RevokedFamilies } from './revoked-families.js';
import { checkScopeList } from './scope.js';
import type { SignInGuard, SignInGuardOptions } from './sign-in-guard.js';
import { type ClientStore, MemoryRefreshTokenStore, type RefreshTokenStore, type UserStore } from './stores.js';

/** The conventions' "Token endpoint": "POST `{base_url}/v1/oauth2/token`". */
export const TOKEN_PATH = '/v1/oauth2/token';
/** Default access-token lifetime, seconds (the reference server's `ACCESS_TOKEN_TTL`). */
export const DEFAULT_ACCESS_TOKEN_TTL = 3600;
/** Longest access-token lifetime accepted, seconds: one day. */
export const MAX_ACCESS_TOKEN_TTL = 86_400;
/** Default refresh-token lifetime, seconds: 14 days, renewed by every rotation. */
export const DEFAULT_REFRESH_TOKEN_TTL = 1_209_600;

export interface TokenRouterOptions {
  /** Access-token keys; the first signs, all verify (rotation by `kid`). Required. */
  keys: readonly AccessTokenKey[];
  /** The `iss` claim. Required. */
  issuer: string;
  /** The `aud` claim: the API(s) the tokens are for. Required. */
  audience: string | readonly string[];
  /** Where users and their bcrypt hashes are found. Required. */
  users: UserStore;
  /** Registered applications. Default: none registered (any client credentials are refused). */
  clients?: ClientStore;
  /** Refresh-token families. Default: a MemoryRefreshTokenStore (one process only). */
  refreshTokens?: RefreshTokenStore;
  /**
   * Where revoked refresh-token families are recorded (reuse detected), so
   * that bearerAuth() given the same store refuses their access tokens
   * before they expire. Default: none (access tokens live to their expiry).
   */
  revokedFamilies?: RevokedFamilies;
  /** Path of the endpoint. Default: `'/v1/oauth2/token'`. */
  path?: string;
  /** Access-token lifetime in seconds, the `expires_in` value (1 to 86400). Default: 3600. */
  accessTokenTtlSeconds?: number;
  /** Refresh-token lifetime in seconds, renewed by every rotation (60 to 31536000). Default: 1209600 (14 days). */
  refreshTokenTtlSeconds?: number;
  /** Every scope the service knows. Default: `[]` (no scopes). */
  scopes?: readonly string[];
  /** Refuse requests without client authentication. Default: `false` (the conventions: client authentication is optional). */
  requireClient?: boolean;
  /** The worker pool that verifies passwords. Default: the shared pool of hashPassword(). */
  passwordHasher?: PasswordHasher;
  /**
   * bcrypt cost of the dummy hash an unknown username is checked against, so
   * that it costs as much as a wrong password: use your users' cost. Default: 12.
   */
  passwordCost?: number;
  /**
   * The sign-in guard of the password grant: a signInGuard() shared with
   * every other door that checks a password (give the same instance), its
   * options for a guard of this router alone, or `false` to turn it off.
   * Default: a guard of this router with the defaults of signInGuard().
   */
  signInGuard?: SignInGuard | SignInGuardOptions | false;
  /** Realm of the `WWW-Authenticate: Basic` challenge. Default: `'api'`. */
  realm?: string;
}

const OPTION_NAMES = [
  'keys',
  'issuer',
  'audience',
  'users',
  'clients',
  'refreshTokens',
  'revokedFamilies',
  'path',
  'accessTokenTtlSeconds',
  'refreshTokenTtlSeconds',
  'scopes',
  'requireClient',
  'passwordHasher',
  'passwordCost',
  'signInGuard',
  'realm',
] as const;

export const TOKEN_ROUTER = 'tokenRouter';

/** Old names of tokenRouter()'s options (issue 13: a unit in the name of a number that has one). */
export const TOKEN_ROUTER_HINTS = {
  accessTokenTtl: 'It is now `accessTokenTtlSeconds` (seconds).',
  refreshTokenTtl: 'It is now `refreshTokenTtlSeconds` (seconds).',
} as const;

/** The checked options of tokenRouter(), with defaults applied: what the grants read. */
export interface TokenRouterConfiguration {
  readonly keys: readonly ReadyKey[];
  readonly issuer: string;
  readonly audience: string | readonly string[];
  readonly clients: ClientStore | undefined;
  readonly refreshTokens: RefreshTokenStore;
  readonly revokedFamilies: RevokedFamilies | undefined;
  readonly path: string;
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlMs: number;
  readonly scopes: ReadonlySet<string>;
  readonly requireClient: boolean;
  /** The password check of the password grant: sign-in guard, user lookup, bcrypt, dummy hash. */
  readonly checkPassword: PasswordSignIn;
  readonly realm: string;
}

const hasMethods = (value: unknown, methods: readonly string[]): boolean =>
  typeof value === 'object' &&
  value !== null &&
  methods.every((name) => typeof (value as Record<string, unknown>)[name] === 'function');

const REFRESH_METHODS = ['create', 'find', 'rotate', 'revokeByTokenHash', 'revokeFamily'];
const REVOKED_METHODS = ['revoke', 'isRevoked'];

/** Checks tokenRouter()'s options in one step; a wrong one throws ConfigurationError. */
export function readTokenRouterOptions(options: unknown): TokenRouterConfiguration {
  const F = TOKEN_ROUTER;
  const given = readOptions<TokenRouterOptions>(F, options, OPTION_NAMES, TOKEN_ROUTER_HINTS);
  const keys = readKeys(F, given.keys, true);
  const issuer = checkString(F, 'issuer', given.issuer);
  const audience = checkAudience(F, given.audience);
  if (given.clients !== undefined && !hasMethods(given.clients, ['findById'])) {
    invalidOption(F, 'clients', given.clients, 'a ClientStore (findById)');
  }
  if (given.refreshTokens !== undefined && !hasMethods(given.refreshTokens, REFRESH_METHODS)) {
    invalidOption(F, 'refreshTokens', given.refreshTokens, `a RefreshTokenStore (${REFRESH_METHODS.join(', ')})`);
  }
  if (given.revokedFamilies !== undefined && !hasMethods(given.revokedFamilies, REVOKED_METHODS)) {
    invalidOption(F, 'revokedFamilies', given.revokedFamilies, `a RevokedFamilies (${REVOKED_METHODS.join(', ')})`);
  }
  const path = given.path === undefined ? TOKEN_PATH : checkString(F, 'path', given.path);
  if (!path.startsWith('/')) invalidOption(F, 'path', path, "a path starting with '/'");
  return {
    keys,
    issuer,
    audience,
    clients: given.clients,
    refreshTokens: given.refreshTokens ?? new MemoryRefreshTokenStore(),
    revokedFamilies: given.revokedFamilies,
    path,
    accessTokenTtlSeconds:
      given.accessTokenTtlSeconds === undefined
        ? DEFAULT_ACCESS_TOKEN_TTL
        : checkInteger(F, 'accessTokenTtlSeconds', given.accessTokenTtlSeconds, { min: 1, max: MAX_ACCESS_TOKEN_TTL }),
    refreshTokenTtlMs:
      (given.refreshTokenTtlSeconds === undefined
        ? DEFAULT_REFRESH_TOKEN_TTL
        : checkInteger(F, 'refreshTokenTtlSeconds', given.refreshTokenTtlSeconds, { min: 60, max: 31_536_000 })) * 1000,
    scopes: new Set(given.scopes === undefined ? [] : checkScopeList(F, 'scopes', given.scopes)),
    requireClient: given.requireClient === undefined ? false : checkBoolean(F, 'requireClient', given.requireClient),
    checkPassword: passwordSignIn(
      {
        users: given.users as UserStore,
        ...(given.signInGuard === undefined ? {} : { signInGuard: given.signInGuard }),
        ...(given.passwordHasher === undefined ? {} : { passwordHasher: given.passwordHasher }),
        ...(given.passwordCost === undefined ? {} : { passwordCost: given.passwordCost }),
      },
      F,
    ),
    realm: given.realm === undefined ? 'api' : checkRealm(F, given.realm),
  };
}
