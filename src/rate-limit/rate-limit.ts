import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { checkFunction, checkOneOf, invalidOption, readOptions } from '../config/options.js';
import { apiError } from '../errors/api-error.js';
import type { CounterState, CounterStore } from '../stores/counter-store.js';
import { MemoryCounterStore } from '../stores/memory-counter-store.js';
import { appendRateLimitHeaders, policyItem, policyItemPrefix, quotedName, stateItem } from './headers.js';
import { type IdentifyRequest, identifyRequest } from './identity.js';
import { checkPolicy, checkStore, secondsUntil } from './limiter.js';
import { type PartitionSecret, partitionHasher, storeKeyOf } from './partition.js';

/**
 * Default quota: `RATE_LIMIT` of the reference server's contract ("`100`,
 * `60`: requests per window (seconds), counted per user and per
 * application"). SPEC.md: "Quota values, windows and which endpoints they
 * apply to: not shown."
 */
export const DEFAULT_RATE_LIMIT = 100;
/** Default window in seconds: `RATE_WINDOW` of the reference server's contract. */
export const DEFAULT_RATE_WINDOW_SECONDS = 60;
/** Default policy names, one per counted party (SPEC.md Limits rule 4). */
export const DEFAULT_USER_POLICY = 'user';
export const DEFAULT_APPLICATION_POLICY = 'application';

/** What to do when the store cannot be reached. */
export const STORE_FAILURE_MODES = ['open', 'closed'] as const;
export type StoreFailureMode = (typeof STORE_FAILURE_MODES)[number];

/** One policy of rateLimit(). */
export interface RateLimitPolicyOptions {
  /** Name shown in the headers. Default: `"user"` for `user`, `"application"` for `application`. */
  name?: string;
  /** The quota `q`. Default: the limiter's `limit`. */
  limit?: number;
  /** The window `w`, in seconds. Default: the limiter's `windowSeconds`. */
  windowSeconds?: number;
}

export interface RateLimitOptions {
  /** Requests allowed per window, for each policy that does not set its own. Default: `100`. */
  limit?: number;
  /** The window, in seconds, for each policy that does not set its own. Default: `60`. */
  windowSeconds?: number;
  /**
   * The per-user policy: counts the request's user, or its client address
   * when anonymous. `false` leaves it out. Default: `{ name: "user" }`.
   */
  user?: RateLimitPolicyOptions | false;
  /**
   * The per-application policy: counts the request's client id, or its
   * client address when no client is known. `false` leaves it out.
   * Default: `{ name: "application" }`.
   */
  application?: RateLimitPolicyOptions | false;
  /** Where counts live; a RedisCounterStore shares them between instances. Default: a new `MemoryCounterStore`. */
  store?: CounterStore;
  /**
   * Who a request acts for. Default: `identifyRequest`: `req.auth.subject`
   * and `req.auth.clientId`, else the client id of HTTP Basic or of a parsed
   * form body's `client_id`.
   */
  identify?: IdentifyRequest;
  /**
   * The client address an anonymous request is counted by. Default:
   * `req.ip` through express-rate-limit's `ipKeyGenerator` (an IPv6 address
   * counts by its /56 subnet). Set Express's `trust proxy` behind a proxy.
   */
  address?: (req: Request) => string;
  /**
   * When the store fails (Redis unreachable or too slow): `"closed"` answers
   * 503 `stateStoreUnavailable`; `"open"` lets the request through uncounted.
   * Default: `"closed"`.
   */
  storeFailure?: StoreFailureMode;
  /** Told of every store failure. Default: one JSON line on stderr. */
  onStoreError?: (error: unknown) => void;
  /**
   * Secret of the keyed hash written as `pk`. Default: a random secret of
   * this process; give every instance the same one so that their `pk` agree.
   */
  partitionSecret?: PartitionSecret;
}

const OPTION_NAMES = [
  'limit',
  'windowSeconds',
  'user',
  'application',
  'store',
  'identify',
  'address',
  'storeFailure',
  'onStoreError',
  'partitionSecret',
] as const;
const POLICY_OPTION_NAMES = ['name', 'limit', 'windowSeconds'] as const;

