import type { Request } from 'express';
import { type ApiError, apiError, storeUnavailable } from 'express-api-conventions/errors';
import { clientAddressKey, secondsUntil, storeKeyOf } from 'express-api-conventions/extend';
import type { CounterState, CounterStore } from 'express-api-conventions/stores';
import { remainingMs, signInDeadline } from './request-deadline.js';
import { readSignInGuardOptions, type SignInGuardConfiguration, type SignInGuardOptions } from './sign-in-guard-options.js';
import { normalizeUsername } from './stores.js';

/**
 * The sign-in guard: one brute-force throttle for every door that checks a
 * password (the token endpoint's password grant, a browser sign-in form),
 * on one CounterStore, so that a guesser gets one allowance in all, not one
 * per door.
 *
 * A lock-out must not be a weapon (OWASP Authentication Cheat Sheet, issue
 * 32): failures are throttled per (username, address) first, so ten wrong
 * passwords from one address refuse that address for that username, and
 * the owner from another address still signs in. An address is throttled on
 * its own too (it may be guessing many usernames). A username as a whole is
 * only delayed once failures came from several addresses
 * (`usernameDelayAfterAddresses`), and then by short delays that double with
 * each further failure up to `maxUsernameDelaySeconds`, never one long lock.
 *
 * Usernames are counted in their normalizeUsername() spelling, addresses by
 * `req.ip` through express-rate-limit's `ipKeyGenerator` (IPv6 by /56). Each
 * attempt is reserved BEFORE its password is checked (a "pending" count
 * beside the failures), and admitted only while failures plus attempts in
 * flight stay within the allowance: so parallel guesses get no more checks
 * than the allowance. An attempt from a pair with no failure yet also reserves
 * one of the username's `usernameDelayAfterAddresses` new-address places, so
 * guesses from many addresses at once cannot all be checked before the
 * username is delayed. While a username is delayed, one attempt at a time is
 * checked. A wrong password turns the reservation into a failure; a right
 * one gives it back and clears its (username, address) failures. While a
 * (username, address) pair, an address or a delayed username is refused,
 * the right password is refused too (otherwise the one success among the
 * 429s would tell the guesser).
 */

/** A reservation left by a process that died mid-check is forgotten after this long. */
const PENDING_WINDOW_MS = 60_000;

/** Store-key prefixes of the guard's counts (each key then holds a SHA-256 digest of the identity, never the identity). */
export const SIGN_IN_POLICIES = {
  pairFailures: 'sign-in-failures-username-address',
  addressFailures: 'sign-in-failures-address',
  usernameAddresses: 'sign-in-addresses-username',
  usernameDelays: 'sign-in-delays-username',
  usernameDelay: 'sign-in-delay-username',
  pairPending: 'sign-in-pending-username-address',
  addressPending: 'sign-in-pending-address',
  usernamePending: 'sign-in-pending-username',
  usernameNewAddressPending: 'sign-in-pending-username-new-address',
} as const;

/** One admitted sign-in attempt: say how it ended. */
export interface SignInAttempt {
  /** The password was right: the reservation is given back and the (username, address) failures are cleared. */
  succeeded(): Promise<void>;
  /** The password was wrong (or the user unknown): the reservation stays, as a failure. */
  failed(): Promise<void>;
  /** The password could not be checked (a store failed): the reservation is given back, nothing is counted. */
  cancelled(): Promise<void>;
}

/** The guard; make one with signInGuard() and give the same one to every door. */
export interface SignInGuard {
  readonly maxFailuresPerUsernameAndAddress: number;
  readonly maxFailuresPerAddress: number;
  readonly usernameDelayAfterAddresses: number;
  readonly maxUsernameDelaySeconds: number;
  readonly windowSeconds: number;
  /**
   * Reserves one attempt for `username` from the request's address, before
   * the password is checked. Rejects with a 429 ApiError (`tooManyLoginFailures`,
   * with `Retry-After`) when the (username, address) pair or the address has
   * used its allowance, or the username is delayed, and with a 503
   * (`stateStoreUnavailable`, `Retry-After: 5`) when the store cannot be
   * reached: without its counts the guard cannot protect the password, so it
   * fails closed.
   */
  attempt(req: Request, username: string): Promise<SignInAttempt>;
}

/** The key of a client address: express-rate-limit's, as rateLimit() counts it (IPv6 by /56). */
export function signInAddressKey(req: Pick<Request, 'ip' | 'socket'>): string {
  return clientAddressKey(req);
}

/** The store keys of one attempt. */
interface AttemptKeys {
  readonly pairFailures: string;
  readonly addressFailures: string;
  readonly usernameAddresses: string;
  readonly usernameDelays: string;
  readonly usernameDelay: string;
  /** Pending counts: the pair's, the address's, the username's. */
  readonly pending: readonly [string, string, string];
  /** The username's attempts in flight from pairs with no failure yet: each may add a failing address. */
  readonly newAddressPending: string;
}

