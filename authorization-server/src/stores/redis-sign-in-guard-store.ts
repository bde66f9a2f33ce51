import {
  DEFAULT_OAUTH2_REDIS_PREFIX,
  type RedisConnection,
  RedisScript,
  readRedisOptions,
  taggedKey,
} from 'express-api-conventions/extend';
import type { RedisStoreOptions } from 'express-api-conventions/stores';
import {
  allowanceUsed,
  type SignInGuardStore,
  type SignInIdentity,
  type SignInLimits,
  type SignInOutcome,
  type SignInRefusal,
  type SignInReservation,
} from './sign-in-guard-store.js';

/**
 * The sign-in guard's counts in Redis, shared by every instance: each step
 * is one Lua script over the keys of one hash slot, so it is atomic and runs
 * on a Redis Cluster as on a single Redis. An account's keys carry its
 * digest as hash tag (`<prefix>sign-in:{<account>}:…`), an address's keys
 * its own (`<prefix>sign-in-address:{<address>}:…`); an attempt runs the
 * address's script, then the account's, and gives the address's
 * reservation back when the account's refuses or holds it. The rule is the
 * memory store's (sign-in-guard-store.ts), step for step. An account's state
 * is five keys whatever happens to it: attempts in flight, its failed
 * addresses and their failures (a hash), the delay (a hash), its known
 * devices (a sorted set by last sign-in, at most `maxDevices`) and their
 * failures (a hash). The account's times come from the caller's clock (as
 * RedisSessionStore's); the address's count, shared by every username,
 * lives by its key's TTL.
 */

// KEYS: failures, pending. ARGV: maxAddress, pendingMs.
const RESERVE_ADDRESS = new RedisScript(`
local failures = tonumber(redis.call('GET', KEYS[1]) or '0')
local max = tonumber(ARGV[1])
if failures >= max then return {'address', redis.call('PTTL', KEYS[1])} end
if failures + tonumber(redis.call('GET', KEYS[2]) or '0') >= max then return {'wait'} end
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return {'admit'}
`);

// KEYS: failures, pending. ARGV: '1' when the attempt failed, windowMs. Replies the address's failures after a failure, else 0.
const SETTLE_ADDRESS = new RedisScript(`
local count = 0
if ARGV[1] == '1' then
  count = redis.call('INCR', KEYS[1])
  if count == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
end
if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then redis.call('DECR', KEYS[2]) end
return count
`);

// Shared by the account's scripts: streaks ('<count>:<last failure ms>' in a hash) and known devices.
const ACCOUNT_LUA = `
-- A streak's count and last failure while its last failure is less than a window old, else 0 and nil.
local function streak(key, field, now, windowMs)
  local value = redis.call('HGET', key, field)
  if not value then return 0, nil end
  local count, last = string.match(value, '^(%d+):(%d+)$')
  if tonumber(last) + windowMs <= now then return 0, nil end
  return tonumber(count), tonumber(last)
end
-- One more failure now: the streak goes on, or a new one starts. Returns the count.
local function extend(key, field, now, windowMs)
  local count = streak(key, field, now, windowMs) + 1
  redis.call('HSET', key, field, count .. ':' .. now)
  redis.call('PEXPIRE', key, windowMs)
  return count
end
-- The addresses that failed in the window; forgets the others.
local function failed_addresses(key, now, windowMs)
  local all = redis.call('HGETALL', key)
  local live = 0
  for i = 1, #all, 2 do
    local _, last = string.match(all[i + 1], '^(%d+):(%d+)$')
    if tonumber(last) + windowMs <= now then redis.call('HDEL', key, all[i]) else live = live + 1 end
  end
  return live
end
local function release(pending, field)
  local mine = tonumber(redis.call('HGET', pending, field) or '0')
  if mine > 1 then redis.call('HINCRBY', pending, field, -1) else redis.call('HDEL', pending, field) end
end
-- A device that just signed in: known, the most recently used; beyond the most, the least recently used are forgotten.
local function remember(devices, failures, device, now, deviceMs, most)
  redis.call('ZADD', devices, now, device)
  redis.call('HDEL', failures, device)
  redis.call('PEXPIRE', devices, deviceMs)
  redis.call('ZREMRANGEBYSCORE', devices, '-inf', now - deviceMs)
  local over = redis.call('ZCARD', devices) - most
  if over <= 0 then return end
  for _, old in ipairs(redis.call('ZRANGE', devices, 0, over - 1)) do redis.call('HDEL', failures, old) end
  redis.call('ZREMRANGEBYRANK', devices, 0, over - 1)
end
`;