const logStoreError = (error: unknown): void => {
  const cause = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`${JSON.stringify({ level: 'error', message: 'rate-limit store failed', cause })}\n`);
};

const defaultAddress = (req: Request): string => ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? '');

// Partition keys and store keys of the identities seen lately, so that a
// client's next request neither hashes nor HMACs again: a Map, emptied when
// it holds this many identities (bounded memory, no per-entry bookkeeping).
export const IDENTITY_CACHE_SIZE = 10_000;

interface Policy {
  readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
  readonly quoted: string;
  readonly prefix: string;
}

/** What is derived from one identity: its `pk`, its store key per policy, its policy items. */
interface IdentityKeys {
  readonly pk: string;
  readonly storeKeys: (string | undefined)[];
}

/**
 * Rate limits counted per user and per application (SPEC.md Limits rule 4),
 * each its own policy, both shown on every response that passes the limiter,
 * whatever its status, in `RateLimit-Policy` and `RateLimit` (SPEC.md
 * Limits "Signalling"). Over a limit: 429 through the error model, with
 * `Retry-After` at the instant of that policy's `t` (rule 2). The older
 * `X-RateLimit-*` headers are never sent (rule 3).
 *
 * Each request is counted straight in the CounterStore (the same contract
 * limiter() counts with), one increment per policy; express-rate-limit's
 * `ipKeyGenerator` gives the client address. express-rate-limit's middleware
 * is not on the path: run twice per request (one run per policy) it cost
 * several times what counting costs (bench/micro/rate-limit.mjs), and its
 * header writer could not be used (its draft-8 items have no `qu`, hash `pk`
 * without a key, and several policies of one request must be one list);
 * headers.ts writes them.
 */
