import {
  DEFAULT_OAUTH2_REDIS_PREFIX,
  type RedisConnection,
  RedisScript,
  readRedisOptions,
  replyText,
  taggedKey,
} from 'express-api-conventions/extend';
import type { RedisStoreOptions } from 'express-api-conventions/stores';
import { type AuthorizationCodeStore, type CodeGrant, type RedeemResult, USED_CODE_MEMORY_MS } from './code-store.js';

/**
 * Authorization codes in Redis, shared by every instance: one hash per code,
 * `<prefix>code:{<code digest>}` with the grant (`g`), the expiry (`e`) and
 * whether it was used (`u`: 0, 1 used, 2 presented again). Redeeming is one Lua script on that one key, so
 * of two instances presented one code at once exactly one redeems it, on a
 * single Redis as on a Redis Cluster. Times come from the caller's clock.
 */

// KEYS: the code's hash. ARGV: grant, expiresAt, keep (ms).
const SAVE = new RedisScript(`
redis.call('HSET', KEYS[1], 'g', ARGV[1], 'e', ARGV[2], 'u', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`);

// KEYS: the code's hash. ARGV: now. Replies false (unknown, or expired unused), {'replayed', grant} or {'redeemed', grant}.
const REDEEM = new RedisScript(`
local f = redis.call('HMGET', KEYS[1], 'g', 'e', 'u')
if not f[1] then return false end
if f[3] ~= '0' then
  redis.call('HSET', KEYS[1], 'u', '2')
  return {'replayed', f[1]}
end
if tonumber(f[2]) <= tonumber(ARGV[1]) then return false end
redis.call('HSET', KEYS[1], 'u', '1')
return {'redeemed', f[1]}
`);

const FACTORY = 'RedisCodeStore';

export class RedisCodeStore implements AuthorizationCodeStore {
  readonly #redis: RedisConnection;

  /** `client`: a connected node-redis v6 client, `createClient()` or `createCluster()`; `prefix` default `"oauth2:"`. */
  constructor(options: Readonly<RedisStoreOptions>) {
    this.#redis = readRedisOptions(FACTORY, options, DEFAULT_OAUTH2_REDIS_PREFIX).connection;
  }

  async save(codeHash: string, grant: CodeGrant, expiresAt: number): Promise<void> {
    const keepMs = Math.max(1, expiresAt - Date.now()) + USED_CODE_MEMORY_MS;
    await SAVE.run(this.#redis, [this.#key(codeHash)], [JSON.stringify(grant), String(expiresAt), String(keepMs)]);
  }

  async redeem(codeHash: string): Promise<RedeemResult> {
    const reply = await REDEEM.run(this.#redis, [this.#key(codeHash)], [String(Date.now())]);
    if (!Array.isArray(reply)) return { status: 'invalid' };
    const status = replyText(reply[0]);
    const grant = JSON.parse(replyText(reply[1]) ?? 'null') as CodeGrant | null;
    if (grant === null || (status !== 'redeemed' && status !== 'replayed')) return { status: 'invalid' };
    return { status, grant };
  }

  async wasReplayed(codeHash: string): Promise<boolean> {
    const key = this.#key(codeHash);
    return replyText(await this.#redis.send(key, ['HGET', key, 'u'])) === '2';
  }

  #key(codeHash: string): string {
    return taggedKey(this.#redis.prefix, 'code', codeHash);
  }
}
