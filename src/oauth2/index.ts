export type { AuthContext } from '../auth-context.js';
export type { AccessTokenClaims } from './access-tokens.js';
export { bearerAuth, requireScope } from './bearer-auth.js';
export type { BearerAuthOptions } from './bearer-auth-options.js';
export type { SubjectActiveCheck } from './checks.js';
export {
  type DpopAlgorithm,
  type DpopOptions,
  type DpopReplayStore,
  MemoryDpopReplayStore,
  type MemoryDpopReplayStoreOptions,
} from './dpop.js';
export { dpopAuth } from './dpop-auth.js';
export type { DpopAuthOptions } from './dpop-auth-options.js';
export type { IntrospectionRight, Introspectors } from './introspection.js';
export type { AccessTokenAlgorithm, AccessTokenKey, AsymmetricKey, HmacKey } from './keys.js';
export {
  hashPassword,
  PasswordHasher,
  type PasswordHasherOptions,
  type PasswordHasherStats,
  type PasswordTaskOptions,
  verifyPassword,
} from './password-hasher.js';
export { type PasswordSignIn, type PasswordSignInOptions, passwordSignIn } from './password-sign-in.js';
export { RedisDpopReplayStore } from './redis-dpop-replay.js';
export { RedisRevokedFamilies, type RedisRevokedFamiliesOptions } from './redis-revoked-families.js';
export {
  RedisClientStore,
  RedisRefreshTokenStore,
  type RedisRefreshTokenStoreOptions,
  type RedisStoreOptions,
  RedisUserStore,
} from './redis-stores.js';
export { MemoryRevokedFamilies, type RevokedFamilies } from './revoked-families.js';
export { type SignInAttempt, type SignInGuard, signInGuard } from './sign-in-guard.js';
export type { SignInGuardOptions } from './sign-in-guard-options.js';
export {
  type ClientRecord,
  type ClientStore,
  type FoundFamily,
  type GrantType,
  MemoryClientStore,
  MemoryRefreshTokenStore,
  type MemoryRefreshTokenStoreOptions,
  MemoryUserStore,
  normalizeUsername,
  type PasswordHashUpdate,
  type RefreshFamily,
  type RefreshTokenStore,
  type RotateResult,
  type UserRecord,
  type UserStore,
} from './stores.js';
export { type TokenEndpointErrorsOptions, tokenEndpointErrors } from './token-endpoint-errors.js';
export type { TokenErrorCode } from './token-errors.js';
export {
  type RevokeRefreshTokenOptions,
  revokeRefreshToken,
  type TokenRouterConfiguration,
  type TokenRouterOptions,
  tokenRouter,
} from './token-router.js';
