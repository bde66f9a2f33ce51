import { randomUUID } from 'node:crypto';
import { checkInteger, checkLog, refuseHintedOptions } from '../config/options.js';
import {
  type RedisConnection,
  RedisScript,
  type RedisStoreOptions,
  readRedisOptions,
  replyText,
  taggedKey,
} from '../stores/redis/index.js';
import type { RevokedFamilies } from './revoked-families.js';

/** The default key prefix of the oauth2 Redis stores, the authorization server's included. */
export const DEFAULT_OAUTH2_REDIS_PREFIX = 'oauth2:';

export interface RedisRevokedFamiliesOptions extends RedisStoreOptions {
  /** Prefix of the store's keys, `<prefix>revoked:{families}` and its `:version`. Default: `'oauth2:'`. */
  prefix?: string;
  /**
   * How often the local copy is refreshed from Redis, in milliseconds: a
   * revocation made on another instance is seen here within this interval
   * plus one round trip. Default: `250`.
   */
  pollIntervalMs?: number;
  /**
   * Told of the error when a refresh fails (Redis unreachable); the local
   * copy is kept as it was and the next refresh tries again. `false` is the
   * same as the default. Default: none (failures are silent).
   */
  log?: ((error: unknown) => void) | false;
}

/** The default refresh interval of RedisRevokedFamilies, in milliseconds. */
export const DEFAULT_REVOKED_POLL_INTERVAL_MS = 250;