/** What a reservation found: admitted, held by attempts in flight (wait and retry), or refused. */
type Verdict =
  | { readonly kind: 'admit'; readonly held: readonly string[] }
  | { readonly kind: 'wait' }
  | { readonly kind: 'refuse'; readonly error: ApiError };

const REFUSALS = {
  pair: 'Too many failed sign-in attempts for this username from this address; retry after the time in Retry-After.',
  address: 'Too many failed sign-in attempts from this address; retry after the time in Retry-After.',
  username:
    'Sign-in for this username is slowed down after failed attempts from several addresses; retry after the time in Retry-After.',
} as const;

const unavailable = (cause: unknown): ApiError =>
  storeUnavailable(cause, { message: 'Sign-in is unavailable; try again later.' });

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Makes the sign-in guard; options are checked now (a wrong one throws ConfigurationError). */
export function signInGuard(options?: Readonly<SignInGuardOptions>): SignInGuard {
  const configuration = readSignInGuardOptions(options);
  const { maxFailuresPerUsernameAndAddress, maxFailuresPerAddress, usernameDelayAfterAddresses } = configuration;
  const { maxUsernameDelaySeconds, windowSeconds } = configuration;
  return {
    maxFailuresPerUsernameAndAddress,
    maxFailuresPerAddress,
    usernameDelayAfterAddresses,
    maxUsernameDelaySeconds,
    windowSeconds,
    async attempt(req, username) {
      const keys = keysOf(req, username);
      const held = await admission(configuration, keys, signInDeadline(req));
      return admittedAttempt(configuration, keys, held);
    },
  };
}

/** The keys an attempt is counted under: its username (normalizeUsername()), its client address, and the pair. */
function keysOf(req: Request, username: string): AttemptKeys {
  const user = normalizeUsername(username);
  const address = signInAddressKey(req);
  // A newline cannot be in an address key, so no two pairs share a key.
  const pair = `${address}\n${user}`;
  return {
    pairFailures: storeKeyOf(SIGN_IN_POLICIES.pairFailures, pair),
    addressFailures: storeKeyOf(SIGN_IN_POLICIES.addressFailures, address),
    usernameAddresses: storeKeyOf(SIGN_IN_POLICIES.usernameAddresses, user),
    usernameDelays: storeKeyOf(SIGN_IN_POLICIES.usernameDelays, user),
    usernameDelay: storeKeyOf(SIGN_IN_POLICIES.usernameDelay, user),
    pending: [
      storeKeyOf(SIGN_IN_POLICIES.pairPending, pair),
      storeKeyOf(SIGN_IN_POLICIES.addressPending, address),
      storeKeyOf(SIGN_IN_POLICIES.usernamePending, user),
    ],
    newAddressPending: storeKeyOf(SIGN_IN_POLICIES.usernameNewAddressPending, user),
  };
}

/**
 * Reserves the attempt, waiting while it is held only by attempts in flight
 * (with jitter, so waiters do not move in step) until `queueTimeoutMs`;
 * rejects with the 429 of a refusal or of a wait that ran out.
 */
async function admission(
  configuration: SignInGuardConfiguration,
  keys: AttemptKeys,
  signInBy?: number,
): Promise<readonly string[]> {
  // The wait is bounded by queueTimeoutMs, and by what is left of the request's sign-in deadline.
  const budget = signInBy === undefined ? Number.POSITIVE_INFINITY : remainingMs(signInBy);
  const deadline = Date.now() + Math.min(configuration.queueTimeoutMs, budget);
  let delay = 10;
  for (;;) {
    const verdict = await reserve(configuration, keys);
    if (verdict.kind === 'refuse') throw verdict.error;
    if (verdict.kind === 'admit') return verdict.held;
    if (Date.now() + delay > deadline) {
      throw apiError('tooManyLoginFailures', {
        message: 'Too many sign-in attempts at once for this username or address; retry after the time in Retry-After.',
        headers: { 'Retry-After': '1' },
      });
    }
    await sleep(delay / 2 + Math.random() * delay);
    delay = Math.min(delay * 2, 200);
  }
}

