import type { CounterState, CounterStore } from './counter-store.js';
import { COUNT_IN_ORDER, type OrderedCount, type OrderedCounter, type OrderedPolicy } from './ordered-count.js';
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  type RedisClient,
  type RedisConnection,
  RedisScript,
  type RedisStoreOptions,
  readRedisOptions,
  sharesSlot,
} from './redis/index.js';
import { ScriptBatch } from './redis/script-batch.js';

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
// hand) is given one. Returns the count and the milliseconds left: the whole
// window on a first hit, with no PTTL to ask.
const INCREMENT = new RedisScript(`local count = redis.call('INCR', KEYS[1])
local window = tonumber(ARGV[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], window)
  return {count, window}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], window)
  ttl = window
end
return {count, ttl}`);

// The ordered count of ordered-count.ts for a batch of requests
// (script-batch.ts) in one script: ARGV are the policies' window (ms) and
// limit, two by two; KEYS are the requests'
// keys, one per policy, request after request. Each request is counted as
// INCREMENT counts: policy by policy until one goes over its limit; the keys
// it counted are then given back (DECR keeps their TTL) before the next
// request, and the keys after it only read. Returns, per request,
// {refusedAt (1-based, 0: none), count, ms left, ...}; a key read with no
// open window answers a negative ms left. A key that is no counter (a value
// set by hand) fails its own request alone: its hits are given back and it
// answers {-1, Redis's error, 0, ...}; the other requests are counted.
// Keys do not expire inside a script, and from Redis 7 its clock stands
// still, so a key's ms left, once asked, holds for the rest of the batch.
const COUNT_IN_ORDER_SCRIPT = new RedisScript(`local policies = #ARGV / 2
local windows, limits = {}, {}
for i = 1, policies do
  windows[i] = tonumber(ARGV[2 * i - 1])
  limits[i] = tonumber(ARGV[2 * i])
end
local function failed(value) return type(value) == 'table' and value.err ~= nil end
local reply = {}
local left = {}
local at = 0
for first = 0, #KEYS - 1, policies do
  local refusedAt = 0
  local counted = 0
  local failure = nil
  for i = 1, policies do
    local key = KEYS[first + i]
    local count, ttl
    if refusedAt == 0 then
      count = redis.pcall('INCR', key)
      if failed(count) then
        failure = count.err
        break
      end
      counted = i
      if count == 1 then
        ttl = windows[i]
        redis.call('PEXPIRE', key, ttl)
      else
        ttl = left[key] or redis.call('PTTL', key)
        if ttl < 0 then
          ttl = windows[i]
          redis.call('PEXPIRE', key, ttl)
        end
      end
      if count > limits[i] then refusedAt = i end
    else
      local value = redis.pcall('GET', key)
      if failed(value) then
        failure = value.err
        break
      end
      count = tonumber(value) or 0
      ttl = left[key] or redis.call('PTTL', key)
    end
    left[key] = ttl
    reply[at + 2 * i] = count
    reply[at + 2 * i + 1] = ttl
  end
  for i = 1, counted do
    if failure or i <= refusedAt then redis.call('DECR', KEYS[first + i]) end
  end
  if failure then
    reply[at + 1] = -1
    reply[at + 2] = failure
    for j = 3, 1 + 2 * policies do reply[at + j] = 0 end
  else
    reply[at + 1] = refusedAt
  end
  at = at + 1 + 2 * policies
end
return reply`);

/** Concurrent requests' ordered counts sent together: at most this many requests per script. */
const MAX_REQUESTS_PER_SCRIPT = 64;

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

  /**
   * The ordered counter of `policies` (ordered-count.ts): one script over
   * the keys of a request where they share a hash slot (always on a single
   * Redis; on a cluster, the keys of one identity), the requests of one turn
   * of the event loop in one script per slot (script-batch.ts); else
   * `undefined` and the caller counts policy by policy. Not offered by a
   * subclass that counts in its own way.
   */
  [COUNT_IN_ORDER](policies: readonly OrderedPolicy[]): OrderedCounter | undefined {
    const own = RedisCounterStore.prototype;
    if (this.increment !== own.increment || this.get !== own.get || this.decrement !== own.decrement) return undefined;
    const args: string[] = [];
    for (const policy of policies) args.push(String(policy.windowMs), String(policy.limit));
    const connection = this.#redis;
    const batch = new ScriptBatch<OrderedCount>({
      connection,
      script: COUNT_IN_ORDER_SCRIPT,
      args,
      width: 1 + 2 * policies.length,
      read: (reply, offset) => orderedCountOf(connection, reply, offset, policies.length),
      maxCalls: MAX_REQUESTS_PER_SCRIPT,
    });
    const { prefix } = this;
    return (keys) => {
      const redisKeys = keys.map((key) => prefix + key);
      if (connection.cluster && !sharesSlot(redisKeys)) return undefined;
      return batch.call(redisKeys);
    };
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

/**
 * One request's part of the script's reply, from `offset`, as an
 * OrderedCount: windows' ends from the milliseconds left, read now. A
 * request the script could not count (-1: a key that is no counter) throws,
 * as its own script would have failed.
 */
function orderedCountOf(connection: RedisConnection, values: readonly unknown[], offset: number, policies: number): OrderedCount {
  const refusedAt = values[offset] as number;
  if (refusedAt === -1) throw connection.failed('EVALSHA', new Error(String(values[offset + 1])));
  const now = Date.now();
  const windows: (CounterState | undefined)[] = new Array(policies);
  for (let i = 0; i < policies; i++) {
    const count = values[offset + 1 + 2 * i] as number;
    const ttl = values[offset + 2 + 2 * i] as number;
    windows[i] = ttl < 0 ? undefined : { count, resetAt: now + ttl };
  }
  return { refusedAt: refusedAt - 1, windows };
}
