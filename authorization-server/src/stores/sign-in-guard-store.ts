/**
 * Where the sign-in guard counts: a SignInGuardStore decides and counts each
 * attempt in one atomic step (check and reserve; count and give back), so
 * that however many attempts arrive at once, on one instance or many, no
 * more passwords are checked than the allowance. A generic CounterStore
 * cannot: a reservation and the reads that judge it would be several steps,
 * and parallel attempts slip between them.
 *
 * The rule each step applies (the memory store here, the Redis store in one
 * Lua script per step):
 * - reserve, per address: refused while the address's failures reach
 *   `maxAddress`; held (wait) while its failures plus attempts in flight do;
 * - reserve, per account: refused while the (account, address) failures
 *   reach `maxPair` or the account is delayed; held while the pair's failures
 *   plus attempts in flight reach `maxPair`; held while the account is past
 *   its distinct-address threshold and another attempt is in flight (one at a
 *   time); held when the address is new to the account (no failure yet) and
 *   already in flight, or when the failed addresses plus the addresses in
 *   flight reach the threshold (each attempt in flight may become one more
 *   failed address);
 * - settle: a failure is counted where its reservation was (never an instant
 *   where neither counts); a success clears the pair's failures, but the
 *   address stays one of the window's failed addresses (fail, succeed, fail
 *   again from one address is one address, not two).
 *
 * The window of an account's counts is the last `windowMs`: an address is
 * one of the account's failed addresses while its last failure is less than
 * a window old, and its failures, like the delay's steps, count until a
 * whole window passed without one. The failed addresses are the keys of
 * that one map, so "failed in this window" is one fact, not a count that
 * lives on its own while an address's failures live on theirs (the
 * straddling attack of docs/oauth2-choices.md). The per-address count, shared
 * by every username, keeps its fixed window.
 *
 * Known devices (OWASP "Slow Down Online Guessing Attacks with Device
 * Cookies"): a device that signed the account in before (a success with that
 * `device`) is known for `deviceMs`. A known device has its own allowance,
 * `maxPair` failures per window, and nothing else counts for it: no address
 * allowance, no account-wide delay, so failures elsewhere never refuse it.
 * Once it has used its allowance it is forgotten (a stolen device credential
 * buys one allowance, then counts as unknown). An account keeps at most
 * `maxDevices` known devices: a success beyond that forgets the least
 * recently used one.
 */

/** The identities of one attempt, as digests (never a raw username or address). */
export interface SignInIdentity {
  /** The account (normalized username). */
  readonly account: string;
  /** The client address. */
  readonly address: string;
  /** The device, when the door proved one (a signed device cookie, a DPoP key, an authenticated client). */
  readonly device?: string;
}

/** The guard's allowances, as the store applies them. */
export interface SignInLimits {
  readonly maxPair: number;
  readonly maxAddress: number;
  /** Distinct failed addresses after which the account is delayed. */
  readonly delayAfterAddresses: number;
  readonly maxDelayMs: number;
  readonly windowMs: number;
  /** How long a reservation left by a process that died mid-check lives. */
  readonly pendingMs: number;
  /** How long a device stays known after its last successful sign-in. */
  readonly deviceMs: number;
  /** The most known devices an account keeps; a success beyond it forgets the least recently used. */
  readonly maxDevices: number;
}

/** Why an attempt is refused. */
export type SignInRefusal = 'pair' | 'address' | 'account';

/** What a reservation found: admitted (as a known device or not), held by attempts in flight, or refused for `retryAfterMs`. */
export type SignInReservation =
  | { readonly kind: 'admit'; readonly known: boolean }
  | { readonly kind: 'wait' }
  | { readonly kind: 'refuse'; readonly reason: SignInRefusal; readonly retryAfterMs: number };

/** How an admitted attempt ended. */
export type SignInOutcome = 'succeeded' | 'failed' | 'cancelled';