/** Reserves one pending slot per count, then reads the failures (in that order: never an under-count). */
async function reserve(configuration: SignInGuardConfiguration, keys: AttemptKeys): Promise<Verdict> {
  const { store } = configuration;
  const reserved = await Promise.allSettled(keys.pending.map((key) => store.increment(key, PENDING_WINDOW_MS)));
  const refused = reserved.find((outcome) => outcome.status === 'rejected');
  if (refused) {
    await release(
      store,
      keys.pending.filter((_, i) => reserved[i]?.status === 'fulfilled'),
    );
    throw unavailable(refused.reason);
  }
  const [pairPending, addressPending, usernamePending] = reserved.map(
    (outcome) => (outcome as PromiseFulfilledResult<CounterState>).value.count,
  ) as [number, number, number];
  let states: (CounterState | undefined)[];
  try {
    states = await Promise.all(
      [keys.pairFailures, keys.addressFailures, keys.usernameDelay, keys.usernameAddresses].map((key) => store.get(key)),
    );
  } catch (cause) {
    await release(store, keys.pending);
    throw unavailable(cause);
  }
  const [pair, address, delay, addresses] = states;
  const error = refusal(configuration, pair, address, delay);
  if (error) {
    await release(store, keys.pending);
    return { kind: 'refuse', error };
  }
  // Failures so far plus attempts in flight (this one included) must fit the allowance; a delayed username checks one at a time.
  // (A pending window that ends while attempts are in flight lets their give-back land in the
  // next window: at most a few more checks at that instant, never a lasting over-count.)
  const delayed = (addresses?.count ?? 0) >= configuration.usernameDelayAfterAddresses;
  if (
    (pair?.count ?? 0) + pairPending > configuration.maxFailuresPerUsernameAndAddress ||
    (address?.count ?? 0) + addressPending > configuration.maxFailuresPerAddress ||
    (delayed && usernamePending > 1)
  ) {
    await release(store, keys.pending);
    return { kind: 'wait' };
  }
  if ((pair?.count ?? 0) > 0 || delayed) return { kind: 'admit', held: keys.pending };
  // A pair with no failure yet may add one more failing address to the username: the username's failing
  // addresses plus such attempts in flight must stay within usernameDelayAfterAddresses, or from many
  // addresses at once every guess would be checked before the first failure delays the username.
  let newAddresses: CounterState;
  try {
    newAddresses = await store.increment(keys.newAddressPending, PENDING_WINDOW_MS);
  } catch (cause) {
    await release(store, keys.pending);
    throw unavailable(cause);
  }
  const held = [...keys.pending, keys.newAddressPending];
  if ((addresses?.count ?? 0) + newAddresses.count > configuration.usernameDelayAfterAddresses) {
    await release(store, held);
    return { kind: 'wait' };
  }
  return { kind: 'admit', held };
}

/** Gives back the pending slots; a failure here only lets a slot expire with its window. */
async function release(store: CounterStore, pending: readonly string[]): Promise<void> {
  await Promise.all(pending.map((key) => store.decrement(key).catch(() => undefined)));
}

/** The 429 of a pair or address over its allowance, or of a delayed username, with `Retry-After` at the latest end. */
function refusal(
  configuration: SignInGuardConfiguration,
  pair: CounterState | undefined,
  address: CounterState | undefined,
  delay: CounterState | undefined,
): ApiError | undefined {
  const over: [CounterState, string][] = [];
  if (pair && pair.count >= configuration.maxFailuresPerUsernameAndAddress) over.push([pair, REFUSALS.pair]);
  if (address && address.count >= configuration.maxFailuresPerAddress) over.push([address, REFUSALS.address]);
  if (delay && delay.count >= 1) over.push([delay, REFUSALS.username]);
  const first = over[0];
  if (first === undefined) return undefined;
  const now = Date.now();
  const retryAfter = Math.max(1, ...over.map(([state]) => secondsUntil(state.resetAt, now)));
  return apiError('tooManyLoginFailures', { message: first[1], headers: { 'Retry-After': String(retryAfter) } });
}

/** The attempt once admitted: each outcome gives back its reservation, and may be told once. */
function admittedAttempt(configuration: SignInGuardConfiguration, keys: AttemptKeys, held: readonly string[]): SignInAttempt {
  const { store } = configuration;
  let settled = false;
  const settle = () => {
    if (settled) throw new Error('This sign-in attempt was already settled.');
    settled = true;
  };
  return {
    async succeeded() {
      settle();
      await release(store, held);
      // The sign-in stands even if the store fails now: the failures left behind only expire with their window.
      await store.reset(keys.pairFailures).catch(() => undefined);
    },
    async cancelled() {
      settle();
      await release(store, held);
    },
    async failed() {
      settle();
      // The failure is counted before the reservation is given back: never an instant where neither counts.
      try {
        await guarded(() => countFailure(configuration, keys));
      } finally {
        await release(store, held);
      }
    },
  };
}

/**
 * Counts a failure: per pair and per address; a pair's first failure in the
 * window adds its address to the username's distinct addresses; once those
 * reach `usernameDelayAfterAddresses`, the username is delayed from every
 * address for 1 s, 2 s, 4 s… (one more step per failure) up to
 * `maxUsernameDelaySeconds`.
 */
async function countFailure(configuration: SignInGuardConfiguration, keys: AttemptKeys): Promise<void> {
  const { store, windowMs } = configuration;
  const [pair] = await Promise.all([
    store.increment(keys.pairFailures, windowMs),
    store.increment(keys.addressFailures, windowMs),
  ]);
  const addresses =
    pair.count === 1 ? await store.increment(keys.usernameAddresses, windowMs) : await store.get(keys.usernameAddresses);
  if ((addresses?.count ?? 0) < configuration.usernameDelayAfterAddresses) return;
  const steps = (await store.increment(keys.usernameDelays, windowMs)).count;
  const seconds = Math.min(2 ** Math.min(steps - 1, 30), configuration.maxUsernameDelaySeconds);
  await store.increment(keys.usernameDelay, seconds * 1000);
}

/** A store operation whose failure (thrown or rejected) becomes the guard's 503. */
async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (cause) {
    throw unavailable(cause);
  }
}
