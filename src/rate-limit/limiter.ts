import { checkInteger, checkOneOf, invalidOption, readOptions } from '../config/options.js';
import { ApiError } from '../errors/api-error.js';
import { type CatalogueEntry, ERROR_CATALOGUE } from '../errors/catalogue.js';
import { markLimiterRefusal } from '../errors/error-handler.js';
import { storeUnavailable } from '../errors/store-unavailable.js';
import { checkStore } from '../stores/check-store.js';
import { storeKeyOf } from '../stores/counter-keys.js';
import { type CounterState, type CounterStore, secondsUntil } from '../stores/counter-store.js';
import { MemoryCounterStore, synchronousIncrement } from '../stores/memory-counter-store.js';
import {
  DEFAULT_QUOTA_UNIT,
  isPolicyName,
  policyItem,
  policyItemPrefix,
  QUOTA_UNITS,
  type QuotaUnit,
  quotedName,
  stateItem,
} from './headers.js';
import { type PartitionHasher, type PartitionSecret, partitionHasher } from './partition.js';

/** Options of limiter(): one named policy, usable outside a middleware. */
export interface LimiterOptions {
  /** The policy name shown in the headers (printable ASCII). Required. */
  name: string;
  /** The quota `q`: hits allowed in one window. Required, at least 1. */
  limit: number;
  /** The window `w`, in seconds. Required, at least 1. */
  windowSeconds: number;
  /** The quota unit `qu`. Default: `"requests"` (then not written). */
  quotaUnit?: QuotaUnit;
  /** Where the counts live. Default: a new `MemoryCounterStore`. */
  store?: CounterStore;
  /**
   * The secret of the keyed hash written as `pk`. Default: a random secret
   * of this process (give every instance the same one so their `pk` agree).
   */
  partitionSecret?: PartitionSecret;
}

const OPTION_NAMES = ['name', 'limit', 'windowSeconds', 'quotaUnit', 'store', 'partitionSecret'] as const;

/** Where one identity stands against one policy. */
export interface LimitState {
  /** The policy's name. */
  readonly policy: string;
  /** The quota `q`. */
  readonly limit: number;
  /** Hits counted in the current window. */
  readonly used: number;
  /** `r`: hits left in the window, never below 0. */
  readonly remaining: number;
  /** When the window ends, in milliseconds since the epoch. */
  readonly resetAt: number;
  /** `t`: seconds until the window ends, rounded up. */
  readonly resetSeconds: number;
  /** Whether this hit (for consume) or the next one (for peek) is over the quota. */
  readonly limited: boolean;
  /** The `pk` of the identity: a keyed hash, never the identity itself. */
  readonly partitionKey: string;
  /** The policy item for `RateLimit-Policy`. */
  readonly policyItem: string;
  /** The state item for `RateLimit`. */
  readonly stateItem: string;
}

/** A policy that counts hits per identity (a user name, a client address, ...). */
export interface Limiter {
  readonly name: string;
  readonly limit: number;
  readonly windowSeconds: number;
  /** Counts one hit. `limited` is true once the count is over the quota. */
  consume(identity: string): Promise<LimitState>;
  /** Where the identity stands, without counting. `limited` is true when the next hit would be refused. */
  peek(identity: string): Promise<LimitState>;
  /**
   * Gives one hit of the identity's current window back (never below 0): a
   * hit that another policy refused, or an attempt that turned out fine.
   */
  refund(identity: string): Promise<void>;
  /** Forgets the identity's window (for example after a successful sign-in). */
  reset(identity: string): Promise<void>;
}

/** What one identity is counted under in one policy: computed once, kept by callers that see it again. */
export interface PolicyKey {
  /** `pk`: the keyed hash of the identity. */
  readonly partitionKey: string;
  /** The key in the CounterStore: `<policy>:<digest>`. */
  readonly storeKey: string;
  /** The whole `RateLimit-Policy` item of this identity. */
  readonly policyItem: string;
}

