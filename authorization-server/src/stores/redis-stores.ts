import { createHash } from 'node:crypto';
import {
  checkInteger,
  DEFAULT_OAUTH2_REDIS_PREFIX,
  type RedisConnection,
  RedisScript,
  readRedisOptions,
  redisKey,
  replyText,
  taggedKey,
} from 'express-api-conventions/extend';
import type { RedisStoreOptions } from 'express-api-conventions/stores';
import {
  type ClientRegistration,
  type RegisteredClient,
  type RegisteredClientStore,
  registerClient,
  registeredClient,
} from './client-registration.js';
import {
  checkUsername,
  type FoundFamily,
  normalizeUsername,
  type PasswordHashUpdate,
  REMEMBERED_REFRESH_TOKENS,
  REMEMBERED_REFRESH_TOKENS_RANGE,
  type RefreshFamily,
  type RefreshTokenStore,
  type RotateResult,
  type UserRecord,
  type UserStore,
} from './stores.js';

/**
 * Redis implementations of the token endpoint's stores, so several instances
 * share users, clients, rotation and revocation (docs/design.md principle 5). They
 * talk to Redis through the library's one Redis layer (src/stores/redis/): a
 * connected node-redis v6 client, `createClient()` or `createCluster()`,
 * passed in; every command bounded by `commandTimeoutMs`; every script
 * touching keys of one hash slot, so the stores run on a Redis Cluster as on
 * a single Redis.
 */

export type { RedisStoreOptions };

const open = (factory: string, options: unknown): RedisConnection =>
  readRedisOptions(factory, options, DEFAULT_OAUTH2_REDIS_PREFIX).connection;

export interface RedisRefreshTokenStoreOptions extends RedisStoreOptions {
  /**
   * How many rotated tokens of each family are remembered, so that their
   * reuse revokes the family; older ones are refused without revoking it.
   * From 1 to 1000. Default: `16`.
   */
  rememberedTokens?: number;
}