// KEYS: the sorted set (member: family id, score: end of its revocation,
// ms), its version (a hash: `epoch`, set once by whoever writes first, and a
// count `n` of revocations). ARGV: family id, until (ms), now (ms), a fresh
// epoch. Drops ended entries, keeps the later end of a family revoked twice
// (GT), and lets both keys expire with the last entry. A Redis that restarts
// empty gets a new epoch, so a reader never takes a new set for the old one.
const REVOKE = new RedisScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
redis.call('HSETNX', KEYS[2], 'epoch', ARGV[4])
redis.call('HINCRBY', KEYS[2], 'n', 1)
local last = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
redis.call('PEXPIREAT', KEYS[2], last[2])
return 1
`);

// KEYS: the sorted set, its version. ARGV: the version the reader holds, now (ms).
// Answers {version} when nothing was revoked since, else {version, entries not yet ended}.
const READ = new RedisScript(`
local v = redis.call('HMGET', KEYS[2], 'epoch', 'n')
local version = (v[1] or '') .. ':' .. (v[2] or '0')
if version == ARGV[1] then return {version} end
return {version, redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[2], '+inf', 'WITHSCORES')}
`);

/**
 * Revoked families shared through Redis (a single Redis or a Redis Cluster:
 * two keys with one hash tag, so in one slot). Each instance keeps a local copy, so `isRevoked()` is one Map
 * lookup and never waits for Redis; an unref'd timer refreshes the copy
 * every `pollIntervalMs` (250 ms by default), so a revocation made on any
 * instance holds on every instance within about a quarter of a second. A
 * refresh is one script: it compares the version the instance holds with
 * the store's and sends the entries not yet ended only when they differ, so
 * a quiet poll costs one small reply however many families are revoked. The sorted set is scored by
 * the end of each revocation; ended entries are dropped from it on each
 * revoke and the key expires with its last entry.
 *
 * During a Redis outage `isRevoked()` answers from the last copy (plus this
 * instance's own revocations), `revoke()` rejects within `commandTimeoutMs`,
 * and the timer keeps trying: the copy is current again at the first
 * refresh after Redis is back.
 */
export class RedisRevokedFamilies implements RevokedFamilies {
  readonly #redis: RedisConnection;
  readonly #key: string;
  readonly #versionKey: string;
  readonly #log: ((error: unknown) => void) | undefined;
  readonly #timer: NodeJS.Timeout;
  // The last copy read from Redis merged with this instance's own
  // revocations (`#own`, kept also when Redis could not be told, until they
  // end): isRevoked() is one lookup.
  #copy = new Map<string, number>();
  readonly #own = new Map<string, number>();
  // Reads are numbered, so a slow one never overwrites a newer copy.
  #reads = 0;
  #applied = 0;
  #version = '';
  #polling = false;

  constructor(options: Readonly<RedisRevokedFamiliesOptions>) {
    // One name for every logging hook.
    refuseHintedOptions('RedisRevokedFamilies', options, { onError: 'It is now `log`.' });
    const { connection, given } = readRedisOptions<RedisRevokedFamiliesOptions>(
      'RedisRevokedFamilies',
      options,
      DEFAULT_OAUTH2_REDIS_PREFIX,
      ['pollIntervalMs', 'log'],
    );
    this.#redis = connection;
    this.#key = taggedKey(connection.prefix, 'revoked', 'families');
    this.#versionKey = `${this.#key}:version`;
    const pollIntervalMs = checkInteger(
      'RedisRevokedFamilies',
      'pollIntervalMs',
      given.pollIntervalMs ?? DEFAULT_REVOKED_POLL_INTERVAL_MS,
      { min: 10, max: 60_000 },
    );
    this.#log = checkLog<(error: unknown) => void>('RedisRevokedFamilies', given.log, undefined);
    this.#timer = setInterval(() => this.#poll(), pollIntervalMs);
    this.#timer.unref();
    this.#poll();
  }

  async revoke(familyId: string, untilMs: number): Promise<void> {
    if (untilMs > (this.#own.get(familyId) ?? 0)) this.#own.set(familyId, untilMs);
    if (untilMs > (this.#copy.get(familyId) ?? 0)) this.#copy.set(familyId, untilMs);
    await REVOKE.run(
      this.#redis,
      [this.#key, this.#versionKey],
      [familyId, String(Math.ceil(untilMs)), String(Date.now()), randomUUID()],
    );
  }

  isRevoked(familyId: string): boolean {
    const until = this.#copy.get(familyId);
    return until !== undefined && until > Date.now();
  }

  /**
   * Reads the entries not yet ended into the local copy now (the timer does
   * it every `pollIntervalMs`); rejects when Redis does not answer, keeping
   * the last copy.
   */
  refresh(): Promise<void> {
    return this.#read();
  }

  /** How many entries the local copy holds. */
  get size(): number {
    return this.#copy.size;
  }

  /** Stops the refresh timer. The client stays open: the application closes it. */
  close(): void {
    clearInterval(this.#timer);
  }

  // One timer read at a time: a Redis slower than the interval is not piled on.
  #poll(): void {
    if (this.#polling) return;
    this.#polling = true;
    this.#read()
      .catch((error: unknown) => this.#log?.(error))
      .finally(() => {
        this.#polling = false;
      });
  }

  async #read(): Promise<void> {
    const read = ++this.#reads;
    const now = Date.now();
    const reply = (await READ.run(this.#redis, [this.#key, this.#versionKey], [this.#version, String(now)])) as unknown[];
    if (read < this.#applied) return;
    this.#applied = read;
    const [version, entries] = reply;
    this.#version = replyText(version) ?? '';
    for (const [familyId, until] of this.#own) if (until <= now) this.#own.delete(familyId);
    if (!Array.isArray(entries)) {
      // Unchanged: only ended entries leave the copy.
      for (const [familyId, until] of this.#copy) if (until <= now) this.#copy.delete(familyId);
      return;
    }
    const copy = new Map<string, number>();
    // A script answers RESP2's flat [member, score, ...]; RESP3 pairs are read too.
    const pairs = entries.every(Array.isArray)
      ? (entries as unknown[][])
      : Array.from({ length: entries.length >> 1 }, (_, i) => [entries[2 * i], entries[2 * i + 1]]);
    for (const [member, score] of pairs) copy.set(replyText(member) ?? String(member), Number(replyText(score) ?? score));
    for (const [familyId, until] of this.#own) if (until > (copy.get(familyId) ?? 0)) copy.set(familyId, until);
    this.#copy = copy;
  }
}
