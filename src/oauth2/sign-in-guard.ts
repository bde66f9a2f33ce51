import type { Request } from 'express';
import { type ApiError, apiError } from '../errors/api-error.js';
import { storeUnavailable } from '../errors/store-unavailable.js';
import { clientAddressKey } from '../http/client-address.js';
import { storeKeyOf } from '../stores/counter-keys.js';
import { type CounterState, type CounterStore, secondsUntil } from '../stores/counter-store.js';
import { readSignInGuardOptions, type SignInGuardConfiguration, type SignInGuardOptions } from './sign-in-guard-options.js';
import { normalizeUsername } from './stores.js';

/**
 * The sign-in guard: one brute-force throttle for every door that checks a
 * password (the token endpoint's password grant, a browser sign-in form),
 * on one CounterStore, so that a guesser gets one allowance in all, not one
 * per door.
 *
 * Failed sign-ins are counted per username (in its normalizeUsername()
 * spelling, so case, width and space variants are one user) and per client
 * address (`req.ip` through express-rate-limit's `ipKeyGenerator`: an IPv6
 * client counts by its /56 block). Each attempt is reserved BEFORE its
 * password is checked (a "pending" count beside the failures), and an
 * attempt is admitted only while failures plus attempts in flight stay
 * within the allowance: so parallel guesses get no more checks than the
 * allowance. When the password is wrong the reservation becomes a failure;
 * when it is right the reservation is given back and the username's failures
 * are cleared: a successful sign-in is never what throttles.
 *
 * Attempts beyond the allowance that only wait for attempts in flight (50
 * parallel sign-ins of one user) are held until those are decided, then
 * admitted or refused. While a username or an address has used its
 * allowance of failures, every attempt gets 429, the right password too
 * (otherwise the one success among the 429s would tell the guesser). The
 * trade-off: a guesser can lock a user out for the window; the options tune
 * how many failures and how long.
 */

/** A reservation left by a process that died mid-check is forgotten after this long. */
const PENDING_WINDOW_MS = 60_000;

/** Store-key prefixes of the guard's counts (each key then holds a SHA-256 digest of the identity, never the identity). */
export const SIGN_IN_POLICIES = {
  usernameFailures: 'sign-in-failures-username',
  addressFailures: 'sign-in-failures-address',
  usernamePending: 'sign-in-pending-username',
  addressPending: 'sign-in-pending-address',
} as const;

/** One admitted sign-in attempt: say how it ended. */
export interface SignInAttempt {
  /** The password was right: the reservation is given back and the username's failures are cleared. */
  succeeded(): Promise<void>;
  /** The password was wrong (or the user unknown): the reservation stays, as a failure. */
  failed(): Promise<void>;
  /** The password could not be checked (a store failed): the reservation is given back, nothing is counted. */
  cancelled(): Promise<void>;
}

/** The guard; make one with signInGuard() and give the same one to every door. */
export interface SignInGuard {
  readonly maxFailuresPerUsername: number;
  readonly maxFailuresPerAddress: number;
  readonly windowSeconds: number;
  /**
   * Reserves one attempt for `username` from the request's address, before
   * the password is checked. Rejects with a 429 ApiError (`tooManyLoginFailures`,
   * with `Retry-After`) when the username or the address has used its
   * allowance, and with a 503 (`stateStoreUnavailable`, `Retry-After: 5`)
   * when the store cannot be reached: without its counts the guard cannot
   * protect the password, so it fails closed.
   */
  attempt(req: Request, username: string): Promise<SignInAttempt>;
}

/** The key of a client address: express-rate-limit's, as rateLimit() counts it (IPv6 by /56). */
export function signInAddressKey(req: Pick<Request, 'ip' | 'socket'>): string {
  return clientAddressKey(req);
}

/** One dimension (username or address): its failure and pending keys and its allowance. */
interface Dimension {
  readonly failures: string;
  readonly pending: string;
  readonly limit: number;
  readonly refusal: string;
}

/** The dimensions of one attempt: the username first, then the address (the first one over names the refusal). */
type Dimensions = readonly [byUser: Dimension, byAddress: Dimension];

/** What a reservation found: admitted, held by attempts in flight (wait and retry), or refused. */
type Verdict = { readonly kind: 'admit' } | { readonly kind: 'wait' } | { readonly kind: 'refuse'; readonly error: ApiError };

const unavailable = (cause: unknown): ApiError =>
  storeUnavailable(cause, { message: 'Sign-in is unavailable; try again later.' });

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Makes the sign-in guard; options are checked now (a wrong one throws ConfigurationError). */
export function signInGuard(options?: Readonly<SignInGuardOptions>): SignInGuard {
  const configuration = readSignInGuardOptions(options);
  const { maxFailuresPerUsername, maxFailuresPerAddress, windowSeconds } = configuration;
  return {
    maxFailuresPerUsername,
    maxFailuresPerAddress,
    windowSeconds,
    async attempt(req, username) {
      const dimensions = dimensionsOf(configuration, req, username);
      await admission(configuration, dimensions);
      return admittedAttempt(configuration, dimensions);
    },
  };
}

