import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { noteSecurityEvent } from '../errors/refusal-events.js';
import { refuse } from '../errors/refuse.js';
import { storeUnavailable } from '../errors/store-unavailable.js';
import { securityEventsWanted } from '../events/index.js';
import type { OrderedCount } from '../stores/ordered-count.js';
import { appendRateLimitHeaders } from './headers.js';
import type { RequestIdentity } from './identity.js';
import { type KeyedLimiter, type LimitState, type PolicyKey, retryAfterOf, tooManyRequests } from './limiter.js';
import { type RateLimitConfiguration, type RateLimitOptions, readRateLimitOptions } from './options.js';
import type { PartitionHasher } from './partition.js';

// Partition keys and store keys of the identities seen lately, so that a
// client's next request neither hashes nor HMACs again: a Map, emptied when
// it holds this many identities (bounded memory, no per-entry bookkeeping).
export const IDENTITY_CACHE_SIZE = 10_000;

/** What is derived from one identity: its `pk` (one secret for every policy), its keys per policy. */
interface IdentityKeys {
  readonly pk: string;
  readonly perPolicy: (PolicyKey | undefined)[];
}

/** rateLimit()'s configuration, with what is built from it once: the key cache and the store-error hook. */
interface LimiterSetup extends RateLimitConfiguration {
  /** The keys of `identity` in the policy at `index`. */
  readonly keyOf: (identity: string, index: number) => PolicyKey;
  /** Hands a store failure to `log`, when logging is on. */
  readonly onStoreError: (error: unknown) => void;
}

/** One request being counted: its keys, and its state in each policy once counted (or peeked). */
interface Counting {
  readonly req: Request;
  readonly res: Response;
  readonly next: NextFunction;
  readonly who: RequestIdentity;
  readonly keys: readonly PolicyKey[];
  readonly states: (LimitState | undefined)[];
}

/** How a counted request is answered: passed on, 429, or 503 (the store failed and the limiter fails closed). */
type Outcome = 'passed' | 'refused' | 'failed';

/**
 * What a 429 enforces (the conventions' rule 12.1), and the fix a
 * report-only report gives: in report-only mode the request goes on.
 */
const LIMIT_CONVENTION = {
  rule: '12.1',
  middleware: 'rateLimit',
  fix:
    "Raise the quota (rateLimit: { limit, windowSeconds }); behind a proxy or load balancer, set Express's `trust proxy` " +
    "(app.set('trust proxy', 1)) so that each client is counted by its own address, not all by the proxy's.",
} as const;

const isPromiseLike = <T>(value: T | PromiseLike<T>): value is PromiseLike<T> =>
  typeof (value as { then?: unknown }).then === 'function';

/**
 * Rate limits counted per user and per application (the conventions' Limits rule 4),
 * each a limiter() policy, both shown on every response that passes the
 * limiter, whatever its status, in `RateLimit-Policy` and `RateLimit`
 * (the conventions' Limits "Signalling"). Over a limit: 429 through the error model
 * (tooManyRequests()), with `Retry-After` at the instant of that policy's
 * `t` (rule 2). The older `X-RateLimit-*` headers are never sent (rule 3).
 * The 429 (and the 503 of a store that is down) goes to errorHandler() when
 * one is mounted, else it is answered here in JSON (refuse()): the limiter
 * works alone.
 *
 * The policies are counted one after the other, and a request refused by
 * one gives back the hit it counted in every policy:
 * refused requests spend no quota, so under a burst from several instances
 * on one store the admitted count equals the quota. The keys of recent
 * identities are remembered, and a synchronous `identify` costs no promise
 * (docs/performance.md).
 */
export function rateLimit(options?: Readonly<RateLimitOptions>): RequestHandler {
  const configuration = readRateLimitOptions(options);
  const { log } = configuration;
  const limits: LimiterSetup = {
    ...configuration,
    keyOf: identityKeyCache(configuration.policies, configuration.partitionKeyOf),
    onStoreError: (error) => log?.(error),
  };
  const { identify, skip } = limits;
  return function rateLimitMiddleware(req, res, next) {
    if (skip?.(req)) {
      next();
      return;
    }
    const who = identify(req);
    // A synchronous identify (the default) goes straight on: no promise.
    if (isPromiseLike(who)) {
      who.then(
        (resolved) => countRequest(limits, req, res, next, resolved),
        (error: unknown) => next(error ?? new Error('identify rejected')),
      );
      return;
    }
    countRequest(limits, req, res, next, who);
  };
}