/**
 * The entry points under limiter()'s, for a caller that keeps the keys of
 * the identities it sees (rateLimit() does, so that a client's next request
 * neither hashes nor HMACs again). A store failure rejects with the store's
 * own error, not yet the 503 ApiError: the caller decides (fail open or
 * closed) and logs it. Internal to the library.
 */
export interface KeyedLimiter extends Limiter {
  /** The keys of an identity; `partitionKey` when the caller already holds the identity's `pk`. */
  keyOf(identity: string, partitionKey?: string): PolicyKey;
  consumeKey(key: PolicyKey): Promise<LimitState>;
  /**
   * consumeKey() that answers at once, without a promise, when the store
   * counts synchronously (the MemoryCounterStore), and with consumeKey()'s
   * promise for every other store.
   */
  countKey(key: PolicyKey): LimitState | Promise<LimitState>;
  peekKey(key: PolicyKey): Promise<LimitState>;
  refundKey(key: PolicyKey): Promise<void>;
  /** The state once a consumed hit was given back: one fewer used; `limited` still says whether that hit was over. */
  givenBack(state: LimitState): LimitState;
  /** The state of a window the store counted this hit in (what consumeKey() answers). */
  countedState(key: PolicyKey, counter: CounterState): LimitState;
  /** The state of a window read without counting, `undefined` when none is open (what peekKey() answers). */
  peekedState(key: PolicyKey, counter: CounterState | undefined): LimitState;
}

/** Checks a policy's name, limit, window and unit at construction. */
export function checkPolicy(
  factory: string,
  prefix: string,
  given: { name?: unknown; limit?: unknown; windowSeconds?: unknown; quotaUnit?: unknown },
): { name: string; limit: number; windowSeconds: number; quotaUnit: QuotaUnit } {
  if (!isPolicyName(given.name)) invalidOption(factory, `${prefix}name`, given.name, 'a non-empty string of printable ASCII');
  return {
    name: given.name,
    limit: checkInteger(factory, `${prefix}limit`, given.limit, { min: 1 }),
    windowSeconds: checkInteger(factory, `${prefix}windowSeconds`, given.windowSeconds, { min: 1, max: 2_147_483 }),
    quotaUnit:
      given.quotaUnit === undefined
        ? DEFAULT_QUOTA_UNIT
        : checkOneOf(factory, `${prefix}quotaUnit`, given.quotaUnit, QUOTA_UNITS),
  };
}

/**
 * One rate-limit policy as an object, for limits that are not a middleware
 * (failures per user name, per client address); rateLimit() counts its
 * policies with it too. A store
 * failure rejects with the `stateStoreUnavailable` ApiError (503); the
 * caller decides whether to fail open.
 */
export function limiter(options: Readonly<LimiterOptions>): Limiter {
  const given = readOptions<LimiterOptions>('limiter', options, OPTION_NAMES);
  const policy = checkPolicy('limiter', '', given);
  const store = given.store === undefined ? new MemoryCounterStore() : checkStore('limiter', given.store);
  return keyedLimiter(policy, store, partitionHasher(given.partitionSecret));
}

/** A store call that may throw instead of rejecting, as a promise. */
const attempt = <T>(operation: () => Promise<T>): Promise<T> => {
  try {
    return operation();
  } catch (error) {
    return Promise.reject(error);
  }
};

const unavailable = (cause: unknown): never => {
  throw storeUnavailable(cause);
};

/**
 * A checked policy on a store: what limiter() returns, with the keyed entry
 * points rateLimit() uses. The one place where a counter becomes a
 * LimitState, and so where `r`, `t` and the state item are computed.
 */