/** The guard's counts; MemorySignInGuardStore for one instance, RedisSignInGuardStore for several. */
export interface SignInGuardStore {
  /** Checks and reserves one attempt, atomically. */
  reserve(identity: SignInIdentity, limits: SignInLimits): Promise<SignInReservation>;
  /**
   * Gives an admitted attempt's reservation back, counting a failure first, atomically; `known` as reserve() said.
   * Resolves, for a failure that used up an allowance, which one (the refusal the next attempt meets); a
   * store may resolve nothing, and the guard then publishes no `authn_login_fail_max` (docs/observability.md).
   */
  settle(
    identity: SignInIdentity,
    outcome: SignInOutcome,
    limits: SignInLimits,
    known: boolean,
    // biome-ignore lint/suspicious/noConfusingVoidType: a store written before the events resolves nothing, and still fits.
  ): Promise<SignInRefusal | undefined | void>;
}

const ADMIT: SignInReservation = { kind: 'admit', known: false };
const ADMIT_KNOWN: SignInReservation = { kind: 'admit', known: true };
const WAIT: SignInReservation = { kind: 'wait' };

/** A count that ends at `endsAt` (ms since the epoch): a fixed window. */
interface Timed {
  count: number;
  endsAt: number;
}

/**
 * Failures counted while the last one is less than a window old: once a
 * whole window passed without one, the count starts again. So no window
 * boundary hands out a second allowance (any `windowMs` sees at most one).
 */
export interface Streak {
  count: number;
  lastAt: number;
}

/** One account's counts, as the Redis store keeps them under one hash tag. */
interface AccountCounts {
  /**
   * The addresses that failed in the window (their last failure less than
   * `windowMs` ago): each one's failures, 0 after a success (it stays one
   * of the window's failed addresses).
   */
  readonly failed: Map<string, Streak>;
  /** Attempts in flight per address, and per known device (`d:<device>`). */
  readonly pending: Map<string, number>;
  /** Known devices, least recently used first: when each last signed in. */
  readonly devices: Map<string, number>;
  /** Failures per known device. */
  readonly deviceFailures: Map<string, Streak>;
  pendingEndsAt: number;
  /** The username-wide delay's steps. */
  delays?: Streak;
  delayEndsAt: number;
}

const SWEEP_EVERY = 1000;

/** The guard's counts in this process: each step runs synchronously, so it is atomic. */
export class MemorySignInGuardStore implements SignInGuardStore {
  readonly #accounts = new Map<string, AccountCounts>();
  readonly #addresses = new Map<string, { failures?: Timed; pending: number; pendingEndsAt: number }>();
  readonly #now: () => number;
  #writes = 0;

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  async reserve(identity: SignInIdentity, limits: SignInLimits): Promise<SignInReservation> {
    const now = this.#now();
    const known = identity.device === undefined ? undefined : this.#reserveKnown(identity.account, identity.device, limits, now);
    if (known) return known;
    const address = this.#address(identity.address, now);
    const addressFailures = address.failures && address.failures.endsAt > now ? address.failures.count : 0;
    if (addressFailures >= limits.maxAddress) {
      return { kind: 'refuse', reason: 'address', retryAfterMs: (address.failures as Timed).endsAt - now };
    }
    if (addressFailures + address.pending >= limits.maxAddress) return WAIT;
    const verdict = this.#reserveAccount(identity, limits, now);
    if (verdict.kind === 'admit') {
      address.pending++;
      address.pendingEndsAt = now + limits.pendingMs;
    }
    return verdict;
  }

  async settle(
    identity: SignInIdentity,
    outcome: SignInOutcome,
    limits: SignInLimits,
    known: boolean,
  ): Promise<SignInRefusal | undefined> {
    const now = this.#now();
    this.#sweep(now, limits);
    if (known) return this.#settleKnown(identity.account, identity.device as string, outcome, limits, now);
    const address = this.#address(identity.address, now);
    if (address.pending > 0) address.pending--;
    const account = this.#account(identity.account, now);
    release(account.pending, identity.address);
    const before = account.failed.get(identity.address);
    if (outcome === 'succeeded') {
      // The failures are cleared, the address stays one of the window's failed addresses.
      if (before) before.count = 0;
      if (identity.device !== undefined) remember(account, identity.device, limits, now);
    }
    if (outcome !== 'failed') return undefined;
    address.failures = bump(address.failures, now, limits.windowMs);
    const pair = extend(before, now, limits.windowMs);
    account.failed.set(identity.address, pair);
    const used = allowanceUsed(pair.count, address.failures.count, limits);
    if (failedAddresses(account, now, limits.windowMs) < limits.delayAfterAddresses) return used;
    account.delays = extend(account.delays, now, limits.windowMs);
    account.delayEndsAt = now + delayMs(account.delays.count, limits);
    return used ?? (account.delays.count === 1 ? 'account' : undefined);
  }