/** The keys of an identity in each policy, remembered for the identities seen lately (IDENTITY_CACHE_SIZE). */
function identityKeyCache(
  policies: readonly KeyedLimiter[],
  partitionKeyOf: PartitionHasher,
): (identity: string, index: number) => PolicyKey {
  const cache = new Map<string, IdentityKeys>();
  return function keyOf(identity, index) {
    let keys = cache.get(identity);
    if (keys === undefined) {
      if (cache.size >= IDENTITY_CACHE_SIZE) cache.clear();
      keys = { pk: partitionKeyOf(identity), perPolicy: new Array(policies.length) };
      cache.set(identity, keys);
    }
    let key = keys.perPolicy[index];
    if (key === undefined) {
      key = policies[index]?.keyOf(identity, keys.pk) as PolicyKey;
      keys.perPolicy[index] = key;
    }
    return key;
  };
}

/** What a request is counted under in each policy: its user or its application, else its client address. */
function keysOf(limits: LimiterSetup, req: Request, who: RequestIdentity): PolicyKey[] {
  const { kinds } = limits;
  let fallback: string | undefined;
  const keys: PolicyKey[] = new Array(kinds.length);
  for (let i = 0; i < kinds.length; i++) {
    const id = kinds[i] === 'user' ? who.user : who.application;
    let identity: string;
    if (id !== undefined && id !== '') {
      identity = `${kinds[i]}:${id}`;
    } else {
      fallback ??= `address:${limits.address(req)}`;
      identity = fallback;
    }
    keys[i] = limits.keyOf(identity, i);
  }
  return keys;
}

function countRequest(limits: LimiterSetup, req: Request, res: Response, next: NextFunction, who: RequestIdentity): void {
  const counting: Counting = { req, res, next, who, keys: keysOf(limits, req, who), states: new Array(limits.policies.length) };
  const inOrder = limits.countInOrder?.(counting.keys.map(storeKeyOf));
  if (inOrder === undefined) {
    countFrom(limits, counting, 0);
    return;
  }
  inOrder.then(
    (counted) => settleInOrder(limits, counting, counted),
    (error: unknown) => {
      // No policy counted the request: it goes on uncounted (fail open), or 503.
      limits.onStoreError(error);
      if (limits.failOpen) answer(counting, 'passed');
      else answer(counting, 'failed', error);
    },
  );
}

const storeKeyOf = (key: PolicyKey): string => key.storeKey;

/**
 * Takes the answer of a store that counted every policy in one exchange
 * (ordered-count.ts): the same states as counting them one after the other
 * gives (countFrom() and giveBackAndRefuse()), the store having given back
 * the hits of a refused request already.
 */
function settleInOrder(limits: LimiterSetup, counting: Counting, { refusedAt, windows }: OrderedCount): void {
  const { policies } = limits;
  const { keys, states } = counting;
  for (let i = 0; i < policies.length; i++) {
    const policy = policies[i] as KeyedLimiter;
    const key = keys[i] as PolicyKey;
    const window = windows[i];
    if (refusedAt !== -1 && i > refusedAt) states[i] = policy.peekedState(key, window);
    else if (window !== undefined) {
      const state = policy.countedState(key, window);
      states[i] = refusedAt === -1 ? state : policy.givenBack(state);
    }
  }
  if (refusedAt === -1) {
    answer(counting, 'passed');
    return;
  }
  if (securityEventsWanted()) noteRefusingPolicy(limits, counting, refusedAt);
  answer(counting, 'refused');
}

/**
 * Counts the request in the policies from `index` on, one after the other:
 * a policy is counted only once the ones before it admitted the request, so
 * that a hit given back is never one another request was refused for in a
 * later policy. A store that counts synchronously (the MemoryCounterStore)
 * answers at once and the loop goes on without a promise; the answer of any
 * other store resumes the loop at the next policy.
 */
function countFrom(limits: LimiterSetup, counting: Counting, index: number): void {
  const { policies } = limits;
  for (let i = index; i < policies.length; i++) {
    const counted = (policies[i] as KeyedLimiter).countKey(counting.keys[i] as PolicyKey);
    if (isPromiseLike(counted)) {
      counted.then(
        (state) => {
          if (admitOrRefuse(limits, counting, i, state)) countFrom(limits, counting, i + 1);
        },
        (error: unknown) => storeFailed(limits, counting, i, error),
      );
      return;
    }
    if (!admitOrRefuse(limits, counting, i, counted)) return;
  }
  answer(counting, 'passed');
}