// KEYS: pending (hash: address → attempts in flight), failed addresses (hash: address → streak), delay (hash).
// ARGV: address, maxPair, delayAfterAddresses, pendingMs, now, windowMs.
const RESERVE_ACCOUNT = new RedisScript(`${ACCOUNT_LUA}
local now, windowMs = tonumber(ARGV[5]), tonumber(ARGV[6])
local failures, last = streak(KEYS[2], ARGV[1], now, windowMs)
local maxPair = tonumber(ARGV[2])
if failures >= maxPair then return {'pair', last + windowMs - now} end
local delayed = tonumber(redis.call('HGET', KEYS[3], 'until') or '0')
if delayed > now then return {'account', delayed - now} end
local mine = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if failures + mine >= maxPair then return {'wait'} end
local addresses = failed_addresses(KEYS[2], now, windowMs)
local threshold = tonumber(ARGV[3])
local inFlight = redis.call('HLEN', KEYS[1])
if addresses >= threshold then
  if inFlight > 0 then return {'wait'} end
elseif last == nil and (mine > 0 or addresses + inFlight >= threshold) then
  return {'wait'}
end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {'admit'}
`);

// KEYS: pending, known devices (sorted set: device → last sign-in), device failures (hash: device → streak).
// ARGV: pending field, device, maxPair, pendingMs, now, windowMs, deviceMs.
// Replies 'unknown' when the device is not known (or no longer: its allowance is used, it is forgotten).
const RESERVE_DEVICE = new RedisScript(`${ACCOUNT_LUA}
local now, windowMs = tonumber(ARGV[5]), tonumber(ARGV[6])
local signedIn = redis.call('ZSCORE', KEYS[2], ARGV[2])
if not signedIn or tonumber(signedIn) + tonumber(ARGV[7]) <= now then return {'unknown'} end
local failures = streak(KEYS[3], ARGV[2], now, windowMs)
local max = tonumber(ARGV[3])
if failures >= max then
  redis.call('ZREM', KEYS[2], ARGV[2])
  redis.call('HDEL', KEYS[3], ARGV[2])
  return {'unknown'}
end
if failures + tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') >= max then return {'wait'} end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {'admit'}
`);

// KEYS: as RESERVE_DEVICE. ARGV: pending field, device, outcome (s, f or c), windowMs, maxPair, deviceMs, now, maxDevices.
// Replies the device's failures after a failure, else 0.
const SETTLE_DEVICE = new RedisScript(`${ACCOUNT_LUA}
local now, windowMs = tonumber(ARGV[7]), tonumber(ARGV[4])
release(KEYS[1], ARGV[1])
if ARGV[3] == 's' then remember(KEYS[2], KEYS[3], ARGV[2], now, tonumber(ARGV[6]), tonumber(ARGV[8])) end
if ARGV[3] ~= 'f' then return 0 end
local count = extend(KEYS[3], ARGV[2], now, windowMs)
if count >= tonumber(ARGV[5]) then
  redis.call('ZREM', KEYS[2], ARGV[2])
  redis.call('HDEL', KEYS[3], ARGV[2])
end
return count
`);

// KEYS: as RESERVE_ACCOUNT, then the known devices and their failures.
// ARGV: address, outcome (s, f or c), windowMs, delayAfterAddresses, maxDelayMs, device ('' for none), deviceMs, now, maxDevices.
// Replies, after a failure, the pair's failures and the account's delay step (0 when not delayed); else {0, 0}.
const SETTLE_ACCOUNT = new RedisScript(`${ACCOUNT_LUA}
local now, windowMs = tonumber(ARGV[8]), tonumber(ARGV[3])
release(KEYS[1], ARGV[1])
if ARGV[2] == 's' then
  -- The failures are cleared; the address stays one of the window's failed addresses.
  local _, last = streak(KEYS[2], ARGV[1], now, windowMs)
  if last then redis.call('HSET', KEYS[2], ARGV[1], '0:' .. last) end
  if ARGV[6] ~= '' then remember(KEYS[4], KEYS[5], ARGV[6], now, tonumber(ARGV[7]), tonumber(ARGV[9])) end
end
if ARGV[2] ~= 'f' then return {0, 0} end
local pair = extend(KEYS[2], ARGV[1], now, windowMs)
if failed_addresses(KEYS[2], now, windowMs) < tonumber(ARGV[4]) then return {pair, 0} end
local steps = 1
local last = tonumber(redis.call('HGET', KEYS[3], 'last') or '0')
if last + windowMs > now then steps = tonumber(redis.call('HGET', KEYS[3], 'steps')) + 1 end
local ms = math.min(math.pow(2, math.min(steps - 1, 30)) * 1000, tonumber(ARGV[5]))
redis.call('HSET', KEYS[3], 'steps', steps, 'last', now, 'until', string.format('%d', now + ms))
redis.call('PEXPIRE', KEYS[3], math.max(windowMs, ms))
return {pair, steps}
`);

const OUTCOME_CODES: Record<SignInOutcome, string> = { succeeded: 's', failed: 'f', cancelled: 'c' };

export class RedisSignInGuardStore implements SignInGuardStore {
  readonly #redis: RedisConnection;

