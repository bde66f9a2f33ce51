import type { Request } from 'express';
import {
  checkBoolean,
  checkInteger,
  invalidOption,
  isProductionEnvironment,
  noteSecurityEvent,
  publishSecurityEvent,
  readOptions,
  securityEventsWanted,
  warnOnce,
} from 'express-api-conventions/extend';
import { normalizeUsername, type UserRecord, type UserStore, usernameAllowed } from '../stores/stores.js';
import { needsRehash } from './password-hash-format.js';
import { BCRYPT_COST_RANGE, defaultPasswordHasher, type PasswordHasher } from './password-hasher.js';
import {
  DEFAULT_SIGN_IN_DEADLINE_MS,
  deadlineReached,
  remainingMs,
  SIGN_IN_DEADLINE_RANGE,
  setSignInDeadline,
} from './request-deadline.js';
import { type SignInAttemptOptions, type SignInGuard, signInAddressKey, signInFacts, signInGuard } from './sign-in-guard.js';
import type { SignInGuardOptions } from './sign-in-guard-options.js';
import { UnknownUserCost } from './unknown-user-hash.js';
import { checkUserRecord } from './user-record.js';

/**
 * The one password check of the library, for every door that takes a
 * username and a password (the token endpoint's password grant, a browser
 * sign-in form): the sign-in guard reserves the attempt first, the user is
 * looked up by the normalized username, and the password is verified off
 * the event loop. An unknown username is checked against a stand-in hash of
 * the cost most recent stored hashes have, so it takes as long as a wrong
 * password and cannot be told apart from one. A successful sign-in whose stored hash is of an older
 * format or a lower cost has it upgraded in the store (docs/password-hashes.md).
 */

export interface PasswordSignInOptions {
  /** Where users and their bcrypt hashes are found. Required. */
  users: UserStore;
  /**
   * The sign-in guard (give every door the same instance), its options for
   * a new one, or `false` for none. Default: a new guard with its defaults.
   */
  signInGuard?: SignInGuard | SignInGuardOptions | false;
  /** The worker pool that verifies passwords. Default: the shared pool of hashPassword(). */
  passwordHasher?: PasswordHasher;
  /**
   * Your users' bcrypt cost: a stored hash of a lower cost is upgraded to it
   * at the user's next successful sign-in, and unknown usernames are checked
   * at it until a known user signs in (from then on, at the cost of the
   * stored hashes verified lately: the most frequent of the last 32). Default: the `passwordHasher`'s cost (12 for
   * the shared pool).
   */
  passwordCost?: number;
  /**
   * The sign-in's deadline in ms (100 to 60000), counted from the request's
   * arrival (as early as a router of this library saw it, else the start of
   * the check): the guard's queue, the user store and the password pool all
   * spend one budget, and a check that cannot be done in time is refused
   * with 503 `signInBusy` or 429 and `Retry-After`. Default: 5000.
   */
  deadlineMs?: number;
  /**
   * Whether a successful sign-in replaces an outdated stored hash (a plain
   * bcrypt hash, an older version, a cost below `passwordCost`) with one of
   * today's format through the store's `updatePasswordHash()`. Turn it off
   * for a table another system reads too: it cannot verify the new format
   * (docs/password-hashes.md#a-table-shared-with-another-system). Default: `true`.
   */
  upgradePasswordHashes?: boolean;
}

const OPTION_NAMES = ['users', 'signInGuard', 'passwordHasher', 'passwordCost', 'deadlineMs', 'upgradePasswordHashes'] as const;

/**
 * Checks a username and password: resolves to the user when they match,
 * to undefined when they do not (unknown user or wrong password, one
 * answer). Rejects with the guard's 429 or 503 ApiError, or the password
 * hasher's (`signInQueueFull` 429, `signInBusy` 503, both with `Retry-After`)
 * when the wait for a thread would be too long.
 */
export type PasswordSignIn = (
  req: Request,
  username: string,
  password: string,
  options?: SignInAttemptOptions,
) => Promise<UserRecord | undefined>;

const hasMethods = (value: unknown, methods: readonly string[]): boolean =>
  typeof value === 'object' &&
  value !== null &&
  methods.every((name) => typeof (value as Record<string, unknown>)[name] === 'function');

/** Reads a `signInGuard` option: a guard as is, options for a new one, `false` for none. */
export function readSignInGuard(value: unknown): SignInGuard | undefined {
  if (value === false) return undefined;
  if (hasMethods(value, ['attempt'])) return value as SignInGuard;
  return signInGuard(value as SignInGuardOptions | undefined);
}

/**
 * A signal that aborts when the client goes away before its answer is sent
 * (the response closes unfinished), so that its queued bcrypt work is dropped.
 */