/** The keys and allowances an attempt is counted under: its username (normalizeUsername()) and its client address. */
function dimensionsOf(configuration: SignInGuardConfiguration, req: Request, username: string): Dimensions {
  const user = normalizeUsername(username);
  const address = signInAddressKey(req);
  return [
    {
      failures: storeKeyOf(SIGN_IN_POLICIES.usernameFailures, user),
      pending: storeKeyOf(SIGN_IN_POLICIES.usernamePending, user),
      limit: configuration.maxFailuresPerUsername,
      refusal: 'Too many failed sign-in attempts for this username; retry after the time in Retry-After.',
    },
    {
      failures: storeKeyOf(SIGN_IN_POLICIES.addressFailures, address),
      pending: storeKeyOf(SIGN_IN_POLICIES.addressPending, address),
      limit: configuration.maxFailuresPerAddress,
      refusal: 'Too many failed sign-in attempts from this address; retry after the time in Retry-After.',
    },
  ];
}

/**
 * Reserves the attempt, waiting while it is held only by attempts in flight
 * (with jitter, so waiters do not move in step) until `queueTimeoutMs`;
 * rejects with the 429 of a refusal or of a wait that ran out.
 */
async function admission({ store, queueTimeoutMs }: SignInGuardConfiguration, dimensions: Dimensions): Promise<void> {
  const deadline = Date.now() + queueTimeoutMs;
  let delay = 10;
  for (;;) {
    const verdict = await reserve(store, dimensions);
    if (verdict.kind === 'refuse') throw verdict.error;
    if (verdict.kind === 'admit') return;
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

/** Reserves one pending slot in each dimension, then reads the failures (in that order: never an under-count). */
async function reserve(store: CounterStore, dimensions: Dimensions): Promise<Verdict> {
  const reserved = await Promise.allSettled(dimensions.map((d) => store.increment(d.pending, PENDING_WINDOW_MS)));
  const refused = reserved.find((outcome) => outcome.status === 'rejected');
  if (refused) {
    await release(
      store,
      dimensions.filter((_, i) => reserved[i]?.status === 'fulfilled'),
    );
    throw unavailable(refused.reason);
  }
  const pending = reserved.map((outcome) => (outcome as PromiseFulfilledResult<CounterState>).value);
  let failures: (CounterState | undefined)[];
  try {
    failures = await Promise.all(dimensions.map((d) => store.get(d.failures)));
  } catch (cause) {
    await release(store, dimensions);
    throw unavailable(cause);
  }
  const used = failures.map((state) => state?.count ?? 0);
  if (dimensions.some((d, i) => (used[i] as number) >= d.limit)) {
    await release(store, dimensions);
    return { kind: 'refuse', error: throttled(dimensions, failures) };
  }
  // Failures so far plus attempts in flight (this one included) must fit the allowance.
  // (A pending window that ends while attempts are in flight lets their give-back land in the
  // next window: at most a few more checks at that instant, never a lasting over-count.)
  if (dimensions.some((d, i) => (used[i] as number) + (pending[i] as CounterState).count > d.limit)) {
    await release(store, dimensions);
    return { kind: 'wait' };
  }
  return { kind: 'admit' };
}

/** Gives back the pending slot of each dimension; a failure here only lets the slot expire with its window. */
async function release(store: CounterStore, dimensions: readonly Dimension[]): Promise<void> {
  await Promise.all(dimensions.map((d) => store.decrement(d.pending).catch(() => undefined)));
}

/** The 429 of a username or address over its allowance, with `Retry-After` at the latest end of their windows. */
function throttled(dimensions: Dimensions, states: readonly (CounterState | undefined)[]): ApiError {
  const now = Date.now();
  let retryAfter = 1;
  let message = '';
  dimensions.forEach((dimension, index) => {
    const state = states[index];
    if ((state?.count ?? 0) >= dimension.limit) {
      retryAfter = Math.max(retryAfter, secondsUntil(state?.resetAt ?? now, now));
      message = message || dimension.refusal;
    }
  });
  return apiError('tooManyLoginFailures', { message, headers: { 'Retry-After': String(retryAfter) } });
}

/** The attempt once admitted: each outcome gives back its reservation, and may be told once. */
function admittedAttempt({ store, windowMs }: SignInGuardConfiguration, dimensions: Dimensions): SignInAttempt {
  const [byUser, byAddress] = dimensions;
  let settled = false;
  const settle = () => {
    if (settled) throw new Error('This sign-in attempt was already settled.');
    settled = true;
  };
  return {
    async succeeded() {
      settle();
      await release(store, dimensions);
      // The sign-in stands even if the store fails now: the failures left behind only expire with their window.
      await store.reset(byUser.failures).catch(() => undefined);
    },
    async cancelled() {
      settle();
      await release(store, dimensions);
    },
    async failed() {
      settle();
      // The failure is counted before the reservation is given back: never an instant where neither counts.
      try {
        await guarded(() =>
          Promise.all([store.increment(byUser.failures, windowMs), store.increment(byAddress.failures, windowMs)]),
        );
      } finally {
        await release(store, dimensions);
      }
    },
  };
}

/** A store operation whose failure (thrown or rejected) becomes the guard's 503. */
async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (cause) {
    throw unavailable(cause);
  }
}
