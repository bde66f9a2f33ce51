import type { ClientRateLimitInfo, Store } from 'express-rate-limit';
import type { CounterStore } from '../stores/counter-store.js';
import { MemoryCounterStore } from '../stores/memory-counter-store.js';

/** A CounterStore failure, told apart from other errors so it is handled as configured (fail open or closed). */
export class StoreFailure extends Error {
  override readonly name = 'StoreFailure';
  constructor(cause: unknown) {
    super('The rate-limit store failed.', { cause });
  }
}

/**
 * express-rate-limit's Store interface over one of our CounterStores, for one
 * policy: express-rate-limit counts with it, the CounterStore keeps the
 * counts (in memory or in Redis), and the oauth2 guard shares the same
 * contract.
 */
export class CounterStoreAdapter implements Store {
  readonly localKeys: boolean;
  readonly prefix: string;
  readonly #store: CounterStore;
  readonly #windowMs: number;

  constructor(store: CounterStore, windowMs: number, prefix: string) {
    this.#store = store;
    this.#windowMs = windowMs;
    this.prefix = prefix;
    this.localKeys = store instanceof MemoryCounterStore;
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    try {
      const state = await this.#store.increment(key, this.#windowMs);
      return { totalHits: state.count, resetTime: new Date(state.resetAt) };
    } catch (error) {
      throw new StoreFailure(error);
    }
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const state = await this.#store.get(key);
    return state === undefined ? undefined : { totalHits: state.count, resetTime: new Date(state.resetAt) };
  }

  /**
   * express-rate-limit calls this only for `skipSuccessfulRequests` and
   * `skipFailedRequests`, which rateLimit() does not offer: every request
   * counts. A CounterStore has no decrement, so a call is a programming error.
   */
  decrement(): Promise<void> {
    return Promise.reject(new Error('rateLimit() counts every request; a CounterStore is never decremented.'));
  }

  resetKey(key: string): Promise<void> {
    return this.#store.reset(key);
  }
}