function clientGone(req: Request): AbortSignal | undefined {
  const res = req.res;
  if (!res) return undefined;
  const controller = new AbortController();
  const gone = () => controller.abort(new Error('The client closed the connection before the answer.'));
  // Gone already (while the guard or the user store was asked): 'close' was emitted before this listener.
  if (req.socket?.destroyed) gone();
  else
    res.once('close', () => {
      if (!res.writableFinished) gone();
    });
  return controller.signal;
}

const warnedUsernames = new Set<string>();

/**
 * Development only: a store that keeps usernames as typed ("Bob") never
 * finds the normalized name ("bob") the library asks for, and every sign-in
 * of that user fails as a plain invalid_grant. Asking the store once more with
 * the name as typed tells that mistake apart from an unknown user, so it can
 * be said once, on the server's stderr (never in the answer).
 */
async function warnIfStoreIsNotNormalized(users: UserStore, typed: string, canonical: string): Promise<void> {
  if (warnedUsernames.has(canonical) || warnedUsernames.size >= 100) return;
  let found: UserRecord | undefined;
  try {
    found = await users.findByUsername(typed.trim());
  } catch {
    return;
  }
  if (!found) return;
  warnedUsernames.add(canonical);
  warnOnce(
    `EAC_USER_STORE_NOT_NORMALIZED:${canonical}`,
    'EAC_USER_STORE_NOT_NORMALIZED',
    `UserStore.findByUsername(${JSON.stringify(canonical)}) found no user, but findByUsername(${JSON.stringify(typed.trim())}) did: ` +
      'the library looks users up by normalizeUsername(username) (NFKC, trimmed, lower case), so this user can never sign in. ' +
      'Store the normalized name, or compare with it in findByUsername() (docs/oauth2-token.md#your-own-user-store).',
  );
}

/**
 * A sign-in's clock for its security events (docs/observability.md), made
 * only when someone listens: the sign-in's duration, and how long its
 * password check waited for a thread of the pool.
 */
function signInClock(username: string, options: SignInAttemptOptions | undefined) {
  const startedAt = performance.now();
  let queuedAt = startedAt;
  let poolWaitMs: number | undefined;
  return {
    queued(): void {
      queuedAt = performance.now();
    },
    started: (): void => {
      poolWaitMs = performance.now() - queuedAt;
    },
    /** What every event of this sign-in carries: signInFacts() and the times. */
    facts: () => ({
      ...signInFacts(username, options),
      durationMs: performance.now() - startedAt,
      ...(poolWaitMs === undefined ? {} : { poolWaitMs }),
    }),
  };
}

/** passwordSignIn()'s options, checked, with their defaults. */
interface SignInConfig {
  readonly users: UserStore;
  readonly pool: () => PasswordHasher;
  readonly cost: number;
  readonly guard: SignInGuard | undefined;
  readonly deadlineMs: number;
  readonly upgrade: boolean;
}

function readSignInOptions(options: Readonly<PasswordSignInOptions>, factory: string): SignInConfig {
  const given = readOptions<PasswordSignInOptions>(factory, options, OPTION_NAMES);
  if (!hasMethods(given.users, ['findByUsername'])) invalidOption(factory, 'users', given.users, 'a UserStore (findByUsername)');
  if (given.passwordHasher !== undefined && !hasMethods(given.passwordHasher, ['hash', 'verify'])) {
    invalidOption(factory, 'passwordHasher', given.passwordHasher, 'a PasswordHasher');
  }
  const hasher = given.passwordHasher;
  return {
    users: given.users as UserStore,
    pool: () => hasher ?? defaultPasswordHasher(),
    cost:
      given.passwordCost === undefined
        ? (hasher ?? defaultPasswordHasher()).cost
        : checkInteger(factory, 'passwordCost', given.passwordCost, BCRYPT_COST_RANGE),
    guard: readSignInGuard(given.signInGuard),
    deadlineMs:
      given.deadlineMs === undefined
        ? DEFAULT_SIGN_IN_DEADLINE_MS
        : checkInteger(factory, 'deadlineMs', given.deadlineMs, SIGN_IN_DEADLINE_RANGE),
    upgrade:
      given.upgradePasswordHashes === undefined
        ? true
        : checkBoolean(factory, 'upgradePasswordHashes', given.upgradePasswordHashes),
  };
}

/**
 * The user of `canonical` and whether `password` is theirs. The store's
 * answer is checked (user-record.ts); an unknown username is checked against
 * a stand-in of the cost most recent stored hashes have, so that both cost
 * one bcrypt computation of the same cost (unknown-user-hash.ts).
 */
