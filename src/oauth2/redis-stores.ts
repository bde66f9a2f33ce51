import { createHash } from 'node:crypto';
import { checkString, invalidOption, readOptions } from '../config/options.js';
import {
  type ClientRecord,
  type ClientStore,
  GRANT_TYPES,
  type GrantType,
  hashClientSecret,
  normalizeUsername,
  type RefreshFamily,
  type RefreshTokenStore,
  type RotateResult,
  type UserRecord,
  type UserStore,
} from './stores.js';

/**
 * Redis implementations of the token endpoint's stores, so several instances
 * share users, clients, rotation and revocation (DESIGN.md principle 5). The
 * client is a connected node-redis v6 client (`createClient()` from the
 * `redis` package), passed in; only its `sendCommand` is used.
 *
 * Every change that must be atomic (create, rotate, revoke) is one Lua
 * script: Redis runs a script alone, so of two instances rotating one
 * refresh token at once exactly one sees it as current. A script touches
 * the family key it reads from the token key, so the stores suit one Redis
 * (with replicas), not a Redis Cluster.
 */

/** What the stores need of a Redis client: node-redis's `sendCommand`. */
export interface RedisCommandClient {
  sendCommand(args: string[]): Promise<unknown>;
}

export interface RedisStoreOptions {
  /** A connected node-redis client. Required. */
  client: RedisCommandClient;
  /** Prefix of every key. Default: `'oauth2:'`. */
  prefix?: string;
}

const OPTION_NAMES = ['client', 'prefix'] as const;

function readStoreOptions(factory: string, options: unknown): { client: RedisCommandClient; prefix: string } {
  const given = readOptions<RedisStoreOptions>(factory, options, OPTION_NAMES);
  const client = given.client;
  if (typeof (client as Partial<RedisCommandClient> | undefined)?.sendCommand !== 'function') {
    invalidOption(factory, 'client', client, 'a connected node-redis client (createClient() from the redis package)');
  }
  const prefix = given.prefix === undefined ? 'oauth2:' : checkString(factory, 'prefix', given.prefix);
  return { client: client as RedisCommandClient, prefix };
}

/** A Lua script run by its SHA-1 (EVALSHA), loaded with EVAL when Redis does not know it yet. */
class Script {
  readonly #source: string;
  readonly #sha: string;

  constructor(source: string) {
    this.#source = source;
    this.#sha = createHash('sha1').update(source).digest('hex');
  }

  async run(client: RedisCommandClient, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await client.sendCommand(['EVALSHA', this.#sha, ...tail]);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.sendCommand(['EVAL', this.#source, ...tail]);
    }
  }
}

// KEYS: the record's key. ARGV: field, value, ... Replaces the whole record at once.
const REPLACE_HASH = new Script(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`);

const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
const words = (value: string | undefined): string[] => (value ? value.split(' ') : []);

/** Users in Redis hashes: `<prefix>user:<normalized username>` → subject, passwordHash, scopes. */
export class RedisUserStore implements UserStore {
  readonly #client: RedisCommandClient;
  readonly #prefix: string;

  constructor(options: Readonly<RedisStoreOptions>) {
    ({ client: this.#client, prefix: this.#prefix } = readStoreOptions('RedisUserStore', options));
  }

  /** Adds or replaces a user; `passwordHash` comes from hashPassword(). */
  async add(user: Readonly<UserRecord & { username: string }>): Promise<void> {
    const key = this.#key(user.username);
    const fields = ['subject', user.subject, 'passwordHash', user.passwordHash];
    if (user.scopes !== undefined) fields.push('scopes', user.scopes.join(' '));
    await REPLACE_HASH.run(this.#client, [key], fields);
  }

  async findByUsername(username: string): Promise<UserRecord | undefined> {
    const reply = (await this.#client.sendCommand([
      'HMGET',
      this.#key(username),
      'subject',
      'passwordHash',
      'scopes',
    ])) as unknown[];
    const [subject, passwordHash, scopes] = reply.map(text);
    if (subject === undefined || passwordHash === undefined) return undefined;
    return scopes === undefined ? { subject, passwordHash } : { subject, passwordHash, scopes: words(scopes) };
  }

  #key(username: string): string {
    return `${this.#prefix}user:${normalizeUsername(username)}`;
  }
}

/** Clients in Redis hashes: `<prefix>client:<id>`. */
export class RedisClientStore implements ClientStore {
  readonly #client: RedisCommandClient;
  readonly #prefix: string;