/**
 * Takes the state of the policy at `index`: within its limit, the request
 * goes on to the next policy (true); over it, the request is refused
 * (false).
 */
function admitOrRefuse(limits: LimiterSetup, counting: Counting, index: number, state: LimitState): boolean {
  counting.states[index] = state;
  if (!state.limited) return true;
  giveBackAndRefuse(limits, counting, index);
  return false;
}

/** The store failed on the policy at `index`: the request goes on uncounted there (fail open), or is refused with 503. */
function storeFailed(limits: LimiterSetup, counting: Counting, index: number, error: unknown): void {
  limits.onStoreError(error);
  if (limits.failOpen) countFrom(limits, counting, index + 1);
  else giveBackAndRefuse(limits, counting, index, { error });
}

/**
 * A refused request (over the limit of policy `at`, or the store failed
 * there and the limiter fails closed) gives back its hit in every policy
 * that counted it. The policies after `at` did not count it: a refusal
 * shows their state too (a peek), as a passed request would.
 */
function giveBackAndRefuse(limits: LimiterSetup, counting: Counting, at: number, failure?: { readonly error: unknown }): void {
  const { policies, onStoreError } = limits;
  const { keys, states } = counting;
  const pending: Promise<void>[] = [];
  for (let i = 0; i < policies.length; i++) {
    const policy = policies[i];
    const state = states[i];
    if (policy === undefined) continue;
    if (state !== undefined) {
      pending.push(
        policy.refundKey(keys[i] as PolicyKey).then(() => {
          states[i] = policy.givenBack(state);
        }, onStoreError),
      );
    } else if (i > at && failure === undefined) {
      pending.push(
        policy.peekKey(keys[i] as PolicyKey).then((peeked) => {
          states[i] = peeked;
        }, onStoreError),
      );
    }
  }
  // Answered whatever happened to the refunds (even a `log` that throws).
  const done = (): void => {
    if (failure !== undefined) answer(counting, 'failed', failure.error);
    else {
      if (securityEventsWanted()) noteRefusingPolicy(limits, counting, at);
      answer(counting, 'refused');
    }
  };
  Promise.all(pending).then(done, done);
}

/**
 * What the event of a 429 says of the policy that refused: its name, limit
 * and window, and whether the caller was counted as its user, its
 * application or its address; never the identity itself, which a custom
 * `identify` may have made of a key.
 */
function noteRefusingPolicy(limits: LimiterSetup, counting: Counting, at: number): void {
  const policy = limits.policies[at] as KeyedLimiter;
  const kind = limits.kinds[at];
  const id = kind === 'user' ? counting.who.user : counting.who.application;
  noteSecurityEvent(counting.req, {
    policy: {
      name: policy.name,
      identity: id !== undefined && id !== '' ? kind : 'address',
      limit: policy.limit,
      windowSeconds: policy.windowSeconds,
      retryAfterSeconds: retryAfterOf(counting.states),
    },
  });
}

/**
 * Writes both headers; then passes the request on, or answers 429 (one
 * path: tooManyRequests()), or 503 when the store failed and the limiter
 * fails closed.
 */
function answer(counting: Counting, outcome: Outcome, failure?: unknown): void {
  const { req, res, next, states } = counting;
  writeHeaders(counting);
  if (outcome === 'passed') next();
  else if (outcome === 'failed') refuse(req, res, next, storeUnavailable(failure));
  else
    refuse(req, res, next, tooManyRequests(states.filter((state): state is LimitState => state !== undefined)), LIMIT_CONVENTION);
}

/** Appends every policy to `RateLimit-Policy`, and the state of each the store told to `RateLimit`. */
function writeHeaders({ res, keys, states }: Counting): void {
  let policyHeader = '';
  let stateHeader = '';
  for (let i = 0; i < keys.length; i++) {
    policyHeader += (i === 0 ? '' : ', ') + (keys[i] as PolicyKey).policyItem;
    const state = states[i];
    if (state !== undefined) stateHeader += (stateHeader === '' ? '' : ', ') + state.stateItem;
  }
  appendRateLimitHeaders(res, policyHeader, stateHeader);
}