  /** `client`: a connected node-redis v6 client, `createClient()` or `createCluster()`; `prefix` default `"oauth2:"`. */
  constructor(options: Readonly<RedisStoreOptions>) {
    this.#redis = readRedisOptions('RedisSignInGuardStore', options, DEFAULT_OAUTH2_REDIS_PREFIX).connection;
  }

  async reserve(identity: SignInIdentity, limits: SignInLimits): Promise<SignInReservation> {
    const now = Date.now();
    if (identity.device !== undefined) {
      const reply = (await RESERVE_DEVICE.run(this.#redis, this.#deviceKeys(identity), [
        `d:${identity.device}`,
        identity.device,
        String(limits.maxPair),
        String(limits.pendingMs),
        String(now),
        String(limits.windowMs),
        String(limits.deviceMs),
      ])) as [string];
      if (reply[0] === 'admit') return { kind: 'admit', known: true };
      if (reply[0] === 'wait') return { kind: 'wait' };
    }
    const addressKeys = this.#addressKeys(identity);
    const address = asReservation(
      await RESERVE_ADDRESS.run(this.#redis, addressKeys, [String(limits.maxAddress), String(limits.pendingMs)]),
    );
    if (address.kind !== 'admit') return address;
    let account: SignInReservation;
    try {
      account = asReservation(
        await RESERVE_ACCOUNT.run(this.#redis, this.#accountKeys(identity), [
          identity.address,
          String(limits.maxPair),
          String(limits.delayAfterAddresses),
          String(limits.pendingMs),
          String(now),
          String(limits.windowMs),
        ]),
      );
    } catch (error) {
      await this.#releaseAddress(addressKeys, limits).catch(() => undefined);
      throw error;
    }
    if (account.kind !== 'admit') await this.#releaseAddress(addressKeys, limits);
    return account;
  }

  async settle(
    identity: SignInIdentity,
    outcome: SignInOutcome,
    limits: SignInLimits,
    known: boolean,
  ): Promise<SignInRefusal | undefined> {
    const now = String(Date.now());
    if (known) {
      const failures = await SETTLE_DEVICE.run(this.#redis, this.#deviceKeys(identity), [
        `d:${identity.device}`,
        identity.device as string,
        OUTCOME_CODES[outcome],
        String(limits.windowMs),
        String(limits.maxPair),
        String(limits.deviceMs),
        now,
        String(limits.maxDevices),
      ]);
      return Number(failures) === limits.maxPair ? 'pair' : undefined;
    }
    const [devices, deviceFailures] = this.#deviceKeys(identity).slice(1);
    const [pair, step] = (await SETTLE_ACCOUNT.run(
      this.#redis,
      [...this.#accountKeys(identity), devices as string, deviceFailures as string],
      [
        identity.address,
        OUTCOME_CODES[outcome],
        String(limits.windowMs),
        String(limits.delayAfterAddresses),
        String(limits.maxDelayMs),
        identity.device ?? '',
        String(limits.deviceMs),
        now,
        String(limits.maxDevices),
      ],
    )) as [number, number];
    const addressFailures = await SETTLE_ADDRESS.run(this.#redis, this.#addressKeys(identity), [
      outcome === 'failed' ? '1' : '0',
      String(limits.windowMs),
    ]);
    if (outcome !== 'failed') return undefined;
    return allowanceUsed(Number(pair), Number(addressFailures), limits) ?? (Number(step) === 1 ? 'account' : undefined);
  }

  #releaseAddress(keys: [string, string], limits: SignInLimits): Promise<unknown> {
    return SETTLE_ADDRESS.run(this.#redis, keys, ['0', String(limits.windowMs)]);
  }

  #addressKeys(identity: SignInIdentity): [string, string] {
    const base = taggedKey(this.#redis.prefix, 'sign-in-address', identity.address);
    return [`${base}:failures`, `${base}:pending`];
  }

  /** The account's pending hash, its known devices and their failures (all under the account's tag). */
  #deviceKeys(identity: SignInIdentity): [string, string, string] {
    const base = taggedKey(this.#redis.prefix, 'sign-in', identity.account);
    return [`${base}:pending`, `${base}:devices`, `${base}:device-failures`];
  }

  #accountKeys(identity: SignInIdentity): [string, string, string] {
    const base = taggedKey(this.#redis.prefix, 'sign-in', identity.account);
    return [`${base}:pending`, `${base}:failed`, `${base}:delay`];
  }
}

/** A script's reply as a reservation. */
function asReservation(reply: unknown): SignInReservation {
  const [kind, ms] = reply as [string, number | undefined];
  if (kind === 'admit') return { kind: 'admit', known: false };
  if (kind === 'wait') return { kind: 'wait' };
  return { kind: 'refuse', reason: kind as SignInRefusal, retryAfterMs: Number(ms) };
}
