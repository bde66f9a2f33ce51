export {
  type BrowserDevice,
  DEVICE_COOKIE,
  type DeviceCookies,
  type DeviceCookiesOptions,
  deviceCookies,
} from './device-cookie.js';
export type { IntrospectionRight, Introspectors } from './introspectors.js';
export {
  hashPassword,
  PasswordHasher,
  type PasswordHasherOptions,
  type PasswordHasherStats,
  type PasswordTaskOptions,
  verifyPassword,
} from './password-hasher.js';
export { type PasswordSignIn, type PasswordSignInOptions, passwordSignIn } from './password-sign-in.js';
export { RedisSessionStore, type RedisSessionStoreOptions } from './redis-session-store.js';
export { RedisSignInGuardStore } from './redis-sign-in-guard-store.js';
export {
  RedisClientStore,
  RedisRefreshTokenStore,
  type RedisRefreshTokenStoreOptions,
  RedisUserStore,
} from './redis-stores.js';
export { describeDevice } from './session-device.js';
export {
  DEFAULT_SESSION_TTL_SECONDS,
  type LiveSession,
  MemorySessionStore,
  type NewSession,
  type SessionCallOptions,
  type SessionCreateOptions,
  type SessionStore,
  type SessionStoreOptions,
  type SessionSummary,
} from './session-store.js';
export { type SignInAttempt, type SignInAttemptOptions, type SignInGuard, signInGuard } from './sign-in-guard.js';
export type { SignInGuardOptions } from './sign-in-guard-options.js';
export {
  MemorySignInGuardStore,
  type SignInGuardStore,
  type SignInIdentity,
  type SignInLimits,
  type SignInOutcome,
  type SignInRefusal,
  type SignInReservation,
} from './sign-in-guard-store.js';
export {
  type FoundFamily,
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
  type TokenRouter,
  type TokenRouterConfiguration,
  type TokenRouterOptions,
  tokenRouter,
} from './token-router.js';
