export {
  DEFAULT_COMMAND_TIMEOUT_MS,
  type RedisClient,
  type RedisClusterClient,
  type RedisCommandOptions,
  RedisConnection,
  type RedisSingleClient,
  type RedisStoreOptions,
  RedisTimeoutError,
  readRedisOptions,
} from './connection.js';
export { hashSlot, redisKey, sharesSlot, taggedKey } from './keys.js';
export { RedisScript, replyText } from './script.js';
