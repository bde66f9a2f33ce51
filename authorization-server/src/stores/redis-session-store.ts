import { createHash } from 'node:crypto';
import {
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
  cookieDigest,
  isLive,
  KEPT_OVER_SESSIONS,
  LAST_SEEN_INTERVAL_MS,
  type LiveSession,
  liveSessionOf,
  type NewSession,
  openSession,
  readSessionRules,
  SESSION_STORE_OPTIONS,
  type SessionCallOptions,
  type SessionCreateOptions,
  type SessionRecord,
  type SessionRules,
  type SessionStore,
  type SessionStoreOptions,
  type SessionSummary,
  sessionEvents,
  summaryOf,
} from './session-store.js';

/**
 * Sessions in Redis, shared by every instance. A user's sessions are one
 * hash, `<prefix>sessions:{<user digest>}`, public id → record, so every
 * change to them (open one and end those beyond `maxSessionsPerUser`, or
 * all others with `oneSessionPerUser`; end one; end all but one) is one
 * Lua script over one key: atomic, and runnable on a Redis Cluster. A cookie leads to its session through
 * `<prefix>session-cookie:<cookie digest>` → `<id>|<subject>`, written once,
 * before the session exists, and never changed, so it needs no atomic step
 * with the user's hash; it is deleted right after the script that forgot its
 * session. Of a user's sessions that are over, each script keeps only the
 * KEPT_OVER_SESSIONS most recent, so the hash holds at most
 * `maxSessionsPerUser` + 10 records and every script reads that many. Times come from the caller's clock (a fake one in
 * tests); a record is `createdAt|lastSeenAt|expiresAt|ended|device`.
 */

export interface RedisSessionStoreOptions extends RedisStoreOptions, SessionStoreOptions {}

// Shared by the scripts: a record's fields, whether it is live, the record marked ended.
// A record is `createdAt|lastSeenAt|expiresAt|ended|#<cookie digest>|device` (a record written before the
// cookie digest was kept has no `#…|` part: its cookie key expires on its own).
const RECORD_LUA = `
local function parse(record)
  local c, l, e, x, rest = string.match(record, '^(%d+)|(%d+)|(%d+)|(%d)|(.*)$')
  local digest, d = string.match(rest, '^#([%w_%-]+)|(.*)$')
  if digest then return c, l, e, x, d, '#' .. digest .. '|' end
  return c, l, e, x, rest, ''
end
local function live(record, now)
  local _, _, e, x = parse(record)
  return x == '0' and tonumber(e) > now
end
-- The record ended now: its lastSeenAt becomes when it ended.
local function ended(record, now)
  local c, _, e, _, d, digest = parse(record)
  return c .. '|' .. now .. '|' .. e .. '|1|' .. digest .. d
end
-- Forgets the sessions of KEYS[1] past their keeping; returns the live ones, least recently used first.
local function live_sessions(now, keepMs)
  local open = {}
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    local id, record = all[i], all[i + 1]
    local c, l = parse(record)
    if tonumber(c) + keepMs <= now then
      redis.call('HDEL', KEYS[1], id)
    elseif live(record, now) then
      open[#open + 1] = { id, tonumber(l), record }
    end
  end
  table.sort(open, function(a, b) return a[2] < b[2] end)
  return open
end
-- Forgets the sessions that are over beyond the most recent ARGV kept; returns their cookie digests.
local function drop_over(now, kept)
  local over = {}
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    if not live(all[i + 1], now) then
      local _, l, e, x, _, digest = parse(all[i + 1])
      local since = tonumber(e)
      if x == '1' then since = tonumber(l) end
      over[#over + 1] = { all[i], since, string.sub(digest, 2, -2) }
    end
  end
  table.sort(over, function(a, b) return a[2] > b[2] end)
  local digests = {}
  for i = kept + 1, #over do
    redis.call('HDEL', KEYS[1], over[i][1])
    if over[i][3] ~= '' then digests[#digests + 1] = over[i][3] end
  end
  return digests
end
`;

// KEYS: the user's hash. ARGV: id, record, now, keepMs, the most live sessions a user keeps, the sessions over kept.
// Ends the least recently used sessions beyond the most (all others when it is 1); replies their ids and the
// cookie digests of the sessions it forgot.
const CREATE = new RedisScript(`${RECORD_LUA}
local now, keepMs = tonumber(ARGV[3]), tonumber(ARGV[4])
local open = live_sessions(now, keepMs)
local gone = {}
for i = 1, #open - tonumber(ARGV[5]) + 1 do
  redis.call('HSET', KEYS[1], open[i][1], ended(open[i][3], now))
  gone[#gone + 1] = open[i][1]
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], keepMs)
return {gone, drop_over(now, tonumber(ARGV[6]))}
`);

