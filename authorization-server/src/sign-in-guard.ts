import { hash } from 'node:crypto';
import type { Request } from 'express';
import { type ApiError, apiError, storeUnavailable } from 'express-api-conventions/errors';
import { clientAddressKey } from 'express-api-conventions/extend';
import { remainingMs, signInDeadline } from './request-deadline.js';
import { readSignInGuardOptions, type SignInGuardConfiguration, type SignInGuardOptions } from './sign-in-guard-options.js';
import type { SignInGuardStore, SignInIdentity, SignInLimits, SignInRefusal } from './sign-in-guard-store.js';
import { normalizeUsername } from './stores.js';

/**
 * The sign-in guard: one brute-force throttle for every door that checks a
 * password (the token endpoint's password grant, a browser sign-in form),
 * on one SignInGuardStore, so that a guesser gets one allowance in all, not one
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
 * attempt is checked and reserved BEFORE its password is checked, in one
 * atomic step of the store (sign-in-guard-store.ts), and admitted only while
 * failures plus attempts in flight stay within the allowance: so parallel
 * guesses, on one instance or many, get no more checks than the allowance.
 * While a username is delayed, one attempt at a time is checked. A wrong password turns the reservation into a failure; a right
 * one gives it back and clears its (username, address) failures. While a
 * (username, address) pair, an address or a delayed username is refused,
 * the right password is refused too (otherwise the one success among the
 * 429s would tell the guesser).
 */

/** A reservation left by a process that died mid-check is forgotten after this long. */
const PENDING_WINDOW_MS = 60_000;
/** A device stays known for 180 days after its last successful sign-in. */
const KNOWN_DEVICE_MS = 180 * 86_400_000;

/** What a door proved about the client, beyond its address. */
export interface SignInAttemptOptions {
  /**
   * The device, when the door proved one that the guesser cannot make up:
   * a verified device cookie's id, a DPoP key's thumbprint, an authenticated
   * confidential client's id (each prefixed by its kind, so they never
   * meet). A device that signed this account in before has its own allowance
   * and is never delayed by failures elsewhere; any other device counts as
   * unknown.
   */
  device?: string;
}

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
  attempt(req: Request, username: string, options?: SignInAttemptOptions): Promise<SignInAttempt>;
}

/** The key of a client address: express-rate-limit's, as rateLimit() counts it (IPv6 by /56). */
export function signInAddressKey(req: Pick<Request, 'ip' | 'socket'>): string {
  return clientAddressKey(req);
}

const REFUSALS: Record<SignInRefusal, string> = {
  pair: 'Too many failed sign-in attempts for this username from this address; retry after the time in Retry-After.',
  address: 'Too many failed sign-in attempts from this address; retry after the time in Retry-After.',
  account:
    'Sign-in for this username is slowed down after failed attempts from several addresses; retry after the time in Retry-After.',
};

const unavailable = (cause: unknown): ApiError =>
  storeUnavailable(cause, { message: 'Sign-in is unavailable; try again later.' });

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** An identity as the store keeps it: a SHA-256 digest cut to 96 bits, never the identity itself. */
const digest = (identity: string): string => hash('sha256', identity, 'buffer').toString('base64url', 0, 12);

/** Makes the sign-in guard; options are checked now (a wrong one throws ConfigurationError). */
export function signInGuard(options?: Readonly<SignInGuardOptions>): SignInGuard {
  const configuration = readSignInGuardOptions(options);
  const { maxFailuresPerUsernameAndAddress, maxFailuresPerAddress, usernameDelayAfterAddresses } = configuration;
  const { maxUsernameDelaySeconds, windowSeconds } = configuration;
  const limits: SignInLimits = {
    maxPair: maxFailuresPerUsernameAndAddress,
    maxAddress: maxFailuresPerAddress,
    delayAfterAddresses: usernameDelayAfterAddresses,
    maxDelayMs: maxUsernameDelaySeconds * 1000,
    windowMs: configuration.windowMs,
    pendingMs: PENDING_WINDOW_MS,
    deviceMs: KNOWN_DEVICE_MS,
  };
  return {
    maxFailuresPerUsernameAndAddress,
    maxFailuresPerAddress,
    usernameDelayAfterAddresses,
    maxUsernameDelaySeconds,
    windowSeconds,
    async attempt(req, username, attemptOptions) {
      // Usernames in their normalizeUsername() spelling.
      const device = attemptOptions?.device;
      const identity: SignInIdentity = {
        account: digest(normalizeUsername(username)),
        address: digest(signInAddressKey(req)),
        ...(device === undefined ? {} : { device: digest(device) }),
      };
      const known = await admission(configuration, limits, identity, signInDeadline(req));
      return admittedAttempt(configuration.store, limits, identity, known);
    },
  };
}

/**
 * Reserves the attempt, waiting while it is held only by attempts in flight
 * (with jitter, so waiters do not move in step) until `queueTimeoutMs`;
 * rejects with the 429 of a refusal or of a wait that ran out. Resolves
 * whether it was admitted as a known device.
 */
async function admission(
  configuration: SignInGuardConfiguration,
  limits: SignInLimits,
  identity: SignInIdentity,
  signInBy?: number,
): Promise<boolean> {
  // The wait is bounded by queueTimeoutMs, and by what is left of the request's sign-in deadline.
  const budget = signInBy === undefined ? Number.POSITIVE_INFINITY : remainingMs(signInBy);
  const deadline = Date.now() + Math.min(configuration.queueTimeoutMs, budget);
  let delay = 10;
  for (;;) {
    const verdict = await guarded(() => configuration.store.reserve(identity, limits));
    if (verdict.kind === 'admit') return verdict.known;
    if (verdict.kind === 'refuse') {
      const retryAfter = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
      throw apiError('tooManyLoginFailures', {
        message: REFUSALS[verdict.reason],
        headers: { 'Retry-After': String(retryAfter) },
      });
    }
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

/** The attempt once admitted: each outcome settles its reservation in one step, and may be told once. */
function admittedAttempt(store: SignInGuardStore, limits: SignInLimits, identity: SignInIdentity, known: boolean): SignInAttempt {
  let settled = false;
  const settle = () => {
    if (settled) throw new Error('This sign-in attempt was already settled.');
    settled = true;
  };
  return {
    async succeeded() {
      settle();
      // The sign-in stands even if the store fails now: the reservation and failures only expire with their window.
      await store.settle(identity, 'succeeded', limits, known).catch(() => undefined);
    },
    async cancelled() {
      settle();
      await store.settle(identity, 'cancelled', limits, known).catch(() => undefined);
    },
    async failed() {
      settle();
      await guarded(() => store.settle(identity, 'failed', limits, known));
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
