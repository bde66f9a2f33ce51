import {
  checkAudience,
  checkBoolean,
  checkInteger,
  checkRealm,
  checkScopeList,
  checkString,
  checkSubjectActive,
  DpopVerifier,
  invalidOption,
  readDpopOptions,
  readOptions,
} from 'express-api-conventions/extend';
import type {
  AccessTokenKey,
  ClientStore,
  DpopOptions,
  RevokedFamilies,
  SubjectActiveCheck,
} from 'express-api-conventions/oauth2';
import { type AuthorizationConfiguration, type AuthorizationOptions, readAuthorizationOptions } from './authorization-options.js';
import { type IntrospectionRight, type Introspectors, readIntrospectors } from './protocol/introspectors.js';
import { issuerUrl } from './protocol/issuer.js';
import { INTROSPECTION_PATH, JWKS_PATH, metadataPath, REVOCATION_PATH, TOKEN_PATH } from './protocol/paths.js';
import type { PasswordHasher } from './sign-in/password-hasher.js';
import { type PasswordSignIn, passwordSignIn } from './sign-in/password-sign-in.js';
import { SIGN_IN_DEADLINE_RANGE } from './sign-in/request-deadline.js';
import type { SignInGuard } from './sign-in/sign-in-guard.js';
import type { SignInGuardOptions } from './sign-in/sign-in-guard-options.js';
import { MemoryRefreshTokenStore, type RefreshTokenStore, type UserStore } from './stores/stores.js';
import { type RotatingKeys, readTokenKeys, type TokenKeys } from './token-keys.js';

// The router's default paths, read by the tests and by tokenEndpointErrors() from here.
export { INTROSPECTION_PATH, REVOCATION_PATH, TOKEN_PATH };

/** Default access-token lifetime, seconds (the reference server's `ACCESS_TOKEN_TTL`). */
export const DEFAULT_ACCESS_TOKEN_TTL = 3600;
/** Longest access-token lifetime accepted, seconds: one day. */
export const MAX_ACCESS_TOKEN_TTL = 86_400;
/** Default refresh-token lifetime, seconds: 14 days, renewed by every rotation. */
export const DEFAULT_REFRESH_TOKEN_TTL = 1_209_600;

