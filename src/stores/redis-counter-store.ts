import { createHash } from 'node:crypto';
import { checkInteger, checkString, invalidOption, readOptions } from '../config/options.js';
import type { CounterState, CounterStore } from './counter-store.js';

/**
 * The part of a node-redis v6 client (`createClient()` of the `redis`
 * package) that the store uses. The application creates, connects and
 * closes the client; the store only sends commands through it.
 */
export interface RedisScriptClient {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  del(key: string): Promise<unknown>;
  withCommandOptions(options: { timeout: number }): RedisScriptClient;
}

export interface RedisCounterStoreOptions {
  /** A connected node-redis v6 client. Required. */
  client: RedisScriptClient;
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

const OPTION_NAMES = ['client', 'prefix', 'commandTimeoutMs'] as const;

export const DEFAULT_REDIS_PREFIX = 'eac:';
export const DEFAULT_COMMAND_TIMEOUT_MS = 500;

// Counting and expiry in one atomic step, so that instances sharing the Redis
// count as one service and no key is left without an expiry (a crash between
// INCR and PEXPIRE cannot happen inside a script). A key with no TTL (set by
// hand) is given one. Returns the count and the milliseconds left.
const INCREMENT_SCRIPT = `local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;

const GET_SCRIPT = `local count = redis.call('GET', KEYS[1])
if not count then return nil end
return {tonumber(count), redis.call('PTTL', KEYS[1])}`;

// Gives back one hit of an open window; DECR keeps the key's TTL.
const DECREMENT_SCRIPT = `local count = tonumber(redis.call('GET', KEYS[1]))
if count and count > 0 then return redis.call('DECR', KEYS[1]) end
return 0`;

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');
const INCREMENT_SHA = sha1(INCREMENT_SCRIPT);
const GET_SHA = sha1(GET_SCRIPT);
const DECREMENT_SHA = sha1(DECREMENT_SCRIPT);

const isNoScript = (error: unknown): boolean => error instanceof Error && error.message.startsWith('NOSCRIPT');

/**
 * The Redis CounterStore: several instances sharing one Redis count as one
 * service (DESIGN.md principle 5). Each window is one Redis key holding the
 * count, with a TTL equal to what is left of the window, so Redis frees it.
 */
export class RedisCounterStore implements CounterStore {
  readonly prefix: string;
  readonly #client: RedisScriptClient;

  constructor(options: Readonly<RedisCounterStoreOptions>) {
    const given = readOptions<RedisCounterStoreOptions>('RedisCounterStore', options, OPTION_NAMES);
    const client = given.client as Partial<RedisScriptClient> | undefined;
    if (
      typeof client !== 'object' ||
      client === null ||
      typeof client.eval !== 'function' ||
      typeof client.evalSha !== 'function' ||
      typeof client.withCommandOptions !== 'function'
    ) {
      invalidOption('RedisCounterStore', 'client', client, 'a node-redis v6 client (createClient() of the `redis` package)');
    }
    this.prefix = given.prefix === undefined ? DEFAULT_REDIS_PREFIX : checkString('RedisCounterStore', 'prefix', given.prefix);
    const timeout = checkInteger('RedisCounterStore', 'commandTimeoutMs', given.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS, {
      min: 1,
      max: 60_000,
    });
    // node-redis rejects a command that has no reply within `timeout`, queued
    // while reconnecting included: a Redis outage never hangs a request.
    this.#client = (client as RedisScriptClient).withCommandOptions({ timeout });
  }

  async increment(key: string, windowMs: number): Promise<CounterState> {
    const reply = await this.#script(INCREMENT_SHA, INCREMENT_SCRIPT, this.prefix + key, [String(windowMs)]);
    const [count, ttl] = reply as [number, number];
    return { count, resetAt: Date.now() + ttl };
  }

  async get(key: string): Promise<CounterState | undefined> {
    const reply = await this.#script(GET_SHA, GET_SCRIPT, this.prefix + key, []);
    if (reply === null || reply === undefined) return undefined;
    const [count, ttl] = reply as [number, number];
    if (ttl < 0) return undefined;
    return { count, resetAt: Date.now() + ttl };
  }

  async decrement(key: string): Promise<void> {
    await this.#script(DECREMENT_SHA, DECREMENT_SCRIPT, this.prefix + key, []);
  }

  async reset(key: string): Promise<void> {
    await this.#client.del(this.prefix + key);
  }

  // EVALSHA sends only the digest; the first call on a fresh Redis loads the script.
  async #script(sha: string, script: string, key: string, args: string[]): Promise<unknown> {
    const options = { keys: [key], arguments: args };
    try {
      return await this.#client.evalSha(sha, options);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return this.#client.eval(script, options);
    }
  }
}
