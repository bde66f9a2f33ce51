import { createHash } from 'node:crypto';
import {
  DEFAULT_OAUTH2_REDIS_PREFIX,
  type RedisConnection,
  RedisScript,
  readRedisOptions,
  replyText,
  taggedKey,
} from 'express-api-conventions/extend';
import type { RedisStoreOptions } from 'express-api-conventions/stores';
import { publishConsentWithdrawn } from '../authorization-events.js';
import type { ConsentRecord, ConsentStore } from './consent-store.js';
import { hashEntries } from './redis-session-store.js';
import type { SessionCallOptions } from './session-store.js';

/**
 * Consents in Redis, shared by every instance. A user's consents are one
 * hash, `<prefix>consents:{<user digest>}`, client id → `<grantedAt ms>|<scopes>`;
 * adding scopes to a consent is one Lua script on that key (two approvals
 * at once keep both), so it runs on a Redis Cluster as on a single Redis.
 */

// KEYS: the user's hash. ARGV: client id, now (ms), scope... Adds the scopes the consent lacks; replies the record.
const GRANT = new RedisScript(`
local before = redis.call('HGET', KEYS[1], ARGV[1])
local scopes = {}
local known = {}
if before then
  for scope in string.gmatch(string.match(before, '^%d+|(.*)$'), '%S+') do
    scopes[#scopes + 1] = scope
    known[scope] = true
  end
end
for i = 3, #ARGV do
  if not known[ARGV[i]] then
    scopes[#scopes + 1] = ARGV[i]
    known[ARGV[i]] = true
  end
end
local record = ARGV[2] .. '|' .. table.concat(scopes, ' ')
redis.call('HSET', KEYS[1], ARGV[1], record)
return record
`);

// KEYS: the user's hash. ARGV: client id. Replies the record it deleted, or false.
const WITHDRAW = new RedisScript(`
local record = redis.call('HGET', KEYS[1], ARGV[1])
if not record then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
return record
`);

const FACTORY = 'RedisConsentStore';

export class RedisConsentStore implements ConsentStore {
  readonly #redis: RedisConnection;

  /** `client`: a connected node-redis v6 client, `createClient()` or `createCluster()`; `prefix` default `"oauth2:"`. */
  constructor(options: Readonly<RedisStoreOptions>) {
    this.#redis = readRedisOptions(FACTORY, options, DEFAULT_OAUTH2_REDIS_PREFIX).connection;
  }

  async find(subject: string, clientId: string): Promise<ConsentRecord | undefined> {
    const key = this.#key(subject);
    return decode(clientId, replyText(await this.#redis.send(key, ['HGET', key, clientId])));
  }

  async grant(subject: string, clientId: string, scopes: readonly string[]): Promise<ConsentRecord> {
    const reply = await GRANT.run(this.#redis, [this.#key(subject)], [clientId, String(Date.now()), ...scopes]);
    return decode(clientId, replyText(reply)) as ConsentRecord;
  }

  async list(subject: string): Promise<ConsentRecord[]> {
    const key = this.#key(subject);
    const reply = await this.#redis.send(key, ['HGETALL', key]);
    const records = hashEntries(reply)
      .map(([clientId, text]) => decode(replyText(clientId) ?? '', replyText(text)))
      .filter((record) => record !== undefined);
    return records.sort((a, b) => a.grantedAt.localeCompare(b.grantedAt));
  }

  async withdraw(subject: string, clientId: string, options: SessionCallOptions = {}): Promise<boolean> {
    const record = decode(clientId, replyText(await WITHDRAW.run(this.#redis, [this.#key(subject)], [clientId])));
    if (record === undefined) return false;
    publishConsentWithdrawn(options.request, { subject, clientId, scopes: record.scopes });
    return true;
  }

  /** The user's hash; its tag is the subject's digest, so any subject makes a valid tag. */
  #key(subject: string): string {
    return taggedKey(this.#redis.prefix, 'consents', createHash('sha256').update(subject).digest('base64url').slice(0, 22));
  }
}

function decode(clientId: string, text: string | undefined): ConsentRecord | undefined {
  const match = text === undefined ? null : /^(\d+)\|(.*)$/s.exec(text);
  if (!match) return undefined;
  const scopes = (match[2] as string).split(' ').filter((scope) => scope !== '');
  return { clientId, scopes, grantedAt: new Date(Number(match[1])).toISOString() };
}