export interface TokenRouterOptions {
  /**
   * Access-token keys; the first signs, all verify (rotation by `kid`). A
   * list, or a RotatingKeys that reads the list from state every instance
   * shares, to rotate without restarts. Required.
   */
  keys: readonly AccessTokenKey[] | RotatingKeys;
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
   * Your users' bcrypt cost: a stored hash of a lower cost is upgraded to it
   * at the user's next successful sign-in, and unknown usernames are checked
   * at it until a known user signs in (from then on, at the cost of the
   * most frequent among the last 32 stored hashes verified, so that both take as long). Default: the
   * `passwordHasher`'s cost (12 for the shared pool).
   */
  passwordCost?: number;
  /**
   * Whether a successful sign-in replaces an outdated stored hash with one
   * of today's format and `passwordCost` (the store's `updatePasswordHash()`).
   * Turn it off for a table another system reads too: it cannot verify the
   * new format (docs/password-hashes.md). Default: `true`.
   */
  upgradePasswordHashes?: boolean;
  /**
   * The sign-in guard of the password grant: a signInGuard() shared with
   * every other door that checks a password (give the same instance), its
   * options for a guard of this router alone, or `false` to turn it off.
   * Default: a guard of this router with the defaults of signInGuard().
   */
  signInGuard?: SignInGuard | SignInGuardOptions | false;
  /**
   * A password grant's deadline in ms (100 to 60000), counted from when the
   * request reached this router: answered, or refused with 503
   * `temporarily_unavailable` or 429 and `Retry-After`, within it; the sign-in
   * guard's queue, the user store and the password pool spend one budget.
   * Default: 5000.
   */
  signInDeadlineMs?: number;
  /** Realm of the `WWW-Authenticate: Basic` challenge. Default: `'api'`. */
  realm?: string;
  /**
   * Whether a user (a token's `sub`) still exists, as given to bearerAuth():
   * a refresh token of a user for whom it answers `false` is refused with
   * `invalid_grant` and its family revoked, and the password grant issues
   * nothing for that user. Default: none.
   */
  isSubjectActive?: SubjectActiveCheck;
  /**
   * The password grant (RFC 6749 §4.3), which RFC 9700 §2.4 says MUST NOT be
   * used, and which docs/conventions.md rule 13.2 requires: `true` answers it for every client; a
   * list of client ids answers it only for those clients (your first-party
   * applications), others get `unauthorized_client`; `false` turns it off
   * (`unsupported_grant_type`) while refresh tokens already issued keep
   * working. Default: `true`.
   */
  passwordGrant?: boolean | readonly string[];
  /**
   * Serve the RFC 8414 metadata document at
   * `/.well-known/oauth-authorization-server` (followed by the issuer's path,
   * RFC 8414 §3.1). Needs an `issuer` that is an `https` URL without query or
   * fragment (`http` only on a loopback host). Default: `true` when the
   * issuer is such a URL, else `false`.
   */
  metadata?: boolean;
  /**
   * Path of the RFC 7009 revocation endpoint, or `false` for none. Default:
   * `'/v1/oauth2/revocations'`.
   */
  revocationPath?: string | false;
  /**
   * Path of the RFC 7662 introspection endpoint, or `false` for none. It
   * answers only the `introspectors`, each authenticated with its secret.
   * Default: `'/v1/oauth2/introspections'`.
   */
  introspectionPath?: string | false;
  /**
   * Path of the public keys, a JWK Set (RFC 7517), named `jwks_uri` in the
   * metadata, or `false` for none. Served only when a key is asymmetric
   * (RS256, ES256, EdDSA): a HS256 secret is never published. Default:
   * `'/v1/oauth2/keys'`.
   */
  jwksPath?: string | false;
  /**
   * Who may introspect, by client id: `'resource-server'` learns of every
   * access token for the audience (and of its own refresh tokens),
   * `'own-tokens'` only of the tokens issued to that client; any other
   * token is `{ "active": false }` to them. A client not named gets
   * `unauthorized_client`. Needs `clients`. Default: `{}` (nobody).
   */
  introspectors?: Introspectors;
  /**
   * Seconds during which the refresh token rotated last may be presented
   * again, before its successor was ever used, and answer the same new
   * refresh token instead of revoking the family: a client whose network
   * dropped the answer of its refresh retries without being signed out
   * (0 to 300; 0 turns it off). Anything else (an older token, the same one
   * after the grace, or after its successor was used) still revokes the
   * family (RFC 9700 §4.14.2). Default: `0`.
   */
  refreshGraceSeconds?: number;
  /**
   * DPoP (RFC 9449), opt-in: a token request that carries a `DPoP` proof
   * gets an access token bound to the proof's key (`cnf.jkt`, `token_type:
   * DPoP`), which dpopAuth() then accepts only with a proof of that key;
   * requests without a proof keep getting `bearer` tokens. `true` for the
   * defaults, or DpopOptions (give a RedisDpopReplayStore to several
   * instances). Needs an `issuer` that is an https URL: proofs name the
   * endpoint's URL. Default: `false`.
   */
  dpop?: boolean | DpopOptions;
  /**
   * The authorization endpoint and the authorization code grant with PKCE
   * (RFC 6749 §4.1, RFC 7636; docs/authorization-code.md): the application's
   * sessions, sign-in page and consent page, and where codes and consents
   * live. Needs `clients` (with redirect URIs) and an `issuer` that is an
   * https URL (http only on a loopback host): every answer names it (`iss`,
   * RFC 9207). Default: none (no authorization endpoint).
   */
  authorization?: AuthorizationOptions | false;
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
  'upgradePasswordHashes',
  'signInGuard',
  'signInDeadlineMs',
  'realm',
  'isSubjectActive',
  'passwordGrant',
  'metadata',
  'revocationPath',
  'introspectionPath',
  'jwksPath',
  'introspectors',
  'refreshGraceSeconds',
  'dpop',
  'authorization',
] as const;

export const TOKEN_ROUTER = 'tokenRouter';

/** Names of tokenRouter()'s options without their unit, refused with the name to use (a number's unit is in its name). */
export const TOKEN_ROUTER_HINTS = {
  accessTokenTtl: 'It is now `accessTokenTtlSeconds` (seconds).',
  refreshTokenTtl: 'It is now `refreshTokenTtlSeconds` (seconds).',
} as const;

