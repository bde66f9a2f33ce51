import { hash } from 'node:crypto';
import type { Request } from 'express';
import type { SecurityEventReason } from 'express-api-conventions';
import { type ApiError, storeUnavailable } from 'express-api-conventions/errors';
import {
  clientAddressKey,
  noteSecurityEvent,
  type SecurityEventFields,
  securityEventsWanted,
} from 'express-api-conventions/extend';
import { packageError } from '../error-entries.js';
import type { SignInGuardStore, SignInIdentity, SignInLimits, SignInRefusal } from '../stores/sign-in-guard-store.js';
import { normalizeUsername } from '../stores/stores.js';
import { remainingMs, signInDeadline } from './request-deadline.js';
import { readSignInGuardOptions, type SignInGuardConfiguration, type SignInGuardOptions } from './sign-in-guard-options.js';

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
  /** The client the door authenticated, named in the sign-in's security events (docs/observability.md). */
  clientId?: string;
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
  readonly maxKnownDevicesPerUsername: number;
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

/** A device's kinds, as the doors prefix them (SignInAttemptOptions.device). */
const DEVICE_KINDS: Readonly<Record<string, string>> = { dpop: 'dpop-key', client: 'client', cookie: 'cookie' };

/**
 * A device as a security event names it: its kind and a digest prefix,
 * enough to tell one device's sign-ins apart, never its cookie's id or its
 * key (docs/observability.md).
 */
export function deviceName(device: string | undefined): string | undefined {
  if (device === undefined) return undefined;
  const kind = DEVICE_KINDS[device.slice(0, device.indexOf(':'))] ?? 'device';
  return `${kind}:${digest(device).slice(0, 8)}`;
}

/** The allowance an event names: a store's refusal, or a known device's own allowance used up. */
type Allowance = SignInRefusal | 'device';

/**
 * What each allowance's events say: its `reason`, its limit, why it refuses,
 * and what follows its last failure (`authn_login_fail_max`).
 */
const LOCKS: Record<
  Allowance,
  { reason: SecurityEventReason; why: string; next: string; limit: (guard: SignInGuard) => number }
> = {
  pair: {
    reason: 'username_and_address',
    why: 'too many failures for this username from this address',
    next: 'the next attempt for this username from this address is refused',
    limit: (g) => g.maxFailuresPerUsernameAndAddress,
  },
  address: {
    reason: 'address',
    why: 'too many failures from this address',
    next: 'the next attempt from this address is refused',
    limit: (g) => g.maxFailuresPerAddress,
  },
  account: {
    reason: 'username_delay',
    why: 'the username is delayed after failures from several addresses',
    next: 'attempts for this username from devices it does not know are delayed',
    limit: (g) => g.usernameDelayAfterAddresses,
  },
  device: {
    reason: 'known_device',
    why: 'too many failures from a device known for this username',
    next: "the device is no longer known: its next attempts count as an unknown device's",
    limit: (g) => g.maxFailuresPerUsernameAndAddress,
  },
};

/**
 * A sign-in's facts every event about it carries: the username tried
 * (normalized; `subject` is a user id, added once the user is known), the
 * verified client, the device's name.
 */