// KEYS: the record's key. ARGV: field, value, ... Replaces the whole record at once.
const REPLACE_HASH = new RedisScript(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`);

// KEYS: the user's key. ARGV: the hash the password was verified against, the new hash.
const UPDATE_PASSWORD_HASH = new RedisScript(`
if redis.call('HGET', KEYS[1], 'passwordHash') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'passwordHash', ARGV[2])
return 1
`);

const words = (value: string | undefined): string[] => (value ? value.split(' ') : []);

/** Users in Redis hashes: `<prefix>user:<normalized username>` → subject, passwordHash, scopes. */
export class RedisUserStore implements UserStore {
  readonly #redis: RedisConnection;

  constructor(options: Readonly<RedisStoreOptions>) {
    this.#redis = open('RedisUserStore', options);
  }

  /** Adds or replaces a user; `passwordHash` comes from hashPassword(). */
  async add(user: Readonly<UserRecord & { username: string }>): Promise<void> {
    checkUsername(user.username);
    const fields = ['subject', user.subject, 'passwordHash', user.passwordHash];
    if (user.scopes !== undefined) fields.push('scopes', user.scopes.join(' '));
    await REPLACE_HASH.run(this.#redis, [this.#key(user.username)], fields);
  }

  async findByUsername(username: string): Promise<UserRecord | undefined> {
    const key = this.#key(username);
    const reply = (await this.#redis.send(key, ['HMGET', key, 'subject', 'passwordHash', 'scopes'])) as unknown[];
    const [subject, passwordHash, scopes] = reply.map(replyText);
    if (subject === undefined && passwordHash === undefined) return undefined;
    // A record missing one of them is answered as it is: sign-in refuses it by name (EAC_USER_RECORD_INVALID), never as no user.
    const user = { subject, passwordHash } as UserRecord;
    return scopes === undefined ? user : { ...user, scopes: words(scopes) };
  }

  /** Replaces the hash only while it is still `previousHash` (one script: a password changed meanwhile is kept). */
  async updatePasswordHash(update: Readonly<PasswordHashUpdate>): Promise<void> {
    await UPDATE_PASSWORD_HASH.run(this.#redis, [this.#key(update.username)], [update.previousHash, update.passwordHash]);
  }

  #key(username: string): string {
    return redisKey(this.#redis.prefix, 'user', normalizeUsername(username));
  }
}

/**
 * Clients in Redis hashes: `<prefix>client:<id>` → id, type, blocked, and
 * when registered: secretHash, grants, scopes, redirectUris (each a
 * space-separated list: neither a scope token, a grant type nor a redirect URI
 * holds a space), firstParty, name. One key per client, written by one
 * script: a Redis Cluster serves it as a single Redis does.
 */
export class RedisClientStore implements RegisteredClientStore {
  readonly #redis: RedisConnection;

  constructor(options: Readonly<RedisStoreOptions>) {
    this.#redis = open('RedisClientStore', options);
  }

  /** Adds or replaces a client; give `secret` (hashed here) or `secretHash`. A wrong registration rejects with ConfigurationError. */
  async add(client: ClientRegistration): Promise<void> {
    const record = registerClient('RedisClientStore.add', client);
    const fields = [
      'id',
      record.id,
      'type',
      record.type,
      'blocked',
      record.blocked ? '1' : '0',
      'grants',
      record.grants.join(' '),
    ];
    if (record.secretHash !== undefined) fields.push('secretHash', record.secretHash);
    if (record.scopes !== undefined) fields.push('scopes', record.scopes.join(' '));
    if (record.redirectUris !== undefined) fields.push('redirectUris', record.redirectUris.join(' '));
    if (record.firstParty !== undefined) fields.push('firstParty', record.firstParty ? '1' : '0');
    if (record.name !== undefined) fields.push('name', record.name);
    await REPLACE_HASH.run(this.#redis, [this.#key(record.id)], fields);
  }

  async findById(clientId: string): Promise<RegisteredClient | undefined> {
    const key = this.#key(clientId);
    const reply = (await this.#redis.send(key, ['HMGET', key, ...CLIENT_FIELDS])) as unknown[];
    const [id, type, secretHash, grants, scopes, blocked, redirectUris, firstParty, name] = reply.map(replyText);
    if (id === undefined) return undefined;
    // A record written before registrations had a type and grants is read as registeredClient() says.
    return registeredClient({
      id,
      blocked: blocked === '1',
      ...(type === 'public' || type === 'confidential' ? { type } : {}),
      ...(grants === undefined ? {} : { grants: words(grants) }),
      ...(secretHash === undefined ? {} : { secretHash }),
      ...(scopes === undefined ? {} : { scopes: words(scopes) }),
      ...(redirectUris === undefined ? {} : { redirectUris: words(redirectUris) }),
      ...(firstParty === undefined ? {} : { firstParty: firstParty === '1' }),
      ...(name === undefined ? {} : { name }),
    } as RegisteredClient);
  }

  #key(clientId: string): string {
    return redisKey(this.#redis.prefix, 'client', clientId);
  }
}

const CLIENT_FIELDS = ['id', 'type', 'secretHash', 'grants', 'scopes', 'blocked', 'redirectUris', 'firstParty', 'name'];

// The family record: one hash `<prefix>family:{<id>}` with the current token's
// hash, the hashes of the last `rememberedTokens` rotated ones
// (`previous`, newest first, space-separated: base64url has no space), the
// grant and the expiry. Every script below touches that one key, so it runs
// on a cluster; the token index (`<prefix>rt:<hash>` → family id) lives in
// other slots and is written by plain commands around the scripts.

// KEYS: family. ARGV: current hash, subject, clientId, scope, expiresAt (ms), DPoP key thumbprint or ''.
const CREATE = new RedisScript(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'current', ARGV[1], 'previous', '', 'subject', ARGV[2], 'clientId', ARGV[3], 'scope', ARGV[4], 'expiresAt', ARGV[5], 'jkt', ARGV[6] or '')
redis.call('PEXPIREAT', KEYS[1], ARGV[5])
return 1
`);

// Shared by the scripts: whether ARGV[1] is one of the family's tokens.
const KNOWS = `
local function knows(f, hash)
  if f[1] == hash then return true end
  for h in string.gmatch(f[2] or '', '%S+') do if h == hash then return true end end
  return false
end
local function all(f)
  local hashes = {f[1]}
  for h in string.gmatch(f[2] or '', '%S+') do hashes[#hashes + 1] = h end
  return hashes
end
`;

