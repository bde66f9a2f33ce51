export type { CounterState, CounterStore } from './counter-store.js';
export { MemoryCounterStore, type MemoryCounterStoreOptions } from './memory-counter-store.js';
export {
  type RedisClient,
  type RedisClusterClient,
  type RedisSingleClient,
  type RedisStoreOptions,
  RedisTimeoutError,
} from './redis/index.js';
export { RedisCounterStore, type RedisCounterStoreOptions } from './redis-counter-store.js';
export { StoreUnavailableError } from './store-error.js';
