/**
 * The shared-state contract for counting in fixed windows: the rate
 * limiter's request counts. (The authorization server's sign-in guard counts
 * in a store of its own that checks and counts in one atomic step, which a
 * CounterStore cannot.) An in-memory implementation is the default; a Redis one lets several
 * instances count as one service (docs/design.md principle 5).
 */
export interface CounterState {
  /** Hits counted in the current window, this one included. */
  readonly count: number;
  /** When the current window ends, in milliseconds since the epoch. */
  readonly resetAt: number;
}

export interface CounterStore {
  /**
   * Counts one hit for `key`. The first hit opens a window of `windowMs`;
   * hits after it ends open a new one.
   */
  increment(key: string, windowMs: number): Promise<CounterState>;
  /** The current window of `key` without counting, or `undefined` when none is open. */
  get(key: string): Promise<CounterState | undefined>;
  /**
   * Takes back one hit of the current window of `key` (never below 0; no-op
   * when no window is open): a request refused by one policy gives back what
   * another policy counted.
   */
  decrement(key: string): Promise<void>;
  /** Forgets `key`. */
  reset(key: string): Promise<void>;
}

/**
 * Seconds from `now` to `resetAt` (both in milliseconds since the epoch),
 * rounded up and never below 0: how long until a window ends, as the `t` of
 * a RateLimit state item and the `Retry-After` of a 429.
 */
export const secondsUntil = (resetAt: number, now: number): number => Math.max(0, Math.ceil((resetAt - now) / 1000));
