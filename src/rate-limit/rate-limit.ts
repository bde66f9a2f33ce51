import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { refuse, takeHeldRefusal } from '../errors/refuse.js';
import { storeUnavailable } from '../errors/store-unavailable.js';
import { appendRateLimitHeaders } from './headers.js';
import type { RequestIdentity } from './identity.js';
import { type LimitState, type PolicyKey, tooManyRequests } from './limiter.js';
import { type RateLimitOptions, readRateLimitOptions } from './options.js';

// Partition keys and store keys of the identities seen lately, so that a
// client's next request neither hashes nor HMACs again: a Map, emptied when
// it holds this many identities (bounded memory, no per-entry bookkeeping).
export const IDENTITY_CACHE_SIZE = 10_000;

/** What is derived from one identity: its `pk` (one secret for every policy), its keys per policy. */
interface IdentityKeys {
  readonly pk: string;
  readonly perPolicy: (PolicyKey | undefined)[];
}

const isPromiseLike = (value: unknown): value is PromiseLike<RequestIdentity> =>
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
  const { policies, kinds, identify, address, failOpen, log, partitionKeyOf } = readRateLimitOptions(options);
  const onStoreError = (error: unknown): void => log?.(error);
  const count = policies.length;
  const countNow = policies.every((policy) => policy.consumeKeyNow !== undefined);

  const cache = new Map<string, IdentityKeys>();
  const keyOf = (identity: string, index: number): PolicyKey => {
    let keys = cache.get(identity);
    if (keys === undefined) {
      if (cache.size >= IDENTITY_CACHE_SIZE) cache.clear();
      keys = { pk: partitionKeyOf(identity), perPolicy: new Array(count) };
      cache.set(identity, keys);
    }
    let key = keys.perPolicy[index];
    if (key === undefined) {
      key = policies[index]?.keyOf(identity, keys.pk) as PolicyKey;
      keys.perPolicy[index] = key;
    }
    return key;
  };

  // Writes both headers; then passes the request on, or answers 429 (one
  // path: tooManyRequests()), or 503 when the store failed and the limiter
  // fails closed.
  function answer(
    req: Request,
    res: Response,
    next: NextFunction,
    keys: readonly PolicyKey[],
    states: readonly (LimitState | undefined)[],
    outcome: 'passed' | 'refused' | 'failed',
    failure?: unknown,
  ): void {
    let policyHeader = '';
    let stateHeader = '';
    for (let i = 0; i < count; i++) {
      policyHeader += (i === 0 ? '' : ', ') + (keys[i] as PolicyKey).policyItem;
      const state = states[i];
      if (state !== undefined) stateHeader += (stateHeader === '' ? '' : ', ') + state.stateItem;
    }
    appendRateLimitHeaders(res, policyHeader, stateHeader);
    if (outcome === 'passed') {
      // A refusal held until the request was counted (conventions():
      // a bad bearer token, a refused preflight) is answered now.
      const held = takeHeldRefusal(req);
      if (held === undefined) next();
      else refuse(req, res, next, held);
    } else if (outcome === 'failed') refuse(req, res, next, storeUnavailable(failure));
    else refuse(req, res, next, tooManyRequests(states.filter((state): state is LimitState => state !== undefined)));
  }

  // A refused request (over the limit of policy `at`, or the store failed
  // there and the limiter fails closed) gives back its hit in every policy
  // that counted it. The policies after `at` did not count it: a refusal
  // shows their state too (a peek), as a passed request would.
  function giveBackAndRefuse(
    req: Request,
    res: Response,
    next: NextFunction,
    keys: readonly PolicyKey[],
    states: (LimitState | undefined)[],
    at: number,
    failure?: { readonly error: unknown },
  ): void {
    const pending: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
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
    const done = (): void =>
      failure === undefined
        ? answer(req, res, next, keys, states, 'refused')
        : answer(req, res, next, keys, states, 'failed', failure.error);
    Promise.all(pending).then(done, done);
  }

  function countRequest(req: Request, res: Response, next: NextFunction, who: RequestIdentity): void {
    let fallback: string | undefined;
    const keys: PolicyKey[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const id = kinds[i] === 'user' ? who.user : who.application;
      let identity: string;
      if (id !== undefined && id !== '') {
        identity = `${kinds[i]}:${id}`;
      } else {
        fallback ??= `address:${address(req)}`;
        identity = fallback;
      }
      keys[i] = keyOf(identity, i);
    }
    const states: (LimitState | undefined)[] = new Array(count);
    if (countNow) {
      // The memory store counts synchronously: the same order as below
      // (a policy is counted only once the ones before it admitted the
      // request), without a promise per policy.
      for (let i = 0; i < count; i++) {
        const state = (policies[i] as (typeof policies)[number]).consumeKeyNow?.(keys[i] as PolicyKey) as LimitState;
        states[i] = state;
        if (state.limited) {
          giveBackAndRefuse(req, res, next, keys, states, i);
          return;
        }
      }
      answer(req, res, next, keys, states, 'passed');
      return;
    }
    // One policy after the other: a policy is counted only once the ones
    // before it admitted the request, so that a hit given back is never one
    // another request was refused for in a later policy.
    const step = (index: number): void => {
      if (index === count) {
        answer(req, res, next, keys, states, 'passed');
        return;
      }
      (policies[index] as (typeof policies)[number]).consumeKey(keys[index] as PolicyKey).then(
        (state) => {
          states[index] = state;
          if (state.limited) giveBackAndRefuse(req, res, next, keys, states, index);
          else step(index + 1);
        },
        (error: unknown) => {
          onStoreError(error);
          if (failOpen) step(index + 1);
          else giveBackAndRefuse(req, res, next, keys, states, index, { error });
        },
      );
    };
    step(0);
  }

  return function rateLimitMiddleware(req, res, next) {
    const who = identify(req);
    // A synchronous identify (the default) goes straight on: no promise.
    if (isPromiseLike(who)) {
      who.then(
        (resolved) => countRequest(req, res, next, resolved),
        (error: unknown) => next(error ?? new Error('identify rejected')),
      );
      return;
    }
    countRequest(req, res, next, who);
  };
}
