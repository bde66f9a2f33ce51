export type { AuthContext } from '../auth-context.js';
export type { AccessTokenClaims } from './access-tokens.js';
export { bearerAuth, requireScope } from './bearer-auth.js';
export type { BearerAuthOptions, TokenKeyOptions } from './bearer-auth-options.js';
export type { SubjectActiveCheck } from './checks.js';
export type { ClientRecord, ClientStore } from './clients.js';
export {
  type DpopAlgorithm,
  type DpopOptions,
  type DpopReplayStore,
  MemoryDpopReplayStore,
  type MemoryDpopReplayStoreOptions,
} from './dpop.js';
export { dpopAuth } from './dpop-auth.js';
export type { DpopAuthOptions } from './dpop-auth-options.js';
export type {
  AccessTokenAlgorithm,
  AccessTokenKey,
  AsymmetricAlgorithm,
  AsymmetricKey,
  HmacKey,
  RemoteAlgorithm,
} from './keys.js';
export { RedisDpopReplayStore } from './redis-dpop-replay.js';
export { RedisRevokedFamilies, type RedisRevokedFamiliesOptions } from './redis-revoked-families.js';
export type { JwksOptions } from './remote-key-options.js';
export { MemoryRevokedFamilies, type RevokedFamilies } from './revoked-families.js';
export type { TokenService } from './token-service.js';