  constructor(options: Readonly<RedisStoreOptions>) {
    ({ client: this.#client, prefix: this.#prefix } = readStoreOptions('RedisClientStore', options));
  }

  /** Adds or replaces a client; give `secret` (hashed here) or `secretHash`. */
  async add(client: Readonly<Omit<ClientRecord, 'secretHash'> & { secret?: string; secretHash?: string }>): Promise<void> {
    const key = `${this.#prefix}client:${client.id}`;
    const fields = ['id', client.id, 'blocked', client.blocked ? '1' : '0'];
    const secretHash = client.secret === undefined ? client.secretHash : hashClientSecret(client.secret);
    if (secretHash !== undefined) fields.push('secretHash', secretHash);
    if (client.grants !== undefined) fields.push('grants', client.grants.join(' '));
    if (client.scopes !== undefined) fields.push('scopes', client.scopes.join(' '));
    await REPLACE_HASH.run(this.#client, [key], fields);
  }

  async findById(clientId: string): Promise<ClientRecord | undefined> {
    const reply = (await this.#client.sendCommand([
      'HMGET',
      `${this.#prefix}client:${clientId}`,
      'id',
      'secretHash',
      'grants',
      'scopes',
      'blocked',
    ])) as unknown[];
    const [id, secretHash, grants, scopes, blocked] = reply.map(text);
    if (id === undefined) return undefined;
    const record: { -readonly [K in keyof ClientRecord]: ClientRecord[K] } = { id, blocked: blocked === '1' };
    if (secretHash !== undefined) record.secretHash = secretHash;
    if (grants !== undefined)
      record.grants = words(grants).filter((g): g is GrantType => (GRANT_TYPES as readonly string[]).includes(g));
    if (scopes !== undefined) record.scopes = words(scopes);
    return record;
  }
}

// KEYS: token key. ARGV: family key prefix, family id, current hash, subject, clientId, scope, expiresAt (ms).
const CREATE = new Script(`
local family = ARGV[1] .. ARGV[2]
redis.call('HSET', family, 'current', ARGV[3], 'subject', ARGV[4], 'clientId', ARGV[5], 'scope', ARGV[6], 'expiresAt', ARGV[7])
redis.call('PEXPIREAT', family, ARGV[7])
redis.call('SET', KEYS[1], ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[7])
return 1
`);

// KEYS: token key. ARGV: family key prefix, now (ms).
const FIND = new Script(`
local id = redis.call('GET', KEYS[1])
if not id then return false end
local f = redis.call('HMGET', ARGV[1] .. id, 'subject', 'clientId', 'scope', 'expiresAt')
if not f[1] or tonumber(f[4]) <= tonumber(ARGV[2]) then return false end
return {id, f[1], f[2] or '', f[3] or ''}
`);

// KEYS: presented token key, next token key.
// ARGV: family key prefix, presented hash, next hash, next expiresAt (ms), now (ms).
// Old token keys are kept as long as their family, so a replayed one is recognised.
const ROTATE = new Script(`
local id = redis.call('GET', KEYS[1])
if not id then return {'invalid'} end
local family = ARGV[1] .. id
local f = redis.call('HMGET', family, 'current', 'subject', 'clientId', 'scope', 'expiresAt')
if not f[1] then return {'invalid'} end
if tonumber(f[5]) <= tonumber(ARGV[5]) then
  redis.call('DEL', family)
  return {'invalid'}
end
if f[1] ~= ARGV[2] then
  redis.call('DEL', family)
  return {'reused', id}
end
redis.call('HSET', family, 'current', ARGV[3], 'expiresAt', ARGV[4])
redis.call('PEXPIREAT', family, ARGV[4])
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
redis.call('SET', KEYS[2], id)
redis.call('PEXPIREAT', KEYS[2], ARGV[4])
return {'rotated', id, f[2], f[3] or '', f[4] or ''}
`);

// KEYS: token key. ARGV: family key prefix.
const REVOKE = new Script(`
local id = redis.call('GET', KEYS[1])
if not id then return 0 end
return redis.call('DEL', ARGV[1] .. id)
`);

/**
 * Refresh-token families in Redis: `<prefix>rt:<token hash>` → family id,
 * `<prefix>family:<id>` → current hash, subject, client, scope, expiry.
 * A revoked family's key is deleted, so every token of it stops working.
 */
export class RedisRefreshTokenStore implements RefreshTokenStore {
  readonly #client: RedisCommandClient;
  readonly #prefix: string;
  readonly #families: string;

  constructor(options: Readonly<RedisStoreOptions>) {
    ({ client: this.#client, prefix: this.#prefix } = readStoreOptions('RedisRefreshTokenStore', options));
    this.#families = `${this.#prefix}family:`;
  }

  async create(family: RefreshFamily, tokenHash: string, expiresAt: number): Promise<void> {
    await CREATE.run(
      this.#client,
      [this.#tokenKey(tokenHash)],
      [
        this.#families,
        family.familyId,
        tokenHash,
        family.subject,
        family.clientId ?? '',
        family.scopes.join(' '),
        String(expiresAt),
      ],
    );
  }

  async find(tokenHash: string): Promise<RefreshFamily | undefined> {
    const reply = (await FIND.run(this.#client, [this.#tokenKey(tokenHash)], [this.#families, String(Date.now())])) as
      | unknown[]
      | null;
    if (!Array.isArray(reply)) return undefined;
    const [familyId, subject, clientId, scope] = reply.map(text);
    return { familyId: familyId as string, subject: subject as string, clientId: clientId || undefined, scopes: words(scope) };
  }

  async rotate(tokenHash: string, nextHash: string, expiresAt: number): Promise<RotateResult> {
    const reply = (
      (await ROTATE.run(
        this.#client,
        [this.#tokenKey(tokenHash), this.#tokenKey(nextHash)],
        [this.#families, tokenHash, nextHash, String(expiresAt), String(Date.now())],
      )) as unknown[]
    ).map(text);
    const [status, familyId, subject, clientId, scope] = reply;
    if (status === 'reused') return { status, familyId: familyId as string };
    if (status !== 'rotated') return { status: 'invalid' };
    return {
      status,
      family: { familyId: familyId as string, subject: subject as string, clientId: clientId || undefined, scopes: words(scope) },
    };
  }

  async revokeByTokenHash(tokenHash: string): Promise<boolean> {
    return (await REVOKE.run(this.#client, [this.#tokenKey(tokenHash)], [this.#families])) === 1;
  }

  async revokeFamily(familyId: string): Promise<void> {
    await this.#client.sendCommand(['DEL', `${this.#families}${familyId}`]);
  }

  #tokenKey(tokenHash: string): string {
    return `${this.#prefix}rt:${tokenHash}`;
  }
}
