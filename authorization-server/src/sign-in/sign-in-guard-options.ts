import { checkInteger, invalidOption, type OptionHints, readOptions } from 'express-api-conventions/extend';
import { MemorySignInGuardStore, type SignInGuardStore } from '../stores/sign-in-guard-store.js';

/** Default: 10 failed sign-ins per username from one address per window, far below what guessing needs. */
export const DEFAULT_MAX_FAILURES_PER_USERNAME_AND_ADDRESS = 10;
/** Default: a username's attempts are delayed from every address once 3 addresses failed for it in a window. */
export const DEFAULT_USERNAME_DELAY_AFTER_ADDRESSES = 3;
/** Default: the username-wide delay doubles from 1 s up to 60 s, never one long lock. */
export const DEFAULT_MAX_USERNAME_DELAY_SECONDS = 60;
/** Default: 100 failed sign-ins per client address per window (one address may serve many users). */
export const DEFAULT_MAX_FAILURES_PER_ADDRESS = 100;
/** Default: an account keeps its 20 most recently used known devices (browsers, DPoP keys, clients). */
export const DEFAULT_MAX_KNOWN_DEVICES_PER_USERNAME = 20;
/** Default window: 15 minutes. */
export const DEFAULT_GUARD_WINDOW_SECONDS = 900;
/**
 * Default of `queueTimeoutMs`: the longest an attempt waits for attempts in
 * flight before it is refused with 429. A few seconds: a sign-in answered
 * later than that is worse than a quick "retry after 1 s", and the password
 * check itself may still wait up to PasswordHasher's `maxWaitMs` after it.
 */
export const SIGN_IN_QUEUE_TIMEOUT_MS = 3000;

export interface SignInGuardOptions {
  /**
   * Where counts live; a RedisSignInGuardStore shares them between
   * instances. Default: a new MemorySignInGuardStore.
   */
  store?: SignInGuardStore;
  /**
   * Failed sign-ins allowed per username from one client address per window;
   * then that address is refused for that username until the window ends,
   * while the same username from other addresses still signs in. Default: 10.
   */
  maxFailuresPerUsernameAndAddress?: number;
  /**
   * How many distinct addresses must have failed for one username within a
   * window before that username is delayed from every address (2 to 1000):
   * each further failure then holds its sign-ins for 1 s, 2 s, 4 s… up to
   * `maxUsernameDelaySeconds`. Default: 3.
   */
  usernameDelayAfterAddresses?: number;
  /** The longest username-wide delay, in seconds (1 to 3600). Default: 60. */
  maxUsernameDelaySeconds?: number;
  /** Failed sign-ins allowed per client address (`req.ip`) per window. Default: 100. */
  maxFailuresPerAddress?: number;
  /** Window length in seconds; a throttled username or address is free again at its end. Default: 900 (15 minutes). */
  windowSeconds?: number;
  /**
   * The most known devices one username keeps (1 to 1000): a successful
   * sign-in from a device beyond it forgets the least recently used one,
   * which then counts as unknown (delayed during an attack) until it signs
   * in again. Keeps each account's state bounded however often it signs in.
   * Default: 20.
   */
  maxKnownDevicesPerUsername?: number;
  /**
   * Longest an attempt held only by attempts in flight (many parallel
   * sign-ins of one user) waits for them to be decided, in ms (100 to
   * 60000); then it is refused with 429 and `Retry-After: 1`. Default: 3000.
   */
  queueTimeoutMs?: number;
}

const OPTION_NAMES = [
  'store',
  'maxFailuresPerUsernameAndAddress',
  'maxFailuresPerAddress',
  'usernameDelayAfterAddresses',
  'maxUsernameDelaySeconds',
  'windowSeconds',
  'maxKnownDevicesPerUsername',
  'queueTimeoutMs',
] as const;