/** The checked options of tokenRouter(), with defaults applied: what the grants read. */
export interface TokenRouterConfiguration {
  /** The keys now (the first signs, all verify), and what the router derives its other keys from. */
  readonly keys: TokenKeys;
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
  /** The password check of the password grant: sign-in guard, user lookup, bcrypt, stand-in hash for unknown users. */
  readonly checkPassword: PasswordSignIn;
  readonly realm: string;
  readonly isSubjectActive: SubjectActiveCheck | undefined;
  /** Who may use the password grant: every client, nobody, or the listed client ids. */
  readonly passwordGrant: 'all' | 'off' | ReadonlySet<string>;
  /** Where the RFC 8414 document is served; undefined when it is not. */
  readonly metadataPath: string | undefined;
  readonly revocationPath: string | undefined;
  readonly introspectionPath: string | undefined;
  /** Where the public keys are served; undefined when none is asymmetric, or it is off. */
  readonly jwksPath: string | undefined;
  /** Who may introspect (client id → right); empty: nobody. */
  readonly introspectors: ReadonlyMap<string, IntrospectionRight>;
  /** The refresh grace in milliseconds; 0 when off. */
  readonly refreshGraceMs: number;
  /** The proof check and the token endpoint's public URL (`htu`), when DPoP is on. */
  readonly dpop: { readonly verifier: DpopVerifier; readonly tokenUrl: string } | undefined;
  /** The authorization endpoint, when it is on. */
  readonly authorization: AuthorizationConfiguration | undefined;
}

function readPasswordGrant(value: unknown): TokenRouterConfiguration['passwordGrant'] {
  if (value === undefined || value === true) return 'all';
  if (value === false) return 'off';
  if (Array.isArray(value) && value.length > 0 && value.every((id) => typeof id === 'string' && id.length > 0)) {
    return new Set(value as string[]);
  }
  return invalidOption(TOKEN_ROUTER, 'passwordGrant', value, 'true, false, or a non-empty array of client ids');
}

function readEndpointPath(name: string, value: unknown, fallback: string): string | undefined {
  if (value === false) return undefined;
  const path = value === undefined ? fallback : checkString(TOKEN_ROUTER, name, value);
  if (!path.startsWith('/')) invalidOption(TOKEN_ROUTER, name, path, "a path starting with '/', or false");
  return path;
}

function readDpop(value: unknown, issuer: string, path: string): TokenRouterConfiguration['dpop'] {
  if (value === undefined || value === false) return undefined;
  const options = value === true ? {} : value;
  const verifier = new DpopVerifier(readDpopOptions(TOKEN_ROUTER, options));
  const url = issuerUrl(issuer);
  if (url === undefined) {
    invalidOption(
      TOKEN_ROUTER,
      'issuer',
      issuer,
      'an https URL (http only on a loopback host) when `dpop` is on: proofs name the URL',
    );
  }
  return { verifier, tokenUrl: new URL(path, url.origin).href };
}

function readMetadataPath(value: unknown, issuer: string): string | undefined {
  const url = issuerUrl(issuer);
  if (value === undefined) return url === undefined ? undefined : metadataPath(url);
  if (!checkBoolean(TOKEN_ROUTER, 'metadata', value)) return undefined;
  if (url === undefined) {
    invalidOption(
      TOKEN_ROUTER,
      'issuer',
      issuer,
      'an https URL without query or fragment (http only on a loopback host) when `metadata` is on (RFC 8414 §2)',
    );
  }
  return metadataPath(url);
}

const hasMethods = (value: unknown, methods: readonly string[]): boolean =>
  typeof value === 'object' &&
  value !== null &&
  methods.every((name) => typeof (value as Record<string, unknown>)[name] === 'function');

const REFRESH_METHODS = ['create', 'find', 'rotate', 'revokeByTokenHash', 'revokeFamily'];
const REVOKED_METHODS = ['revoke', 'isRevoked'];

/** Introspectors need a client store to authenticate against, and an endpoint to ask. */
function checkIntrospectors(config: TokenRouterConfiguration): void {
  if (config.introspectors.size === 0) return;
  const named = Object.fromEntries(config.introspectors);
  if (config.clients === undefined) invalidOption(TOKEN_ROUTER, 'introspectors', named, 'empty when no `clients` store is given');
  if (config.introspectionPath === undefined) {
    invalidOption(TOKEN_ROUTER, 'introspectors', named, 'empty when `introspectionPath` is false');
  }
}

/** The authorization endpoint needs registered clients (their redirect URIs) and an issuer to name in `iss` (RFC 9207). */
function checkAuthorization(config: TokenRouterConfiguration): void {
  if (config.authorization === undefined) return;
  if (typeof config.refreshTokens.revokeClientFamilies !== 'function') {
    invalidOption(
      TOKEN_ROUTER,
      'refreshTokens',
      config.refreshTokens,
      'a RefreshTokenStore with revokeClientFamilies() when `authorization` is on: a withdrawn consent revokes the client’s tokens',
    );
  }
  if (config.clients === undefined) {
    invalidOption(TOKEN_ROUTER, 'clients', undefined, 'a ClientStore when `authorization` is on: redirect URIs are registered');
  }
  if (issuerUrl(config.issuer) === undefined) {
    invalidOption(
      TOKEN_ROUTER,
      'issuer',
      config.issuer,
      'an https URL without query or fragment (http only on a loopback host) when `authorization` is on (RFC 9207)',
    );
  }
}