async function findAndVerify(
  config: SignInConfig,
  unknownCost: UnknownUserCost,
  req: Request,
  sign: Readonly<{ canonical: string; allowed: boolean; password: string; deadline: number; clock: SignInClock | undefined }>,
): Promise<{ user: UserRecord | undefined; matches: boolean }> {
  // A name RFC 8265 disallows is no account: answered as an unknown one, at the same cost.
  const found = sign.allowed ? checkUserRecord(config.users, await config.users.findByUsername(sign.canonical)) : undefined;
  if (remainingMs(sign.deadline) <= 0) throw deadlineReached();
  if (found) unknownCost.follow(found.hash.cost);
  const { clock } = sign;
  clock?.queued();
  // Queued per client address (a flood from other addresses waits its own turns), dropped if the client leaves.
  const matches = await config.pool().verify(sign.password, found?.user.passwordHash ?? unknownCost.hash(), {
    key: signInAddressKey(req),
    signal: clientGone(req),
    // A tenth of the budget is kept for what follows the check (the store, signing, the answer).
    deadline: sign.deadline - config.deadlineMs / 10,
    ...(clock === undefined ? {} : { onStarted: clock.started }),
  });
  return { user: found?.user, matches };
}

type SignInClock = ReturnType<typeof signInClock>;

/** Makes the password check; options are checked now. */
export function passwordSignIn(options: Readonly<PasswordSignInOptions>, factory = 'passwordSignIn'): PasswordSignIn {
  const config = readSignInOptions(options, factory);
  const { users, guard } = config;
  const unknownCost = new UnknownUserCost(config.cost);

  return async function checkPassword(req, username, password, attemptOptions) {
    const canonical = normalizeUsername(username);
    const allowed = usernameAllowed(username);
    // One budget from the request's arrival, for the guard's queue, the user store and the pool.
    const deadline = setSignInDeadline(req, config.deadlineMs);
    const clock = securityEventsWanted() ? signInClock(canonical, attemptOptions) : undefined;
    const attempt = await guard?.attempt(req, canonical, attemptOptions);
    let checked: { user: UserRecord | undefined; matches: boolean };
    try {
      checked = await findAndVerify(config, unknownCost, req, { canonical, allowed, password, deadline, clock });
    } catch (error) {
      // A busy pool's refusal (signInBusy, signInQueueFull) is published with the sign-in it refused.
      if (clock) noteSecurityEvent(req, clock.facts());
      await attempt?.cancelled();
      throw error;
    }
    const { user, matches } = checked;
    if (!user || !matches) {
      if (!user && allowed && username !== canonical && !isProductionEnvironment())
        await warnIfStoreIsNotNormalized(users, username, canonical);
      // Published with the door's refusal (one answer for an unknown user and a wrong password, one event too).
      if (clock) {
        noteSecurityEvent(req, {
          event: 'authn_login_fail',
          description: 'Sign-in failed: unknown username or wrong password.',
          ...clock.facts(),
        });
      }
      await attempt?.failed();
      return undefined;
    }
    await attempt?.succeeded();
    if (clock) {
      publishSecurityEvent(req, {
        event: 'authn_login_success',
        outcome: 'success',
        description: 'Signed in with a password.',
        ...clock.facts(),
        // Both: the username ties this sign-in to its failures, the user id to its tokens and sessions.
        subject: user.subject,
      });
    }
    if (config.upgrade && users.updatePasswordHash && needsRehash(user.passwordHash, config.cost)) {
      void upgradeHash(users, config.pool(), {
        username: canonical,
        user,
        password,
        cost: config.cost,
        key: signInAddressKey(req),
      });
    }
    return user;
  };
}

/**
 * Stores a hash of today's format and cost for a user who just signed in
 * with an older one. The sign-in does not wait for it; the hash is the
 * address's own work in the pool. A failure changes nothing: the old hash
 * still verifies, and the next sign-in tries again. A busy pool's refusal is
 * the common case and says nothing; a store that fails is said once outside
 * production.
 */
async function upgradeHash(
  users: UserStore,
  pool: PasswordHasher,
  sign: Readonly<{ username: string; user: UserRecord; password: string; cost: number; key: string }>,
): Promise<void> {
  let passwordHash: string;
  try {
    passwordHash = await pool.hash(sign.password, sign.cost, { key: sign.key });
  } catch {
    return;
  }
  try {
    await users.updatePasswordHash?.({
      username: sign.username,
      subject: sign.user.subject,
      previousHash: sign.user.passwordHash,
      passwordHash,
    });
  } catch (error) {
    warnOnce(
      users,
      'EAC_PASSWORD_UPGRADE_FAILED',
      `UserStore.updatePasswordHash() failed (${error instanceof Error ? error.message : String(error)}): ` +
        'outdated password hashes stay as stored until it works (docs/password-hashes.md#upgrades-at-sign-in).',
    );
  }
}