export function keyedLimiter(
  policy: { readonly name: string; readonly limit: number; readonly windowSeconds: number; readonly quotaUnit: QuotaUnit },
  store: CounterStore,
  hashPartition: PartitionHasher,
): KeyedLimiter {
  const windowMs = policy.windowSeconds * 1000;
  const prefix = policyItemPrefix(policy);
  const quoted = quotedName(policy.name);

  const state = (
    key: Pick<PolicyKey, 'partitionKey' | 'policyItem'>,
    used: number,
    resetAt: number,
    resetSeconds: number,
    limited: boolean,
  ): LimitState => {
    const remaining = used < policy.limit ? policy.limit - used : 0;
    return {
      policy: policy.name,
      limit: policy.limit,
      used,
      remaining,
      resetAt,
      resetSeconds,
      limited,
      partitionKey: key.partitionKey,
      policyItem: key.policyItem,
      stateItem: stateItem(quoted, remaining, resetSeconds, key.partitionKey),
    };
  };
  const counted = (key: PolicyKey, counter: CounterState): LimitState =>
    state(key, counter.count, counter.resetAt, secondsUntil(counter.resetAt, Date.now()), counter.count > policy.limit);
  const peeked = (key: PolicyKey, counter: CounterState | undefined): LimitState =>
    counter === undefined
      ? state(key, 0, Date.now() + windowMs, policy.windowSeconds, false)
      : state(key, counter.count, counter.resetAt, secondsUntil(counter.resetAt, Date.now()), counter.count >= policy.limit);

  const keyOf = (identity: string, partitionKey = hashPartition(identity)): PolicyKey => ({
    partitionKey,
    storeKey: storeKeyOf(policy.name, identity),
    policyItem: policyItem(prefix, partitionKey),
  });
  const consumeKey = (key: PolicyKey): Promise<LimitState> =>
    attempt(() => store.increment(key.storeKey, windowMs)).then((counter) => counted(key, counter));
  const peekKey = (key: PolicyKey): Promise<LimitState> =>
    attempt(() => store.get(key.storeKey)).then((counter) => peeked(key, counter));
  const refundKey = (key: PolicyKey): Promise<void> => attempt(() => store.decrement(key.storeKey));
  const incrementNow = synchronousIncrement(store);
  const countKey =
    incrementNow === undefined ? consumeKey : (key: PolicyKey): LimitState => counted(key, incrementNow(key.storeKey, windowMs));

  return {
    name: policy.name,
    limit: policy.limit,
    windowSeconds: policy.windowSeconds,
    consume: (identity) => consumeKey(keyOf(identity)).catch(unavailable),
    peek: (identity) => peekKey(keyOf(identity)).catch(unavailable),
    refund: (identity) => refundKey(keyOf(identity)).catch(unavailable),
    reset: (identity) => attempt(() => store.reset(storeKeyOf(policy.name, identity))).catch(unavailable),
    keyOf,
    consumeKey,
    countKey,
    peekKey,
    refundKey,
    givenBack: (given) => state(given, given.used > 0 ? given.used - 1 : 0, given.resetAt, given.resetSeconds, given.limited),
    countedState: counted,
    peekedState: peeked,
  };
}

export interface TooManyRequestsInit {
  /** The 429 catalogue entry: the library's `tooManyRequests` by default, or a package's own (registerErrorEntries()). */
  error?: CatalogueEntry;
  /** A body of a protocol's own shape (RFC 6749 token errors), given to the ApiError. */
  body?: Readonly<Record<string, unknown>>;
}

/** `Retry-After` of a refusal: the seconds until the last of the limited policies' windows ends. */
export function retryAfterOf(states: readonly (LimitState | undefined)[]): number {
  let retryAfter = 0;
  for (const state of states) {
    if (state?.limited && state.resetSeconds > retryAfter) retryAfter = state.resetSeconds;
  }
  return retryAfter;
}

/**
 * The 429 ApiError for states that are over their limit, with `Retry-After`
 * in seconds (the conventions' Limits "Signalling"). When several policies are
 * exceeded it names the latest reset, the first instant a retry can pass;
 * it is the `t` of that policy's state item, so both point to the same
 * instant (the conventions' Limits rule 2).
 */
export function tooManyRequests(states: LimitState | readonly LimitState[], init: TooManyRequestsInit = {}): ApiError {
  const retryAfter = retryAfterOf(Array.isArray(states) ? states : [states as LimitState]);
  return markLimiterRefusal(
    new ApiError(init.error ?? ERROR_CATALOGUE.tooManyRequests, {
      headers: { 'Retry-After': String(retryAfter) },
      ...(init.body === undefined ? {} : { body: init.body }),
    }),
  );
}