/** The stores given are of the right shape: each has the methods the endpoints call. */
function checkStores(given: Partial<TokenRouterOptions>): void {
  if (given.clients !== undefined && !hasMethods(given.clients, ['findById'])) {
    invalidOption(TOKEN_ROUTER, 'clients', given.clients, 'a ClientStore (findById)');
  }
  if (given.refreshTokens !== undefined && !hasMethods(given.refreshTokens, REFRESH_METHODS)) {
    invalidOption(TOKEN_ROUTER, 'refreshTokens', given.refreshTokens, `a RefreshTokenStore (${REFRESH_METHODS.join(', ')})`);
  }
  if (given.revokedFamilies !== undefined && !hasMethods(given.revokedFamilies, REVOKED_METHODS)) {
    invalidOption(TOKEN_ROUTER, 'revokedFamilies', given.revokedFamilies, `a RevokedFamilies (${REVOKED_METHODS.join(', ')})`);
  }
}

/** The password grant's check, from the sign-in options (passwordSignIn() checks each). */
function readPasswordSignIn(given: Partial<TokenRouterOptions>): PasswordSignIn {
  return passwordSignIn(
    {
      users: given.users as UserStore,
      ...(given.signInGuard === undefined ? {} : { signInGuard: given.signInGuard }),
      ...(given.passwordHasher === undefined ? {} : { passwordHasher: given.passwordHasher }),
      ...(given.passwordCost === undefined ? {} : { passwordCost: given.passwordCost }),
      ...(given.upgradePasswordHashes === undefined ? {} : { upgradePasswordHashes: given.upgradePasswordHashes }),
      ...(given.signInDeadlineMs === undefined
        ? {}
        : { deadlineMs: checkInteger(TOKEN_ROUTER, 'signInDeadlineMs', given.signInDeadlineMs, SIGN_IN_DEADLINE_RANGE) }),
    },
    TOKEN_ROUTER,
  );
}

/** Every endpoint answers on a path of its own: two on one path would hide one of them. */
function checkDistinctPaths(config: TokenRouterConfiguration): void {
  const paths = [
    config.path,
    config.revocationPath,
    config.introspectionPath,
    config.jwksPath,
    config.authorization?.path,
    config.authorization?.decisionPath,
  ].filter((p) => p !== undefined);
  if (new Set(paths).size !== paths.length) {
    invalidOption(
      TOKEN_ROUTER,
      'revocationPath',
      paths,
      'every endpoint (token, revocation, introspection, keys, authorization, consent decision) on a path of its own',
    );
  }
}

/** Checks tokenRouter()'s options in one step; a wrong one throws ConfigurationError. */
export function readTokenRouterOptions(options: unknown): TokenRouterConfiguration {
  const F = TOKEN_ROUTER;
  const given = readOptions<TokenRouterOptions>(F, options, OPTION_NAMES, TOKEN_ROUTER_HINTS);
  const keys = readTokenKeys(F, given.keys);
  const issuer = checkString(F, 'issuer', given.issuer);
  const audience = checkAudience(F, given.audience);
  checkStores(given);
  const path = given.path === undefined ? TOKEN_PATH : checkString(F, 'path', given.path);
  if (!path.startsWith('/')) invalidOption(F, 'path', path, "a path starting with '/'");
  const config: TokenRouterConfiguration = {
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
    checkPassword: readPasswordSignIn(given),
    realm: given.realm === undefined ? 'api' : checkRealm(F, given.realm),
    isSubjectActive: checkSubjectActive(F, given.isSubjectActive),
    passwordGrant: readPasswordGrant(given.passwordGrant),
    metadataPath: readMetadataPath(given.metadata, issuer),
    revocationPath: readEndpointPath('revocationPath', given.revocationPath, REVOCATION_PATH),
    introspectionPath: readEndpointPath('introspectionPath', given.introspectionPath, INTROSPECTION_PATH),
    jwksPath: keys.current().some((key) => key.verifyingKey.type === 'public')
      ? readEndpointPath('jwksPath', given.jwksPath, JWKS_PATH)
      : undefined,
    introspectors: readIntrospectors(F, given.introspectors),
    refreshGraceMs:
      given.refreshGraceSeconds === undefined
        ? 0
        : checkInteger(F, 'refreshGraceSeconds', given.refreshGraceSeconds, { min: 0, max: 300 }) * 1000,
    dpop: readDpop(given.dpop, issuer, path),
    authorization: readAuthorizationOptions(given.authorization),
  };
  checkIntrospectors(config);
  checkAuthorization(config);
  checkDistinctPaths(config);
  return config;
}
