export {
  AUTHORIZATION_PATH,
  type AuthorizationErrorPage,
  type AuthorizationOptions,
  type ErrorPageRenderer,
} from './authorization-options.js';
export type {
  AuthorizationHelpers,
  ConsentPrompt,
  ConsentRestart,
} from './endpoints/authorization-endpoint.js';
export type { TokenEndpoints } from './endpoints/document-part.js';
export { type TokenEndpointErrorsOptions, tokenEndpointErrors } from './endpoints/token-endpoint-errors.js';
export {
  type RevokeRefreshTokenOptions,
  revokeRefreshToken,
  type TokenRouter,
  type TokenRouterConfiguration,
  type TokenRouterOptions,
  tokenRouter,
} from './endpoints/token-router.js';
export type { IntrospectionRight, Introspectors } from './protocol/introspectors.js';
export type { TokenErrorCode } from './protocol/token-errors.js';
export { type AuthorizationSession, type FindSession, sessionFromCookie } from './sessions/authorization-session.js';
export type { ConsentWithdrawal, WithdrawConsent } from './sessions/consent-withdrawal.js';
export {
  type BrowserDevice,
  DEVICE_COOKIE,
  type DeviceCookies,
  type DeviceCookiesOptions,
  deviceCookies,
} from './sign-in/device-cookie.js';
export {
  hashPassword,
  PasswordHasher,
  type PasswordHasherOptions,
  type PasswordHasherStats,
  type PasswordTaskOptions,
  verifyPassword,
} from './sign-in/password-hasher.js';
export { type PasswordSignIn, type PasswordSignInOptions, passwordSignIn } from './sign-in/password-sign-in.js';
export { type SignInAttempt, type SignInAttemptOptions, type SignInGuard, signInGuard } from './sign-in/sign-in-guard.js';
export type { SignInGuardOptions } from './sign-in/sign-in-guard-options.js';
export {
  CLIENT_TYPES,
  type ClientRegistration,
  type ClientType,
  LEGACY_GRANTS,
  type RegisteredClient,
  type RegisteredClientStore,
} from './stores/client-registration.js';
export {
  type AuthorizationCodeStore,
  type CodeGrant,
  MemoryCodeStore,
  type RedeemResult,
} from './stores/code-store.js';
export { type ConsentRecord, type ConsentStore, MemoryConsentStore } from './stores/consent-store.js';
export { RedisCodeStore } from './stores/redis-code-store.js';
export { RedisConsentStore } from './stores/redis-consent-store.js';
export { RedisSessionStore, type RedisSessionStoreOptions } from './stores/redis-session-store.js';
export { RedisSignInGuardStore } from './stores/redis-sign-in-guard-store.js';
export {
  RedisClientStore,
  RedisRefreshTokenStore,
  type RedisRefreshTokenStoreOptions,
  RedisUserStore,
} from './stores/redis-stores.js';
export { describeDevice } from './stores/session-device.js';
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
} from './stores/session-store.js';
export {
  MemorySignInGuardStore,
  type SignInGuardStore,
  type SignInIdentity,
  type SignInLimits,
  type SignInOutcome,
  type SignInRefusal,
  type SignInReservation,
} from './stores/sign-in-guard-store.js';
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
  usernameAllowed,
} from './stores/stores.js';
export { RotatingKeys, type RotatingKeysOptions } from './token-keys.js';