  /** How much this store holds, in all: for tests and metrics (each count is bounded per account; docs/oauth2-choices.md). */
  size(): { accounts: number; addresses: number; failedAddresses: number; knownDevices: number; deviceFailures: number } {
    let failed = 0;
    let devices = 0;
    let deviceFailures = 0;
    for (const account of this.#accounts.values()) {
      failed += account.failed.size;
      devices += account.devices.size;
      deviceFailures += account.deviceFailures.size;
    }
    return {
      accounts: this.#accounts.size,
      addresses: this.#addresses.size,
      failedAddresses: failed,
      knownDevices: devices,
      deviceFailures,
    };
  }

  /** A known device's own reservation; `undefined` when the device is not known (or no longer). */
  #reserveKnown(key: string, device: string, limits: SignInLimits, now: number): SignInReservation | undefined {
    const account = this.#account(key, now);
    if ((account.devices.get(device) ?? Number.NEGATIVE_INFINITY) + limits.deviceMs <= now) return undefined;
    const failures = live(account.deviceFailures.get(device), now, limits.windowMs);
    if (failures >= limits.maxPair) {
      forget(account, device);
      return undefined;
    }
    const mine = account.pending.get(`d:${device}`) ?? 0;
    if (failures + mine >= limits.maxPair) return WAIT;
    account.pending.set(`d:${device}`, mine + 1);
    account.pendingEndsAt = now + limits.pendingMs;
    return ADMIT_KNOWN;
  }

  #settleKnown(
    key: string,
    device: string,
    outcome: SignInOutcome,
    limits: SignInLimits,
    now: number,
  ): SignInRefusal | undefined {
    const account = this.#account(key, now);
    release(account.pending, `d:${device}`);
    if (outcome === 'succeeded') remember(account, device, limits, now);
    if (outcome !== 'failed') return undefined;
    const failures = extend(account.deviceFailures.get(device), now, limits.windowMs);
    account.deviceFailures.set(device, failures);
    // Its allowance used, the device is forgotten: a stolen device credential buys one allowance.
    if (failures.count >= limits.maxPair) forget(account, device);
    return failures.count === limits.maxPair ? 'pair' : undefined;
  }

  #reserveAccount(identity: SignInIdentity, limits: SignInLimits, now: number): SignInReservation {
    const account = this.#account(identity.account, now);
    const pair = account.failed.get(identity.address);
    const failures = live(pair, now, limits.windowMs);
    if (failures >= limits.maxPair) {
      return { kind: 'refuse', reason: 'pair', retryAfterMs: (pair as Streak).lastAt + limits.windowMs - now };
    }
    if (account.delayEndsAt > now) return { kind: 'refuse', reason: 'account', retryAfterMs: account.delayEndsAt - now };
    const mine = account.pending.get(identity.address) ?? 0;
    if (failures + mine >= limits.maxPair) return WAIT;
    const addresses = failedAddresses(account, now, limits.windowMs);
    const failedBefore = inWindow(pair, now, limits.windowMs);
    if (addresses >= limits.delayAfterAddresses) {
      if (account.pending.size > 0) return WAIT;
    } else if (!failedBefore && (mine > 0 || addresses + account.pending.size >= limits.delayAfterAddresses)) {
      return WAIT;
    }
    account.pending.set(identity.address, mine + 1);
    account.pendingEndsAt = now + limits.pendingMs;
    return ADMIT;
  }

  #account(key: string, now: number): AccountCounts {
    let account = this.#accounts.get(key);
    if (account && account.pendingEndsAt <= now) account.pending.clear();
    if (!account) {
      account = {
        failed: new Map(),
        pending: new Map(),
        devices: new Map(),
        deviceFailures: new Map(),
        pendingEndsAt: 0,
        delayEndsAt: 0,
      };
      this.#accounts.set(key, account);
    }
    return account;
  }

  #address(key: string, now: number) {
    let address = this.#addresses.get(key);
    if (address && address.pendingEndsAt <= now) address.pending = 0;
    if (!address) {
      address = { pending: 0, pendingEndsAt: 0 };
      this.#addresses.set(key, address);
    }
    return address;
  }

  /** Forgets, now and then, what has ended: a count whose window passed counts nothing even before. */
  #sweep(now: number, limits: SignInLimits): void {
    if (++this.#writes % SWEEP_EVERY !== 0) return;
    for (const [key, address] of this.#addresses) {
      const failing = address.failures !== undefined && address.failures.endsAt > now;
      if (!failing && (address.pending === 0 || address.pendingEndsAt <= now)) this.#addresses.delete(key);
    }
    for (const [key, account] of this.#accounts) {
      failedAddresses(account, now, limits.windowMs);
      for (const [device, failures] of account.deviceFailures) {
        if (!inWindow(failures, now, limits.windowMs)) account.deviceFailures.delete(device);
      }
      for (const [device, lastAt] of account.devices) if (lastAt + limits.deviceMs <= now) account.devices.delete(device);
      const idle = account.pending.size === 0 || account.pendingEndsAt <= now;
      const empty = account.failed.size === 0 && account.devices.size === 0 && account.deviceFailures.size === 0;
      if (idle && empty && !inWindow(account.delays, now, limits.windowMs) && account.delayEndsAt <= now) {
        this.#accounts.delete(key);
      }
    }
  }
}