export const signInFacts = (username: string, options: SignInAttemptOptions | undefined) => ({
  username: normalizeUsername(username),
  ...(options?.clientId === undefined ? {} : { clientId: options.clientId }),
  ...(options?.device === undefined ? {} : { device: deviceName(options.device) }),
});

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
    maxDevices: configuration.maxKnownDevicesPerUsername,
  };
  const guard: SignInGuard = {
    maxFailuresPerUsernameAndAddress,
    maxFailuresPerAddress,
    usernameDelayAfterAddresses,
    maxUsernameDelaySeconds,
    windowSeconds,
    maxKnownDevicesPerUsername: configuration.maxKnownDevicesPerUsername,
    async attempt(req, username, attemptOptions) {
      // Usernames in their normalizeUsername() spelling.
      const device = attemptOptions?.device;
      const identity: SignInIdentity = {
        account: digest(normalizeUsername(username)),
        address: digest(signInAddressKey(req)),
        ...(device === undefined ? {} : { device: digest(device) }),
      };
      const refused: Refused = (reason, retryAfterSeconds) => {
        if (securityEventsWanted()) noteLock(req, guard, reason, retryAfterSeconds, signInFacts(username, attemptOptions));
      };
      const known = await admission(configuration, limits, identity, refused, signInDeadline(req));
      // A known device has its own allowance, whatever the store names (sign-in-guard-store.ts).
      const usedUp = (reason: SignInRefusal) => {
        if (securityEventsWanted()) noteFailMax(req, guard, known ? 'device' : reason, signInFacts(username, attemptOptions));
      };
      return admittedAttempt(configuration.store, limits, identity, known, usedUp);
    },
  };
  return guard;
}

/** The `authn_login_lock` the guard's 429 is published as: the allowance that refused, the device unknown. */
function noteLock(
  req: Request,
  guard: SignInGuard,
  refusal: SignInRefusal | undefined,
  retryAfterSeconds: number,
  facts: ReturnType<typeof signInFacts>,
): void {
  const policy: SecurityEventFields['policy'] =
    refusal === undefined
      ? { retryAfterSeconds }
      : {
          limit: LOCKS[refusal].limit(guard),
          windowSeconds: guard.windowSeconds,
          ...(refusal === 'account' ? { delaySeconds: retryAfterSeconds } : {}),
          retryAfterSeconds,
        };
  const why = refusal === undefined ? 'too many sign-in attempts at once' : LOCKS[refusal].why;
  const device = facts.device === undefined ? 'no device' : 'a device not known for this username';
  noteSecurityEvent(req, {
    ...facts,
    event: 'authn_login_lock',
    reason: refusal === undefined ? 'queue_timeout' : LOCKS[refusal].reason,
    policy,
    description: `Sign-in refused: ${why}, from ${device}.`,
  });
}

/** The `authn_login_fail_max` a failure that used up an allowance is published as (instead of its `authn_login_fail`). */
function noteFailMax(req: Request, guard: SignInGuard, allowance: Allowance, facts: ReturnType<typeof signInFacts>): void {
  const lock = LOCKS[allowance];
  noteSecurityEvent(req, {
    ...facts,
    event: 'authn_login_fail_max',
    reason: lock.reason,
    policy: { limit: lock.limit(guard), windowSeconds: guard.windowSeconds },
    description: `Sign-in failed and used up an allowance: ${lock.why}; ${lock.next}.`,
  });
}

/** Told of a refusal before its 429 is thrown: the allowance that refused (none: the wait ran out), and the Retry-After. */
type Refused = (reason: SignInRefusal | undefined, retryAfterSeconds: number) => void;

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
  refused: Refused,
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
      refused(verdict.reason, retryAfter);
      throw packageError('tooManyLoginFailures', {
        message: REFUSALS[verdict.reason],
        headers: { 'Retry-After': String(retryAfter) },
      });
    }
    if (Date.now() + delay > deadline) {
      refused(undefined, 1);
      throw packageError('tooManyLoginFailures', {
        message: 'Too many sign-in attempts at once for this username or address; retry after the time in Retry-After.',
        headers: { 'Retry-After': '1' },
      });
    }
    await sleep(delay / 2 + Math.random() * delay);
    delay = Math.min(delay * 2, 200);
  }
}

/** The attempt once admitted: each outcome settles its reservation in one step, and may be told once. */
function admittedAttempt(
  store: SignInGuardStore,
  limits: SignInLimits,
  identity: SignInIdentity,
  known: boolean,
  usedUp: (reason: SignInRefusal) => void,
): SignInAttempt {
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
      const reason = await guarded(() => store.settle(identity, 'failed', limits, known));
      if (reason) usedUp(reason);
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
