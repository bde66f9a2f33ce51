import { checkInteger, readOptions } from '../config/options.js';
import { checkStore, type Limiter, type LimitState, limiter, tooManyRequests } from '../rate-limit/limiter.js';
import type { CounterStore } from '../stores/counter-store.js';
import { MemoryCounterStore } from '../stores/memory-counter-store.js';
import { normalizeUsername } from './stores.js';
import { tokenError } from './token-errors.js';

/**
 * The password grant's brute-force guard, independent of the general request
 * limit. Every sign-in attempt is counted BEFORE the password is checked, with
 * one atomic increment per key, so even a burst of parallel guesses gets no
 * more than the allowance; a successful sign-in clears its username's count,
 * so what accumulates are failures. While a key is over its allowance every
 * attempt gets 429, the right password too (otherwise the one 200 among the
 * 429s would tell the guesser).
 */

/** Default: 10 failed sign-ins per username per window, far below what guessing needs. */
export const DEFAULT_MAX_FAILURES_PER_USERNAME = 10;
/** Default: 100 sign-in attempts per client address per window (one address may serve many users). */
export const DEFAULT_MAX_ATTEMPTS_PER_ADDRESS = 100;
/** Default window: 15 minutes. */
export const DEFAULT_GUARD_WINDOW_SECONDS = 900;

export interface BruteForceOptions {
  /** Where counts live; a RedisCounterStore shares them between instances. Default: a MemoryCounterStore. */
  store?: CounterStore;
  /** Failed sign-ins allowed per username per window. Default: 10. */
  maxFailuresPerUsername?: number;
  /** Sign-in attempts allowed per client address (`req.ip`) per window. Default: 100. */
  maxAttemptsPerAddress?: number;
  /** Window length in seconds. Default: 900 (15 minutes). */
  windowSeconds?: number;
}

const OPTION_NAMES = ['store', 'maxFailuresPerUsername', 'maxAttemptsPerAddress', 'windowSeconds'] as const;
const FACTORY = 'tokenRouter.bruteForce';

/** Names of the guard's two policies; the rate-limit module hashes the identity into the store key. */
export const LOGIN_POLICIES = { username: 'oauth2-login-username', address: 'oauth2-login-address' } as const;

/**
 * One key per client address. An IPv4-mapped IPv6 address counts as its IPv4
 * address; an IPv6 address counts by its /64 prefix, the block one
 * subscriber usually holds, so rotating through it does not help.
 */
export function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group || '0', 16).toString(16))
    .join(':')}::/64`;
}

/**
 * The guard: two limiter() policies of the rate-limit module (per username,
 * per client address) on one CounterStore, independent of the general
 * request limit.
 */
export class LoginGuard {
  readonly #byUsername: Limiter;
  readonly #byAddress: Limiter;

  constructor(options: Readonly<BruteForceOptions> | undefined) {
    const given = readOptions<BruteForceOptions>(FACTORY, options, OPTION_NAMES);
    const store = given.store === undefined ? new MemoryCounterStore() : checkStore(FACTORY, given.store);
    const windowSeconds =
      given.windowSeconds === undefined
        ? DEFAULT_GUARD_WINDOW_SECONDS
        : checkInteger(FACTORY, 'windowSeconds', given.windowSeconds, { min: 1, max: 86_400 * 30 });
    const maxPerUsername =
      given.maxFailuresPerUsername === undefined
        ? DEFAULT_MAX_FAILURES_PER_USERNAME
        : checkInteger(FACTORY, 'maxFailuresPerUsername', given.maxFailuresPerUsername, { min: 1 });
    const maxPerAddress =
      given.maxAttemptsPerAddress === undefined
        ? DEFAULT_MAX_ATTEMPTS_PER_ADDRESS
        : checkInteger(FACTORY, 'maxAttemptsPerAddress', given.maxAttemptsPerAddress, { min: 1 });
    this.#byUsername = limiter({ name: LOGIN_POLICIES.username, limit: maxPerUsername, windowSeconds, store });
    this.#byAddress = limiter({ name: LOGIN_POLICIES.address, limit: maxPerAddress, windowSeconds, store });
  }

  /** Counts one attempt; throws the 429 token error when the username or the address is over its allowance. */
  async admit(username: string, address: string | undefined): Promise<void> {
    let states: LimitState[];
    try {
      states = await Promise.all([
        this.#byUsername.consume(normalizeUsername(username)),
        this.#byAddress.consume(addressKey(address)),
      ]);
    } catch (cause) {
      // Fail closed: without its counts the guard cannot protect the password.
      throw tokenError('temporarily_unavailable', 'Sign-in is unavailable; try again later.', { 'Retry-After': '5' }, cause);
    }
    if (states.some((state) => state.limited)) {
      // The rate-limit module's 429 gives Retry-After (the latest reset of the
      // exceeded policies); the body is RFC 6749's, as on every token error.
      const throttled = tooManyRequests(states, { error: 'tooManyLoginFailures' });
      throw tokenError(
        'too_many_requests',
        'Too many failed sign-in attempts; retry after the time in Retry-After.',
        throttled.headers,
      );
    }
  }

  /** A successful sign-in clears its username's failures. */
  async succeeded(username: string): Promise<void> {
    try {
      await this.#byUsername.reset(normalizeUsername(username));
    } catch {
      // The sign-in stands; a count left behind only expires with its window.
    }
  }
}