// KEYS: family. ARGV: hash, now (ms). The grant, when the hash is one of the live family's tokens.
const FIND = new RedisScript(`${KNOWS}
local f = redis.call('HMGET', KEYS[1], 'current', 'previous', 'subject', 'clientId', 'scope', 'expiresAt', 'jkt')
if not f[1] or tonumber(f[6]) <= tonumber(ARGV[2]) or not knows(f, ARGV[1]) then return false end
local current = '0'
if f[1] == ARGV[1] then current = '1' end
return {f[3], f[4] or '', f[5] or '', current, f[7] or ''}
`);

// KEYS: family. ARGV: presented hash, next hash, next expiresAt (ms), now (ms), how many rotated hashes to keep,
// grace (ms), what the rotation issued. Answers {'rotated', subject, clientId, scope, dropped hash or '', jkt,
// every remembered hash...}, {'retried', subject, clientId, scope, jkt, issued} (the token rotated last, again
// within the grace, its successor never used, neither this rotation nor the one before retried), {'reused',
// every hash}, or {'invalid', '1' when the next hash is one of the family's tokens (its index key stays)}.
const ROTATE = new RedisScript(`${KNOWS}
local f = redis.call('HMGET', KEYS[1], 'current', 'previous', 'subject', 'clientId', 'scope', 'expiresAt', 'rotatedAt',
  'jkt', 'retried', 'priorRetried', 'issued')
if not f[1] then return {'invalid', '0'} end
if tonumber(f[6]) <= tonumber(ARGV[4]) then
  redis.call('DEL', KEYS[1])
  return {'invalid', '0'}
end
if f[1] ~= ARGV[1] then
  if not knows(f, ARGV[1]) then
    if knows(f, ARGV[2]) then return {'invalid', '1'} end
    return {'invalid', '0'}
  end
  local latest = string.match(f[2] or '', '^(%S+)')
  local grace = tonumber(ARGV[6])
  if grace > 0 and latest == ARGV[1] and f[1] == ARGV[2] and tonumber(ARGV[4]) - tonumber(f[7] or '0') < grace
    and f[9] ~= '1' and f[10] ~= '1' then
    redis.call('HSET', KEYS[1], 'retried', '1')
    return {'retried', f[3], f[4] or '', f[5] or '', f[8] or '', f[11] or ''}
  end
  redis.call('DEL', KEYS[1])
  local reply = all(f)
  table.insert(reply, 1, 'reused')
  return reply
end
local previous = {ARGV[1]}
for h in string.gmatch(f[2] or '', '%S+') do previous[#previous + 1] = h end
local dropped = ''
if #previous > tonumber(ARGV[5]) then dropped = table.remove(previous) end
redis.call('HSET', KEYS[1], 'current', ARGV[2], 'previous', table.concat(previous, ' '), 'expiresAt', ARGV[3],
  'rotatedAt', ARGV[4], 'issued', ARGV[7] or '', 'retried', '0', 'priorRetried', f[9] or '0')
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
local reply = {'rotated', f[3], f[4] or '', f[5] or '', dropped, f[8] or ''}
for _, h in ipairs(previous) do reply[#reply + 1] = h end
return reply
`);

// KEYS: family. ARGV: a hash the family must know, or '' for any. Deletes the family; answers its hashes.
const REVOKE = new RedisScript(`${KNOWS}
local f = redis.call('HMGET', KEYS[1], 'current', 'previous')
if not f[1] then return {} end
if ARGV[1] ~= '' and not knows(f, ARGV[1]) then return {} end
redis.call('DEL', KEYS[1])
return all(f)
`);

// The client index: `<prefix>client-families:{<user digest>}:<client digest>`, a sorted set of the ids of
// the families a client holds for a user, each scored by its family's expiry (ms). Tagged by the user, so
// each script below runs on one slot of a cluster. Expired entries are dropped at every write, and the
// key expires with its last family: it holds no more than the user's live families of that client.

// KEYS: the index. ARGV: family id, its expiry (ms), now (ms). Adds the family or moves its expiry later.
const INDEX_FAMILY = new RedisScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
local before = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not before or tonumber(before) < tonumber(ARGV[2]) then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return 1
`);

// KEYS: the index. ARGV: now (ms). Empties the index; answers the ids of the families that may still live.
const TAKE_FAMILIES = new RedisScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf')
redis.call('DEL', KEYS[1])
return ids
`);

const grantOf = (
  familyId: string,
  subject: string | undefined,
  clientId: string | undefined,
  scope: string | undefined,
  jkt: string | undefined,
): RefreshFamily => {
  const family = { familyId, subject: subject as string, clientId: clientId || undefined, scopes: words(scope) };
  return jkt ? { ...family, jkt } : family;
};

