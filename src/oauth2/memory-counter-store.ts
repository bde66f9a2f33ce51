import type { CounterState, CounterStore } from '../stores/counter-store.js';

/**
 * A minimal in-memory CounterStore for the brute-force guard, private to this
 * module until the rate-limit module's stores are available to it.
 */
export class PrivateMemoryCounterStore implements CounterStore {
  readonly #windows = new Map<string, { count: number; resetAt: number }>();
  #hits = 0;

  async increment(key: string, windowMs: number): Promise<CounterState> {
    const now = Date.now();
    if (++this.#hits % 1024 === 0) this.#sweep(now);
    const open = this.#windows.get(key);
    if (open && open.resetAt > now) {
      open.count += 1;
      return { count: open.count, resetAt: open.resetAt };
    }
    const fresh = { count: 1, resetAt: now + windowMs };
    this.#windows.set(key, fresh);
    return { ...fresh };
  }

  async get(key: string): Promise<CounterState | undefined> {
    const open = this.#windows.get(key);
    return open && open.resetAt > Date.now() ? { ...open } : undefined;
  }

  async reset(key: string): Promise<void> {
    this.#windows.delete(key);
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) if (window.resetAt <= now) this.#windows.delete(key);
  }
}