// KEYS: the user's hash. ARGV: id, now, lastSeen interval. Replies nil, {'over', record} or {'live', record}.
const FIND = new RedisScript(`${RECORD_LUA}
local record = redis.call('HGET', KEYS[1], ARGV[1])
if not record then return false end
local now = tonumber(ARGV[2])
if not live(record, now) then return {'over', record} end
local c, l, e, _, d, digest = parse(record)
if now - tonumber(l) >= tonumber(ARGV[3]) then
  record = c .. '|' .. ARGV[2] .. '|' .. e .. '|0|' .. digest .. d
  redis.call('HSET', KEYS[1], ARGV[1], record)
end
return {'live', record}
`);

// KEYS: the user's hash. ARGV: id, now, the sessions over kept. Replies {1 when it ended a live session, digests forgotten}.
const END_ONE = new RedisScript(`${RECORD_LUA}
local now = tonumber(ARGV[2])
local record = redis.call('HGET', KEYS[1], ARGV[1])
if not record or not live(record, now) then return {0, {}} end
redis.call('HSET', KEYS[1], ARGV[1], ended(record, now))
return {1, drop_over(now, tonumber(ARGV[3]))}
`);

// KEYS: the user's hash. ARGV: the id kept, now, keepMs, the sessions over kept. Replies the ids it ended, digests forgotten.
const END_OTHERS = new RedisScript(`${RECORD_LUA}
local now = tonumber(ARGV[2])
local gone = {}
for _, session in ipairs(live_sessions(now, tonumber(ARGV[3]))) do
  if session[1] ~= ARGV[1] then
    redis.call('HSET', KEYS[1], session[1], ended(session[3], now))
    gone[#gone + 1] = session[1]
  end
end
return {gone, drop_over(now, tonumber(ARGV[4]))}
`);

const FACTORY = 'RedisSessionStore';

export class RedisSessionStore implements SessionStore {
  readonly ttlSeconds: number;
  readonly #redis: RedisConnection;
  readonly #rules: SessionRules;

  /** `client`: a connected node-redis v6 client, `createClient()` or `createCluster()`; `prefix` default `"oauth2:"`. */
  constructor(options: Readonly<RedisSessionStoreOptions>) {
    const { connection, given } = readRedisOptions<RedisSessionStoreOptions>(
      FACTORY,
      options,
      DEFAULT_OAUTH2_REDIS_PREFIX,
      SESSION_STORE_OPTIONS,
    );
    this.#redis = connection;
    this.#rules = readSessionRules(FACTORY, given);
    this.ttlSeconds = this.#rules.ttlMs / 1000;
  }

