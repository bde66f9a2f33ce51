/**
 * Time in tests, stated once. The suite runs on shared machines (two cores,
 * other runs beside it), where a timer fires late and a request waits for the
 * event loop. So:
 *
 * - expiries and windows run on a clock the test moves (jest fake timers, or
 *   a store's `now` option), never on real time;
 * - where real time is the point (a deadline, a slow client, a store's
 *   time-out), a test asserts the order of events and the bound the product
 *   promises, plus MACHINE_ALLOWANCE_MS, the one allowance for the machine;
 * - a test waits for an event or a condition (waitUntil), never for a fixed
 *   sleep that a stalled machine outruns.
 *
 * TEST_MACHINE_ALLOWANCE_MS raises the allowance for a slower machine.
 */

/** How late, at most, a loaded machine may make anything a test times against a promised bound. */
export const MACHINE_ALLOWANCE_MS = Number(process.env.TEST_MACHINE_ALLOWANCE_MS ?? 3000);

/**
 * Resolves once `condition()` holds, checking it after every turn of the
 * event loop. It has no deadline of its own below `limitMs`, which is only
 * there to name what was awaited when a test hangs (keep it under the test's
 * timeout).
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string | (() => string),
  limitMs = 25_000,
): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > limitMs) throw new Error(`waited ${limitMs} ms for ${typeof what === 'string' ? what : what()}`);
    await new Promise((done) => setTimeout(done, 5));
  }
}

/**
 * Fakes only `Date` (jest's fake timers, with every timer left real), for a
 * test over HTTP or a worker thread whose expiries read `Date.now()`: move
 * the clock with `jest.setSystemTime()`, and call `jest.useRealTimers()` after.
 */
export function useFakeDate(): void {
  jest.useFakeTimers({
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
    now: Date.now(),
  });
}
