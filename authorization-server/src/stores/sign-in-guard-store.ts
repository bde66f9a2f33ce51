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
 * Known devices (OWASP "Slow Down Online Guessing Attacks with Device
 * Cookies"): a device that signed the account in before (a success with that
 * `device`) is known for `deviceMs`. A known device has its own allowance,
 * `maxPair` failures per window, and nothing else counts for it: no address
 * allowance, no account-wide delay, so failures elsewhere never refuse it.
 * Once it has used its allowance it is forgotten (a stolen device credential
 * buys one allowance, then counts as unknown).
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

/** A count that ends at `endsAt` (ms since the epoch). */
interface Timed {
  count: number;
  endsAt: number;
}

/** One account's counts, as the Redis store keeps them under one hash tag. */
interface AccountCounts {
  /** Failures per address. */
  readonly pairs: Map<string, Timed>;
  /** Attempts in flight per address, and per known device (`d:<device>`). */
  readonly pending: Map<string, number>;
  /** Known devices: when each stops being known. */
  readonly devices: Map<string, number>;
  /** Failures per known device. */
  readonly deviceFailures: Map<string, Timed>;
  pendingEndsAt: number;
  addresses?: Timed;
  delays?: Timed;
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
    const addressFailures = live(address.failures, now);
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
    this.#sweep(now);
    if (known) return this.#settleKnown(identity.account, identity.device as string, outcome, limits, now);
    const address = this.#address(identity.address, now);
    if (address.pending > 0) address.pending--;
    const account = this.#account(identity.account, now);
    const mine = account.pending.get(identity.address) ?? 0;
    if (mine > 1) account.pending.set(identity.address, mine - 1);
    else account.pending.delete(identity.address);
    const before = account.pairs.get(identity.address);
    if (outcome === 'succeeded') {
      // The failures are cleared, the address stays counted among the window's failed addresses.
      if (before) before.count = 0;
      if (identity.device !== undefined) account.devices.set(identity.device, now + limits.deviceMs);
    }
    if (outcome !== 'failed') return undefined;
    address.failures = bump(address.failures, now, limits.windowMs);
    const pair = bump(before, now, limits.windowMs);
    account.pairs.set(identity.address, pair);
    if (!counted(before, now)) account.addresses = bump(account.addresses, now, limits.windowMs);
    const used = allowanceUsed(pair.count, address.failures.count, limits);
    if (live(account.addresses, now) < limits.delayAfterAddresses) return used;
    account.delays = bump(account.delays, now, limits.windowMs);
    account.delayEndsAt = now + delayMs(account.delays.count, limits);
    return used ?? (account.delays.count === 1 ? 'account' : undefined);
  }

  /** A known device's own reservation; `undefined` when the device is not known (or no longer). */
  #reserveKnown(key: string, device: string, limits: SignInLimits, now: number): SignInReservation | undefined {
    const account = this.#account(key, now);
    if ((account.devices.get(device) ?? 0) <= now) return undefined;
    const failures = live(account.deviceFailures.get(device), now);
    if (failures >= limits.maxPair) {
      account.devices.delete(device);
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
    const mine = account.pending.get(`d:${device}`) ?? 0;
    if (mine > 1) account.pending.set(`d:${device}`, mine - 1);
    else account.pending.delete(`d:${device}`);
    if (outcome === 'succeeded') {
      account.deviceFailures.delete(device);
      account.devices.set(device, now + limits.deviceMs);
    } else if (outcome === 'failed') {
      const failures = bump(account.deviceFailures.get(device), now, limits.windowMs);
      account.deviceFailures.set(device, failures);
      if (failures.count >= limits.maxPair) account.devices.delete(device);
      if (failures.count === limits.maxPair) return 'pair';
    }
    return undefined;
  }

  #reserveAccount(identity: SignInIdentity, limits: SignInLimits, now: number): SignInReservation {
    const account = this.#account(identity.account, now);
    const pair = account.pairs.get(identity.address);
    const failures = live(pair, now);
    const failedBefore = counted(pair, now);
    if (failures >= limits.maxPair) return { kind: 'refuse', reason: 'pair', retryAfterMs: (pair as Timed).endsAt - now };
    if (account.delayEndsAt > now) return { kind: 'refuse', reason: 'account', retryAfterMs: account.delayEndsAt - now };
    const mine = account.pending.get(identity.address) ?? 0;
    if (failures + mine >= limits.maxPair) return WAIT;
    const addresses = live(account.addresses, now);
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
        pairs: new Map(),
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

  /** Forgets, now and then, what has ended: a key whose window passed counts nothing even before. */
  #sweep(now: number): void {
    if (++this.#writes % SWEEP_EVERY !== 0) return;
    for (const [key, address] of this.#addresses) {
      if (live(address.failures, now) === 0 && (address.pending === 0 || address.pendingEndsAt <= now)) {
        this.#addresses.delete(key);
      }
    }
    for (const [key, account] of this.#accounts) {
      for (const [address, pair] of account.pairs) if (pair.endsAt <= now) account.pairs.delete(address);
      for (const [device, failures] of account.deviceFailures) if (failures.endsAt <= now) account.deviceFailures.delete(device);
      for (const [device, endsAt] of account.devices) if (endsAt <= now) account.devices.delete(device);
      const idle = account.pending.size === 0 || account.pendingEndsAt <= now;
      const empty = account.pairs.size === 0 && account.devices.size === 0 && account.deviceFailures.size === 0;
      if (idle && empty && live(account.addresses, now) === 0 && account.delayEndsAt <= now) {
        this.#accounts.delete(key);
      }
    }
  }
}

/** A count while its window lasts, else 0. */
const live = (timed: Timed | undefined, now: number): number => (timed && timed.endsAt > now ? timed.count : 0);

/** Whether the address is among the window's failed addresses (its failures may since have been cleared by a success). */
const counted = (pair: Timed | undefined, now: number): boolean => pair !== undefined && pair.endsAt > now;

/** One more in the window, or 1 in a new window. */
const bump = (timed: Timed | undefined, now: number, windowMs: number): Timed =>
  timed && timed.endsAt > now ? { count: timed.count + 1, endsAt: timed.endsAt } : { count: 1, endsAt: now + windowMs };

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
