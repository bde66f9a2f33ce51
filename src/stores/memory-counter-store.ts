import { checkFunction, checkInteger, readOptions } from '../config/options.js';
import type { CounterState, CounterStore } from './counter-store.js';

export interface MemoryCounterStoreOptions {
  /**
   * How often expired windows are swept out of memory, in milliseconds.
   * A window that has ended is never counted again, even before the sweep.
   * Default: `30000`.
   */
  sweepIntervalMs?: number;
  /** The clock, in milliseconds since the epoch. Default: `Date.now`. */
  now?: () => number;
}

const OPTION_NAMES = ['sweepIntervalMs', 'now'] as const;

/** The default sweep interval: short enough to free memory soon, long enough to cost nothing. */
export const DEFAULT_SWEEP_INTERVAL_MS = 30_000;

/**
 * The synchronous increment of the memory store, under a symbol the package
 * does not export: limiter() and rateLimit() count with it, without a
 * promise, when their store is a MemoryCounterStore whose increment() is
 * this class's own (not overridden by a subclass). Two promises and their
 * jobs per policy and request were most of the limiter's garbage
 * (docs/performance.md).
 */
export const INCREMENT_NOW: unique symbol = Symbol('express-api-conventions.incrementNow');

/** The store's synchronous increment when it has one of its own, else `undefined`. */
export function synchronousIncrement(store: CounterStore): ((key: string, windowMs: number) => CounterState) | undefined {
  if (!(store instanceof MemoryCounterStore) || store.increment !== MemoryCounterStore.prototype.increment) return undefined;
  return (key, windowMs) => store[INCREMENT_NOW](key, windowMs);
}

// One small object per key: a count (a small integer) and the end of the
// window. Kept to two fields so that 100,000 active keys stay well under
// 30 MB of heap (the memory target of the rate limiter).
class Window {
  count = 0;
  constructor(readonly resetAt: number) {}
}

/**
 * The in-memory CounterStore: the default, for one instance. Counts in fixed
 * windows that open at a key's first hit. Windows that have ended are
 * dropped by a periodic sweep (an unref'd timer, so it never keeps the
 * process alive), and ignored before that.
 */
export class MemoryCounterStore implements CounterStore {
  readonly #windows = new Map<string, Window>();
  readonly #now: () => number;
  readonly #timer: NodeJS.Timeout;

  constructor(options?: Readonly<MemoryCounterStoreOptions>) {
    const given = readOptions<MemoryCounterStoreOptions>('MemoryCounterStore', options, OPTION_NAMES);
    const sweepIntervalMs = checkInteger(
      'MemoryCounterStore',
      'sweepIntervalMs',
      given.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS,
      {
        min: 1,
        max: 2 ** 31 - 1,
      },
    );
    this.#now = given.now === undefined ? Date.now : checkFunction<() => number>('MemoryCounterStore', 'now', given.now);
    this.#timer = setInterval(() => this.sweep(), sweepIntervalMs);
    this.#timer.unref();
  }

  increment(key: string, windowMs: number): Promise<CounterState> {
    return Promise.resolve(this[INCREMENT_NOW](key, windowMs));
  }

  /** increment() without the promise: see INCREMENT_NOW. */
  [INCREMENT_NOW](key: string, windowMs: number): CounterState {
    const now = this.#now();
    let window = this.#windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      window = new Window(now + windowMs);
      this.#windows.set(key, window);
    }
    window.count += 1;
    return { count: window.count, resetAt: window.resetAt };
  }

  get(key: string): Promise<CounterState | undefined> {
    const window = this.#windows.get(key);
    if (window === undefined || window.resetAt <= this.#now()) return Promise.resolve(undefined);
    return Promise.resolve({ count: window.count, resetAt: window.resetAt });
  }

  decrement(key: string): Promise<void> {
    const window = this.#windows.get(key);
    if (window !== undefined && window.resetAt > this.#now() && window.count > 0) window.count -= 1;
    return Promise.resolve();
  }

  reset(key: string): Promise<void> {
    this.#windows.delete(key);
    return Promise.resolve();
  }

  /** How many keys are held, expired ones not yet swept included. */
  get size(): number {
    return this.#windows.size;
  }

  /** Drops every window that has ended. Runs on its own timer; callable at any time. */
  sweep(): void {
    const now = this.#now();
    for (const [key, window] of this.#windows) {
      if (window.resetAt <= now) this.#windows.delete(key);
    }
  }

  /** Stops the sweep timer and forgets every key. */
  close(): void {
    clearInterval(this.#timer);
    this.#windows.clear();
  }
}