/** Whether a streak's last failure is less than a window old. */
const inWindow = (streak: Streak | undefined, now: number, windowMs: number): streak is Streak =>
  streak !== undefined && streak.lastAt + windowMs > now;

/** A streak's count while it lasts, else 0. */
const live = (streak: Streak | undefined, now: number, windowMs: number): number =>
  inWindow(streak, now, windowMs) ? streak.count : 0;

/** One more failure now: the streak goes on, or a new one starts. */
const extend = (streak: Streak | undefined, now: number, windowMs: number): Streak => ({
  count: live(streak, now, windowMs) + 1,
  lastAt: now,
});

/** One more in the window, or 1 in a new window. */
const bump = (timed: Timed | undefined, now: number, windowMs: number): Timed =>
  timed && timed.endsAt > now ? { count: timed.count + 1, endsAt: timed.endsAt } : { count: 1, endsAt: now + windowMs };

/** The addresses that failed for the account in the window; forgets the others. */
function failedAddresses(account: AccountCounts, now: number, windowMs: number): number {
  for (const [address, streak] of account.failed) if (!inWindow(streak, now, windowMs)) account.failed.delete(address);
  return account.failed.size;
}

/** Gives back one attempt in flight. */
function release(pending: Map<string, number>, key: string): void {
  const mine = pending.get(key) ?? 0;
  if (mine > 1) pending.set(key, mine - 1);
  else pending.delete(key);
}

/** A device that just signed in: known, and the most recently used; beyond `maxDevices`, the least recently used is forgotten. */
function remember(account: AccountCounts, device: string, limits: SignInLimits, now: number): void {
  account.devices.delete(device);
  account.deviceFailures.delete(device);
  account.devices.set(device, now);
  for (const oldest of account.devices.keys()) {
    if (account.devices.size <= limits.maxDevices) break;
    forget(account, oldest);
  }
}

function forget(account: AccountCounts, device: string): void {
  account.devices.delete(device);
  account.deviceFailures.delete(device);
}

/**
 * The allowance a failure used up, from the counts after it: the (account,
 * address) pair's or the address's, when this failure is the one that
 * reached it (the attempt after it is refused), else undefined.
 */
export function allowanceUsed(pairFailures: number, addressFailures: number, limits: SignInLimits): SignInRefusal | undefined {
  if (pairFailures === limits.maxPair) return 'pair';
  return addressFailures === limits.maxAddress ? 'address' : undefined;
}

/** The delay after the n-th delayed failure: 1 s, 2 s, 4 s… up to `maxDelayMs`. */
export const delayMs = (step: number, limits: Pick<SignInLimits, 'maxDelayMs'>): number =>
  Math.min(2 ** Math.min(step - 1, 30) * 1000, limits.maxDelayMs);
