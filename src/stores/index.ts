export { type CounterState, type CounterStore, secondsUntil } from './counter-store.js';
export { DEFAULT_SWEEP_INTERVAL_MS, MemoryCounterStore, type MemoryCounterStoreOptions } from './memory-counter-store.js';
export {
  hashSlot,
  type RedisClient,
  type RedisClusterClient,
  type RedisSingleClient,
  type RedisStoreOptions,
  RedisTimeoutError,
} from './redis/index.js';
export {
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_REDIS_PREFIX,
  RedisCounterStore,
  type RedisCounterStoreOptions,
} from './redis-counter-store.js';
export { StoreUnavailableError } from './store-error.js';
