export type { AuthContext } from '../auth-context.js';
export { type BasicCredentials, isBasicScheme, parseBasicCredentials } from '../http/basic-credentials.js';
// SPEC.md "Token failure" headers live in the leaf layer; bearer tokens are where they are used.
export { TOKEN_FAILURE_HEADERS } from '../http/spec.js';
export { ACCESS_TOKEN_TYPE, type AccessTokenClaims } from './access-tokens.js';
export { bearerAuth, requireScope } from './bearer-auth.js';
export type { BearerAuthOptions } from './bearer-auth-options.js';
export type { SubjectActiveCheck } from './checks.js';
export {
  accessTokenHash,
  DEFAULT_DPOP_PROOF_WINDOW,
  DPOP_ALGORITHMS,
  DPOP_PROOF_TYPE,
  DPOP_TOKEN_TYPE,
  type DpopAlgorithm,
  type DpopOptions,
  type DpopReplayStore,
  jwkThumbprint,
  MemoryDpopReplayStore,
} from './dpop.js';
export { dpopAuth } from './dpop-auth.js';
export type { DpopAuthOptions } from './dpop-auth-options.js';
export {
  ACCESS_TOKEN_ALGORITHMS,
  type AccessTokenAlgorithm,
  type AccessTokenKey,
  type AsymmetricKey,
  type HmacKey,
  MIN_HMAC_SECRET_BYTES,
  MIN_RSA_MODULUS_BITS,
} from './keys.js';
export {
  BCRYPT_COST_RANGE,
  BCRYPT_MAX_INPUT_BYTES,
  DEFAULT_BCRYPT_COST,
  DEFAULT_MAX_HASH_WAIT_MS,
  defaultPasswordHasher,
  FAILED_KEY_MEMORY_MS,
  hashPassword,
  PasswordHasher,
  type PasswordHasherOptions,
  type PasswordHasherStats,
  type PasswordTaskOptions,
  PREHASHED_BCRYPT_PREFIX,
  verifyPassword,
} from './password-hasher.js';
export { type PasswordSignIn, type PasswordSignInOptions, passwordSignIn } from './password-sign-in.js';
export { RedisDpopReplayStore } from './redis-dpop-replay.js';
export {
  DEFAULT_REVOKED_POLL_INTERVAL_MS,
  RedisRevokedFamilies,
  type RedisRevokedFamiliesOptions,
} from './redis-revoked-families.js';
export {
  DEFAULT_OAUTH2_REDIS_PREFIX,
  RedisClientStore,
  RedisRefreshTokenStore,
  type RedisRefreshTokenStoreOptions,
  type RedisStoreOptions,
  RedisUserStore,
} from './redis-stores.js';
export { DEFAULT_CLOCK_TOLERANCE } from './resource-token.js';
export { MemoryRevokedFamilies, type RevokedFamilies } from './revoked-families.js';
export {
  SIGN_IN_POLICIES,
  type SignInAttempt,
  type SignInGuard,
  signInAddressKey,
  signInGuard,
} from './sign-in-guard.js';
export {
  DEFAULT_GUARD_WINDOW_SECONDS,
  DEFAULT_MAX_FAILURES_PER_ADDRESS,
  DEFAULT_MAX_FAILURES_PER_USERNAME,
  SIGN_IN_QUEUE_TIMEOUT_MS,
  type SignInGuardOptions,
} from './sign-in-guard-options.js';
export {
  type ClientRecord,
  type ClientStore,
  DEFAULT_REFRESH_SWEEP_INTERVAL_MS,
  type FoundFamily,
  GRANT_TYPES,
  type GrantType,
  hashClientSecret,
  hashRefreshToken,
  MemoryClientStore,
  MemoryRefreshTokenStore,
  type MemoryRefreshTokenStoreOptions,
  MemoryUserStore,
  normalizeUsername,
  REFRESH_TOKEN_BYTES,
  REMEMBERED_REFRESH_TOKENS,
  REMEMBERED_REFRESH_TOKENS_RANGE,
  type RefreshFamily,
  type RefreshTokenStore,
  type RotateResult,
  type UserRecord,
  type UserStore,
} from './stores.js';
export { type TokenEndpointErrorsOptions, tokenEndpointErrors } from './token-endpoint-errors.js';
export {
  TOKEN_CACHE_CONTROL,
  TOKEN_ERROR_PRAGMA,
  TOKEN_ERRORS,
  type TokenErrorCode,
  tokenError,
  tokenErrorShape,
} from './token-errors.js';
export {
  DEFAULT_ACCESS_TOKEN_TTL,
  DEFAULT_REFRESH_TOKEN_TTL,
  INTROSPECTION_PATH,
  REVOCATION_PATH,
  type RevokeRefreshTokenOptions,
  revokeRefreshToken,
  TOKEN_PATH,
  TOKEN_REQUEST_TYPE,
  TOKEN_TYPE,
  type TokenRouterConfiguration,
  type TokenRouterOptions,
  tokenRouter,
} from './token-router.js';