  async create(subject: string, options: SessionCreateOptions = {}): Promise<NewSession> {
    const { cookie, record } = openSession(subject, options, this.#rules);
    const index = this.#cookieKey(cookie);
    // The way from the cookie first: until the session exists it leads nowhere.
    await this.#redis.send(index, ['SET', index, `${record.id}|${subject}`, 'PX', String(this.#rules.keepMs)]);
    const [gone, dropped] = (await CREATE.run(
      this.#redis,
      [this.#userKey(subject)],
      [
        record.id,
        encode(record, cookieDigest(cookie)),
        String(record.createdAt),
        String(this.#rules.keepMs),
        String(this.#rules.mostLive),
        String(KEPT_OVER_SESSIONS),
      ],
    )) as [unknown[], unknown[]];
    await this.#forgetCookies(dropped);
    for (const id of gone.map(replyText)) {
      if (id !== undefined) sessionEvents.ended(subject, id, 'ended by a new sign-in', options);
    }
    sessionEvents.created(record, options);
    return { cookie, session: liveSessionOf(record) };
  }

  async find(cookie: string, options: SessionCallOptions = {}): Promise<LiveSession | undefined> {
    const named = await this.#named(cookie);
    if (!named) return undefined;
    const reply = (await FIND.run(
      this.#redis,
      [this.#userKey(named.subject)],
      [named.id, String(Date.now()), String(LAST_SEEN_INTERVAL_MS)],
    )) as unknown[] | null;
    if (!reply) return undefined;
    const record = decode(named.subject, named.id, replyText(reply[1]) ?? '');
    if (replyText(reply[0]) === 'live' && record) return liveSessionOf(record);
    sessionEvents.usedAfterEnd(named.subject, named.id, options);
    return undefined;
  }

  async list(subject: string): Promise<SessionSummary[]> {
    const key = this.#userKey(subject);
    const now = Date.now();
    const records: SessionRecord[] = [];
    for (const [id, text] of hashEntries(await this.#redis.send(key, ['HGETALL', key]))) {
      const record = decode(subject, replyText(id) ?? '', replyText(text) ?? '');
      if (record && isLive(record, now)) records.push(record);
    }
    return records.sort((a, b) => a.createdAt - b.createdAt).map(summaryOf);
  }

  async end(subject: string, id: string, options: SessionCallOptions = {}): Promise<boolean> {
    const ended = await this.#endOne(subject, id);
    if (ended) sessionEvents.ended(subject, id, 'ended by its user', options);
    return ended;
  }

  async endOthers(subject: string, currentId: string, options: SessionCallOptions = {}): Promise<number> {
    const [gone, dropped] = (await END_OTHERS.run(
      this.#redis,
      [this.#userKey(subject)],
      [currentId, String(Date.now()), String(this.#rules.keepMs), String(KEPT_OVER_SESSIONS)],
    )) as [unknown[], unknown[]];
    await this.#forgetCookies(dropped);
    for (const id of gone.map(replyText)) if (id !== undefined) sessionEvents.ended(subject, id, 'ended by its user', options);
    return gone.length;
  }

  async endByCookie(cookie: string, options: SessionCallOptions = {}): Promise<boolean> {
    const named = await this.#named(cookie);
    if (!named) return false;
    const ended = await this.#endOne(named.subject, named.id);
    if (ended) sessionEvents.ended(named.subject, named.id, 'signed out', options);
    return ended;
  }

  async #endOne(subject: string, id: string): Promise<boolean> {
    const [ended, dropped] = (await END_ONE.run(
      this.#redis,
      [this.#userKey(subject)],
      [id, String(Date.now()), String(KEPT_OVER_SESSIONS)],
    )) as [number, unknown[]];
    await this.#forgetCookies(dropped);
    return Number(ended) === 1;
  }

  /**
   * Deletes the cookie keys of sessions the user's hash just forgot. A cookie
   * key lives in its own slot (the cookie alone must find it), so this is a
   * step after the script: a cookie key it misses leads to no session, and
   * expires with its keeping.
   */
  async #forgetCookies(digests: readonly unknown[]): Promise<void> {
    for (const digest of digests.map(replyText)) {
      if (digest === undefined) continue;
      const key = redisKey(this.#redis.prefix, 'session-cookie', digest);
      await this.#redis.send(key, ['DEL', key]);
    }
  }

  /** The session a cookie names (which may be over), or undefined. */
  async #named(cookie: string): Promise<{ id: string; subject: string } | undefined> {
    const index = this.#cookieKey(cookie);
    const value = replyText(await this.#redis.send(index, ['GET', index]));
    const bar = value?.indexOf('|') ?? -1;
    if (value === undefined || bar < 1) return undefined;
    return { id: value.slice(0, bar), subject: value.slice(bar + 1) };
  }

  #cookieKey(cookie: string): string {
    return redisKey(this.#redis.prefix, 'session-cookie', cookieDigest(cookie));
  }

  /** The user's hash; its tag is the subject's digest, so any subject makes a valid tag. */
  #userKey(subject: string): string {
    return taggedKey(this.#redis.prefix, 'sessions', createHash('sha256').update(subject).digest('base64url').slice(0, 22));
  }
}

/** HGETALL's reply as pairs: a flat array (RESP2), or a map or object (RESP3, as node-redis gives it). */
export function hashEntries(reply: unknown): [unknown, unknown][] {
  if (Array.isArray(reply)) return Array.from({ length: reply.length >> 1 }, (_, i) => [reply[2 * i], reply[2 * i + 1]]);
  if (reply instanceof Map) return [...reply.entries()];
  return reply !== null && typeof reply === 'object' ? Object.entries(reply) : [];
}

const encode = (record: SessionRecord, digest: string): string =>
  `${record.createdAt}|${record.lastSeenAt}|${record.expiresAt}|${record.ended ? 1 : 0}|#${digest}|${record.device}`;

/** A stored record, or undefined when it does not parse. */
function decode(subject: string, id: string, text: string): SessionRecord | undefined {
  const match = /^(\d+)\|(\d+)\|(\d+)\|([01])\|(?:#[\w-]+\|)?(.*)$/s.exec(text);
  if (!match) return undefined;
  const [, createdAt, lastSeenAt, expiresAt, ended, device] = match;
  return {
    subject,
    id,
    createdAt: Number(createdAt),
    lastSeenAt: Number(lastSeenAt),
    expiresAt: Number(expiresAt),
    device: device ?? '',
    ended: ended === '1',
  };
}