/** What a team used to express-rate-limit or express-brute reaches for, and the option it is here. */
const SIGN_IN_GUARD_HINTS: OptionHints = {
  windowMs: "express-rate-limit's `windowMs` is `windowSeconds` here, in seconds (900000 ms is `windowSeconds: 900`).",
  max: 'The guard counts failures, not requests: `maxFailuresPerUsernameAndAddress` and `maxFailuresPerAddress`.',
  limit: 'The guard counts failures, not requests: `maxFailuresPerUsernameAndAddress` and `maxFailuresPerAddress`.',
  freeRetries:
    "express-brute's `freeRetries` is `maxFailuresPerUsernameAndAddress` here (and `maxFailuresPerAddress` per address).",
  maxFailuresPerUsername:
    'It is now `maxFailuresPerUsernameAndAddress` (one username from one address): a username as a whole is only delayed, after failures from `usernameDelayAfterAddresses` addresses.',
  lifetime: "express-brute's `lifetime` is `windowSeconds` here.",
};
const FACTORY = 'signInGuard';

/** signInGuard()'s options, checked, with their defaults. */
export interface SignInGuardConfiguration {
  readonly store: SignInGuardStore;
  readonly maxFailuresPerUsernameAndAddress: number;
  readonly maxFailuresPerAddress: number;
  readonly usernameDelayAfterAddresses: number;
  readonly maxUsernameDelaySeconds: number;
  readonly windowSeconds: number;
  /** `windowSeconds` in milliseconds, as the store takes it. */
  readonly windowMs: number;
  readonly maxKnownDevicesPerUsername: number;
  readonly queueTimeoutMs: number;
}

/** A SignInGuardStore: a CounterStore cannot check and count in one step, so it is refused with what to use. */
function checkGuardStore(store: unknown): SignInGuardStore {
  const candidate = store as Partial<SignInGuardStore> | null;
  if (typeof candidate?.reserve === 'function' && typeof candidate.settle === 'function') return candidate as SignInGuardStore;
  return invalidOption(
    FACTORY,
    'store',
    store,
    'a SignInGuardStore (reserve and settle): MemorySignInGuardStore, or RedisSignInGuardStore({ client }) shared by every instance; a CounterStore cannot check and count in one step',
  );
}

/** Turns signInGuard()'s options into its configuration, or throws a ConfigurationError at start-up. */
export function readSignInGuardOptions(options: unknown): SignInGuardConfiguration {
  const given = readOptions<SignInGuardOptions>(FACTORY, options, OPTION_NAMES, SIGN_IN_GUARD_HINTS);
  const store = given.store === undefined ? new MemorySignInGuardStore() : checkGuardStore(given.store);
  const windowSeconds = checkInteger(FACTORY, 'windowSeconds', given.windowSeconds ?? DEFAULT_GUARD_WINDOW_SECONDS, {
    min: 1,
    max: 86_400 * 30,
  });
  return {
    store,
    maxFailuresPerUsernameAndAddress: checkInteger(
      FACTORY,
      'maxFailuresPerUsernameAndAddress',
      given.maxFailuresPerUsernameAndAddress ?? DEFAULT_MAX_FAILURES_PER_USERNAME_AND_ADDRESS,
      { min: 1 },
    ),
    usernameDelayAfterAddresses: checkInteger(
      FACTORY,
      'usernameDelayAfterAddresses',
      given.usernameDelayAfterAddresses ?? DEFAULT_USERNAME_DELAY_AFTER_ADDRESSES,
      { min: 2, max: 1000 },
    ),
    maxUsernameDelaySeconds: checkInteger(
      FACTORY,
      'maxUsernameDelaySeconds',
      given.maxUsernameDelaySeconds ?? DEFAULT_MAX_USERNAME_DELAY_SECONDS,
      { min: 1, max: 3600 },
    ),
    maxFailuresPerAddress: checkInteger(
      FACTORY,
      'maxFailuresPerAddress',
      given.maxFailuresPerAddress ?? DEFAULT_MAX_FAILURES_PER_ADDRESS,
      { min: 1 },
    ),
    windowSeconds,
    windowMs: windowSeconds * 1000,
    maxKnownDevicesPerUsername: checkInteger(
      FACTORY,
      'maxKnownDevicesPerUsername',
      given.maxKnownDevicesPerUsername ?? DEFAULT_MAX_KNOWN_DEVICES_PER_USERNAME,
      { min: 1, max: 1000 },
    ),
    queueTimeoutMs: checkInteger(FACTORY, 'queueTimeoutMs', given.queueTimeoutMs ?? SIGN_IN_QUEUE_TIMEOUT_MS, {
      min: 100,
      max: 60_000,
    }),
  };
}