export function rateLimit(options?: Readonly<RateLimitOptions>): RequestHandler {
  const given = readOptions<RateLimitOptions>('rateLimit', options, OPTION_NAMES);
  const defaults = {
    limit: given.limit ?? DEFAULT_RATE_LIMIT,
    windowSeconds: given.windowSeconds ?? DEFAULT_RATE_WINDOW_SECONDS,
  };
  checkPolicy('rateLimit', '', { name: DEFAULT_USER_POLICY, ...defaults });
  const store = given.store === undefined ? new MemoryCounterStore() : checkStore('rateLimit', given.store);
  const identify =
    given.identify === undefined ? identifyRequest : checkFunction<IdentifyRequest>('rateLimit', 'identify', given.identify);
  const address =
    given.address === undefined ? defaultAddress : checkFunction<(req: Request) => string>('rateLimit', 'address', given.address);
  const failOpen = checkOneOf('rateLimit', 'storeFailure', given.storeFailure ?? 'closed', STORE_FAILURE_MODES) === 'open';
  const onStoreError =
    given.onStoreError === undefined
      ? logStoreError
      : checkFunction<(error: unknown) => void>('rateLimit', 'onStoreError', given.onStoreError);
  const hash = partitionHasher(given.partitionSecret);

  const kinds: ('user' | 'application')[] = [];
  const policies: Policy[] = [];
  for (const kind of ['user', 'application'] as const) {
    const option = given[kind] ?? {};
    if (option === false) continue;
    const policyOptions = readOptions<RateLimitPolicyOptions>(`rateLimit.${kind}`, option, POLICY_OPTION_NAMES);
    const defaultName = kind === 'user' ? DEFAULT_USER_POLICY : DEFAULT_APPLICATION_POLICY;
    const policy = checkPolicy('rateLimit', `${kind}.`, { name: defaultName, ...defaults, ...policyOptions });
    if (policies.some((other) => other.quoted === quotedName(policy.name))) {
      invalidOption('rateLimit', `${kind}.name`, policy.name, 'a name no other policy of this limiter has');
    }
    kinds.push(kind);
    policies.push({
      name: policy.name,
      limit: policy.limit,
      windowMs: policy.windowSeconds * 1000,
      quoted: quotedName(policy.name),
      prefix: policyItemPrefix(policy),
    });
  }
  if (policies.length === 0) {
    invalidOption('rateLimit', 'user', given.user, 'a policy when `application` is `false` (one policy at least)');
  }
  const count = policies.length;

  const cache = new Map<string, IdentityKeys>();
  const keysOf = (identity: string): IdentityKeys => {
    let keys = cache.get(identity);
    if (keys === undefined) {
      if (cache.size >= IDENTITY_CACHE_SIZE) cache.clear();
      keys = { pk: hash(identity), storeKeys: new Array(count) };
      cache.set(identity, keys);
    }
    return keys;
  };
  const storeKey = (keys: IdentityKeys, index: number, identity: string): string => {
    let key = keys.storeKeys[index];
    if (key === undefined) {
      key = storeKeyOf((policies[index] as Policy).name, identity);
      keys.storeKeys[index] = key;
    }
    return key;
  };

  // Writes both headers; then passes the request on, or answers 429, or 503
  // when the store failed and the limiter fails closed.
  function finish(
    res: Response,
    next: NextFunction,
    keys: IdentityKeys[],
    states: (CounterState | undefined)[],
    failure: unknown,
    failed: boolean,
  ): void {
    const now = Date.now();
    let policyHeader = '';
    let stateHeader = '';
    let retryAfter = -1;
    for (let i = 0; i < count; i++) {
      const policy = policies[i] as Policy;
      const pk = (keys[i] as IdentityKeys).pk;
      policyHeader += (i === 0 ? '' : ', ') + policyItem(policy.prefix, pk);
      const state = states[i];
      if (state === undefined) continue;
      const t = secondsUntil(state.resetAt, now);
      const remaining = state.count < policy.limit ? policy.limit - state.count : 0;
      stateHeader += (stateHeader === '' ? '' : ', ') + stateItem(policy.quoted, remaining, t, pk);
      if (state.count > policy.limit && t > retryAfter) retryAfter = t;
    }
    appendRateLimitHeaders(res, policyHeader, stateHeader);
    if (failed) {
      next(apiError('stateStoreUnavailable', { cause: failure }));
      return;
    }
    if (retryAfter >= 0) {
      next(apiError('tooManyRequests', { headers: { 'Retry-After': String(retryAfter) } }));
      return;
    }
    next();
  }

  return function rateLimitMiddleware(req, res, next) {
    const who = identify(req);
    let fallback: string | undefined;
    const keys: IdentityKeys[] = new Array(count);
    const identities: string[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const id = kinds[i] === 'user' ? who.user : who.application;
      let identity: string;
      if (id !== undefined && id !== '') {
        identity = `${kinds[i]}:${id}`;
      } else {
        fallback ??= `address:${address(req)}`;
        identity = fallback;
      }
      identities[i] = identity;
      // Anonymous requests count both policies by one address: one lookup.
      keys[i] = i > 0 && identity === identities[i - 1] ? (keys[i - 1] as IdentityKeys) : keysOf(identity);
    }
    const states: (CounterState | undefined)[] = new Array(count);
    // Policies are counted one after the other, as they are listed: when the
    // store fails and the limiter fails closed, the later ones are not counted.
    const step = (index: number): void => {
      if (index === count) {
        finish(res, next, keys, states, undefined, false);
        return;
      }
      let pending: Promise<CounterState>;
      try {
        pending = store.increment(
          storeKey(keys[index] as IdentityKeys, index, identities[index] as string),
          (policies[index] as Policy).windowMs,
        );
      } catch (error) {
        pending = Promise.reject(error);
      }
      pending.then(
        (state) => {
          states[index] = state;
          step(index + 1);
        },
        (error: unknown) => {
          onStoreError(error);
          if (failOpen) step(index + 1);
          else finish(res, next, keys, states, error, true);
        },
      );
    };
    step(0);
  };
}