/**
 * Refresh-token families in Redis (RFC 9700 §4.14.2), on a single Redis or a
 * Redis Cluster:
 *
 * - `<prefix>family:{<id>}`: a hash with the current token's hash, the hashes
 *   of the last `rememberedTokens` (16) rotated tokens, the grant and the
 *   expiry; its TTL is the family's expiry.
 * - `<prefix>rt:<token hash>` → family id, for the current and the
 *   remembered tokens only, each expiring with its family (every rotation
 *   moves the remembered tokens' expiry to the family's new one, so a
 *   remembered token's reuse revokes the family for as long as the family
 *   lives); a token that leaves the remembered window, and every token of a
 *   revoked family, has its key deleted.
 * - `<prefix>client-families:{<user digest>}:<client digest>`: the ids of
 *   the live families a client holds for a user, for revokeClientFamilies()
 *   (a withdrawn consent); entries leave with their family's expiry.
 *
 * So a family holds at most `rememberedTokens` + 2 keys (18 by default)
 * however often it rotates. Each decision
 * (rotate, reuse, revoke) is one script on the family key: of two instances
 * rotating one token at once exactly one sees it as current.
 *
 * Limit: a token more than `rememberedTokens` rotations old is no longer recognised; it is
 * refused as `invalid` (it never works again) but does not revoke the family.
 */
export class RedisRefreshTokenStore implements RefreshTokenStore {
  readonly #redis: RedisConnection;
  readonly #remembered: string;

  constructor(options: Readonly<RedisRefreshTokenStoreOptions>) {
    const { connection, given } = readRedisOptions<RedisRefreshTokenStoreOptions>(
      'RedisRefreshTokenStore',
      options,
      DEFAULT_OAUTH2_REDIS_PREFIX,
      ['rememberedTokens'],
    );
    this.#redis = connection;
    const remembered = checkInteger(
      'RedisRefreshTokenStore',
      'rememberedTokens',
      given.rememberedTokens ?? REMEMBERED_REFRESH_TOKENS,
      REMEMBERED_REFRESH_TOKENS_RANGE,
    );
    this.#remembered = String(remembered);
  }

