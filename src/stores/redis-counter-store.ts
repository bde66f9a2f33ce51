import type { CounterState, CounterStore } from './counter-store.js';
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  type RedisClient,
  type RedisConnection,
  RedisScript,
  type RedisStoreOptions,
  readRedisOptions,
} from './redis/index.js';

export interface RedisCounterStoreOptions extends RedisStoreOptions {
  /** A connected node-redis v6 client, `createClient()` or `createCluster()`. Required. */
  client: RedisClient;
  /**
   * Prepended to every key, so several stores (and other data) share one
   * Redis without meeting. Default: `"eac:"`.
   */
  prefix?: string;
  /**
   * The longest a command may take, in milliseconds, before it fails: an
   * unreachable Redis then fails a request quickly instead of hanging it.
   * Default: `500`.
   */
  commandTimeoutMs?: number;
}

export const DEFAULT_REDIS_PREFIX = 'eac:';
export { DEFAULT_COMMAND_TIMEOUT_MS };

// Counting and expiry in one atomic step, so that instances sharing the Redis
// count as one service and no key is left without an expiry (a crash between
// INCR and PEXPIRE cannot happen inside a script). A key with no TTL (set by
// hand) is given one. Returns the count and the milliseconds left.
const INCREMENT = new RedisScript(`local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`);

const GET = new RedisScript(`local count = redis.call('GET', KEYS[1])
if not count then return nil end
return {tonumber(count), redis.call('PTTL', KEYS[1])}`);

// Gives back one hit of an open window; DECR keeps the key's TTL.
const DECREMENT = new RedisScript(`local count = tonumber(redis.call('GET', KEYS[1]))
if count and count > 0 then return redis.call('DECR', KEYS[1]) end
return 0`);

/**
 * The Redis CounterStore: several instances sharing one Redis (or one Redis
 * Cluster) count as one service (docs/design.md principle 5). Each window is one
 * Redis key holding the count, `<prefix><key>`, with a TTL equal to what is
 * left of the window, so Redis frees it. Every script touches that one key,
 * so it runs on a cluster as it does on a single Redis.
 */
export class RedisCounterStore implements CounterStore {
  readonly prefix: string;
  readonly #redis: RedisConnection;

  constructor(options: Readonly<RedisCounterStoreOptions>) {
    this.#redis = readRedisOptions('RedisCounterStore', options, DEFAULT_REDIS_PREFIX).connection;
    this.prefix = this.#redis.prefix;
  }

  async increment(key: string, windowMs: number): Promise<CounterState> {
    const reply = await INCREMENT.run(this.#redis, [this.prefix + key], [String(windowMs)]);
    const [count, ttl] = reply as [number, number];
    return { count, resetAt: Date.now() + ttl };
  }

  async get(key: string): Promise<CounterState | undefined> {
    const reply = await GET.run(this.#redis, [this.prefix + key], []);
    if (reply === null || reply === undefined) return undefined;
    const [count, ttl] = reply as [number, number];
    if (ttl < 0) return undefined;
    return { count, resetAt: Date.now() + ttl };
  }

  async decrement(key: string): Promise<void> {
    await DECREMENT.run(this.#redis, [this.prefix + key], []);
  }

  async reset(key: string): Promise<void> {
    const redisKey = this.prefix + key;
    await this.#redis.send(redisKey, ['DEL', redisKey]);
  }
}
