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
 * memory store's (sign-in-guard-store.ts), step for step.
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

// KEYS: pair failures, pending (hash: address → attempts in flight), failed addresses, delay steps, delay.
// ARGV: address, maxPair, delayAfterAddresses, pendingMs.
const RESERVE_ACCOUNT = new RedisScript(`
local failures = tonumber(redis.call('GET', KEYS[1]) or '0')
local maxPair = tonumber(ARGV[2])
if failures >= maxPair then return {'pair', redis.call('PTTL', KEYS[1])} end
local delay = redis.call('PTTL', KEYS[5])
if delay > 0 then return {'account', delay} end
local mine = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if failures + mine >= maxPair then return {'wait'} end
local addresses = tonumber(redis.call('GET', KEYS[3]) or '0')
local threshold = tonumber(ARGV[3])
local inFlight = redis.call('HLEN', KEYS[2])
if addresses >= threshold then
  if inFlight > 0 then return {'wait'} end
elseif redis.call('EXISTS', KEYS[1]) == 0 and (mine > 0 or addresses + inFlight >= threshold) then
  return {'wait'}
end
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return {'admit'}
`);

// KEYS: pending, known device, device failures. ARGV: pending field, maxPair, pendingMs.
// Replies 'unknown' when the device is not known (or no longer: its allowance is used, it is forgotten).
const RESERVE_DEVICE = new RedisScript(`
if redis.call('EXISTS', KEYS[2]) == 0 then return {'unknown'} end
local failures = tonumber(redis.call('GET', KEYS[3]) or '0')
local max = tonumber(ARGV[2])
if failures >= max then
  redis.call('DEL', KEYS[2])
  return {'unknown'}
end
if failures + tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') >= max then return {'wait'} end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {'admit'}
`);

// KEYS: as RESERVE_DEVICE. ARGV: pending field, outcome (s, f or c), windowMs, maxPair, deviceMs.
// Replies the device's failures after a failure, else 0.
const SETTLE_DEVICE = new RedisScript(`
local mine = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if mine > 1 then redis.call('HINCRBY', KEYS[1], ARGV[1], -1) else redis.call('HDEL', KEYS[1], ARGV[1]) end
if ARGV[2] == 's' then
  redis.call('DEL', KEYS[3])
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[5])
elseif ARGV[2] == 'f' then
  local count = redis.call('INCR', KEYS[3])
  if count == 1 or redis.call('PTTL', KEYS[3]) < 0 then redis.call('PEXPIRE', KEYS[3], ARGV[3]) end
  if count >= tonumber(ARGV[4]) then redis.call('DEL', KEYS[2]) end
  return count
end
return 0
`);

// KEYS: as RESERVE_ACCOUNT, then the known-device key (unused without a device).
// ARGV: address, outcome (s, f or c), windowMs, delayAfterAddresses, maxDelayMs, device ('' for none), deviceMs.
// Replies, after a failure, the pair's failures and the account's delay step (0 when not delayed); else {0, 0}.
const SETTLE_ACCOUNT = new RedisScript(`
local mine = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if mine > 1 then redis.call('HINCRBY', KEYS[2], ARGV[1], -1) else redis.call('HDEL', KEYS[2], ARGV[1]) end
if ARGV[2] == 's' then
  -- The failures are cleared; the key lives on to the window's end, so the address is counted once.
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('SET', KEYS[1], '0', 'PX', ttl) end
  if ARGV[6] ~= '' then redis.call('SET', KEYS[6], '1', 'PX', ARGV[7]) end
end
if ARGV[2] ~= 'f' then return {0, 0} end
local function bump(key)
  local count = redis.call('INCR', key)
  -- A new key gets the window; a key kept at 0 by a success keeps the window it has.
  if redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, ARGV[3]) end
  return count
end
local counted = redis.call('EXISTS', KEYS[1]) == 1
local pair = bump(KEYS[1])
local addresses
if counted then addresses = tonumber(redis.call('GET', KEYS[3]) or '0') else addresses = bump(KEYS[3]) end
if addresses < tonumber(ARGV[4]) then return {pair, 0} end
local steps = bump(KEYS[4])
local ms = math.min(math.pow(2, math.min(steps - 1, 30)) * 1000, tonumber(ARGV[5]))
redis.call('SET', KEYS[5], '1', 'PX', string.format('%d', ms))
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
    if (identity.device !== undefined) {
      const reply = (await RESERVE_DEVICE.run(this.#redis, this.#deviceKeys(identity), [
        `d:${identity.device}`,
        String(limits.maxPair),
        String(limits.pendingMs),
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
    if (known) {
      const failures = await SETTLE_DEVICE.run(this.#redis, this.#deviceKeys(identity), [
        `d:${identity.device}`,
        OUTCOME_CODES[outcome],
        String(limits.windowMs),
        String(limits.maxPair),
        String(limits.deviceMs),
      ]);
      return Number(failures) === limits.maxPair ? 'pair' : undefined;
    }
    const [pair, step] = (await SETTLE_ACCOUNT.run(
      this.#redis,
      [...this.#accountKeys(identity), this.#deviceKeys(identity)[1]],
      [
        identity.address,
        OUTCOME_CODES[outcome],
        String(limits.windowMs),
        String(limits.delayAfterAddresses),
        String(limits.maxDelayMs),
        identity.device ?? '',
        String(limits.deviceMs),
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

  /** The account's pending hash, the device's known key and its failures (all under the account's tag). */
  #deviceKeys(identity: SignInIdentity): [string, string, string] {
    const base = taggedKey(this.#redis.prefix, 'sign-in', identity.account);
    const device = identity.device ?? '';
    return [`${base}:pending`, `${base}:device:${device}`, `${base}:device-failures:${device}`];
  }

  #accountKeys(identity: SignInIdentity): [string, string, string, string, string] {
    const base = taggedKey(this.#redis.prefix, 'sign-in', identity.account);
    return [`${base}:failures:${identity.address}`, `${base}:pending`, `${base}:addresses`, `${base}:delays`, `${base}:delay`];
  }
}

/** A script's reply as a reservation. */
function asReservation(reply: unknown): SignInReservation {
  const [kind, ms] = reply as [string, number | undefined];
  if (kind === 'admit') return { kind: 'admit', known: false };
  if (kind === 'wait') return { kind: 'wait' };
  return { kind: 'refuse', reason: kind as SignInRefusal, retryAfterMs: Number(ms) };
}