  async create(family: RefreshFamily, tokenHash: string, expiresAt: number): Promise<void> {
    // The indexes first: once the family exists, its token is found, and a withdrawn consent finds it.
    await this.#index(tokenHash, family.familyId, expiresAt);
    await this.#indexForClient(family.subject, family.clientId, family.familyId, expiresAt);
    await CREATE.run(
      this.#redis,
      [this.#familyKey(family.familyId)],
      [tokenHash, family.subject, family.clientId ?? '', family.scopes.join(' '), String(expiresAt), family.jkt ?? ''],
    );
  }

  async find(tokenHash: string): Promise<FoundFamily | undefined> {
    const familyId = await this.#familyOf(tokenHash);
    if (familyId === undefined) return undefined;
    const reply = await FIND.run(this.#redis, [this.#familyKey(familyId)], [tokenHash, String(Date.now())]);
    if (!Array.isArray(reply)) return undefined;
    const [subject, clientId, scope, current, jkt] = reply.map(replyText);
    return { ...grantOf(familyId, subject, clientId, scope, jkt), current: current === '1' };
  }

  async rotate(tokenHash: string, nextHash: string, expiresAt: number, graceMs = 0, issued?: string): Promise<RotateResult> {
    const familyId = await this.#familyOf(tokenHash);
    if (familyId === undefined) return { status: 'invalid' };
    await this.#index(nextHash, familyId, expiresAt);
    const reply = (
      (await ROTATE.run(
        this.#redis,
        [this.#familyKey(familyId)],
        [tokenHash, nextHash, String(expiresAt), String(Date.now()), this.#remembered, String(graceMs), issued ?? ''],
      )) as unknown[]
    ).map(replyText);
    const [status, ...rest] = reply;
    // A retry: `nextHash` is the current token, its index key stays.
    if (status === 'retried') {
      const [subject, clientId, scope, jkt, rotationIssued] = rest;
      const family = grantOf(familyId, subject, clientId, scope, jkt);
      return rotationIssued ? { status, family, issued: rotationIssued } : { status, family };
    }
    if (status === 'rotated') {
      const [subject, clientId, scope, dropped, jkt, ...remembered] = rest as string[];
      if (dropped) await this.#forget([dropped]);
      // Every remembered token's index key lives as long as its family, so its reuse is recognised until the family ends.
      await this.#extend(remembered, expiresAt);
      // So does the family's entry in its client index, so a withdrawn consent still finds it.
      await this.#indexForClient(subject as string, clientId || undefined, familyId, expiresAt);
      return { status, family: grantOf(familyId, subject, clientId, scope, jkt) };
    }
    if (status === 'reused') {
      await this.#forget([nextHash, ...(rest as string[])]);
      return { status, familyId };
    }
    // The next token was never issued, unless the family knows it (then its index key stays).
    if (rest[0] !== '1') await this.#forget([nextHash]);
    return { status: 'invalid' };
  }

  async revokeByTokenHash(tokenHash: string): Promise<boolean> {
    const familyId = await this.#familyOf(tokenHash);
    if (familyId === undefined) return false;
    return this.#revoke(familyId, tokenHash);
  }

  async revokeFamily(familyId: string): Promise<void> {
    await this.#revoke(familyId, '');
  }

  /**
   * One script takes the client's index of the user's families, then each
   * family is revoked by its own script (its own slot). A family created
   * meanwhile is indexed before it exists, so it is either taken here or
   * made after this call (the code grant then checks the consent again).
   */
  async revokeClientFamilies(subject: string, clientId: string): Promise<string[]> {
    const reply = await TAKE_FAMILIES.run(this.#redis, [this.#clientIndexKey(subject, clientId)], [String(Date.now())]);
    const ids = (reply as unknown[]).map(replyText).filter((id): id is string => id !== undefined);
    // The index may still name a family that ended (logout, reuse): only those that lived are answered.
    const lived = await Promise.all(ids.map((familyId) => this.#revoke(familyId, '')));
    return ids.filter((_, i) => lived[i]);
  }

  async #indexForClient(subject: string, clientId: string | undefined, familyId: string, expiresAt: number): Promise<void> {
    if (clientId === undefined) return;
    await INDEX_FAMILY.run(
      this.#redis,
      [this.#clientIndexKey(subject, clientId)],
      [familyId, String(expiresAt), String(Date.now())],
    );
  }

  async #revoke(familyId: string, tokenHash: string): Promise<boolean> {
    const hashes = ((await REVOKE.run(this.#redis, [this.#familyKey(familyId)], [tokenHash])) as unknown[]).map(replyText);
    await this.#forget(hashes as string[]);
    return hashes.length > 0;
  }

  async #familyOf(tokenHash: string): Promise<string | undefined> {
    const key = this.#tokenKey(tokenHash);
    return replyText(await this.#redis.send(key, ['GET', key]));
  }

  async #index(tokenHash: string, familyId: string, expiresAt: number): Promise<void> {
    const key = this.#tokenKey(tokenHash);
    await this.#redis.send(key, ['SET', key, familyId, 'PXAT', String(expiresAt)]);
  }

  // Index keys of remembered tokens, made to expire with their family. Several slots on a cluster, so not
  // in the family's script; sent at once.
  async #extend(hashes: readonly string[], expiresAt: number): Promise<void> {
    await Promise.all(
      hashes.map((hash) => {
        const key = this.#tokenKey(hash);
        return this.#redis.send(key, ['PEXPIREAT', key, String(expiresAt)]);
      }),
    );
  }

  // Index keys of tokens that no longer count. Only tidiness: each expires
  // anyway and, until then, points to a family that no longer knows its
  // token, so a failure here is not the caller's (whose decision is made).
  async #forget(hashes: readonly string[]): Promise<void> {
    await Promise.allSettled(
      hashes.map((hash) => {
        const key = this.#tokenKey(hash);
        return this.#redis.send(key, ['DEL', key]);
      }),
    );
  }

  #familyKey(familyId: string): string {
    return taggedKey(this.#redis.prefix, 'family', familyId);
  }

  #tokenKey(tokenHash: string): string {
    return redisKey(this.#redis.prefix, 'rt', tokenHash);
  }

  // Tagged by the user's digest (any subject makes a valid tag); the client's digest keeps the key short.
  #clientIndexKey(subject: string, clientId: string): string {
    return `${taggedKey(this.#redis.prefix, 'client-families', digest(subject))}:${digest(clientId)}`;
  }
}

const digest = (value: string): string => createHash('sha256').update(value).digest('base64url').slice(0, 22);
