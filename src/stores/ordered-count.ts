import type { CounterState } from './counter-store.js';

/**
 * Counting one request in several policies in one exchange with the store,
 * with the answer counting them one after the other gives: each policy is
 * counted only once the ones before it admitted the request; the first one
 * over its limit refuses it, every hit counted is given back, and the
 * policies after it are only read. The Redis store does it in one script
 * (one round trip instead of one per policy, and one for the requests of an
 * event-loop turn, docs/performance.md); other stores have no such method
 * and are counted policy by policy.
 */

/** One policy of an ordered count: its window and its quota. */
export interface OrderedPolicy {
  readonly windowMs: number;
  readonly limit: number;
}

/** What an ordered count found. */
export interface OrderedCount {
  /** The index of the first policy over its limit (the request is refused), or -1 when every policy admitted it. */
  readonly refusedAt: number;
  /**
   * Per policy: up to `refusedAt` (all of them when -1), its window once
   * the hit was counted, this hit included (given back already in the store
   * when refused); after `refusedAt`, its window as it stands, uncounted, or
   * `undefined` when none is open.
   */
  readonly windows: readonly (CounterState | undefined)[];
}

/** Counts the keys of one request (one per policy, in order), or `undefined` when the store cannot do it in one exchange for these keys. */
export type OrderedCounter = (keys: readonly string[]) => Promise<OrderedCount> | undefined;

/**
 * The method of a store that counts in order, under a symbol the package
 * does not export: given the policies once, it returns the counter of their
 * keys, or `undefined` when it cannot count them together.
 */
export const COUNT_IN_ORDER: unique symbol = Symbol('express-api-conventions.countInOrder');

interface CountsInOrder {
  [COUNT_IN_ORDER](policies: readonly OrderedPolicy[]): OrderedCounter | undefined;
}

/** The store's ordered counter for `policies`, or `undefined` when it counts policy by policy. */
export function orderedCounter(store: object, policies: readonly OrderedPolicy[]): OrderedCounter | undefined {
  const method = (store as Partial<CountsInOrder>)[COUNT_IN_ORDER];
  return typeof method === 'function' ? method.call(store, policies) : undefined;
}
