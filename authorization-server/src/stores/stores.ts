import { createHash, randomBytes } from 'node:crypto';
import { checkInteger, readOptions } from 'express-api-conventions/extend';
import {
  type ClientRegistration,
  type RegisteredClient,
  type RegisteredClientStore,
  registerClient,
} from './client-registration.js';

/**
 * The token endpoint's state behind small interfaces (docs/design.md principle 5):
 * users, registered clients and refresh-token families. The in-memory
 * implementations here serve one process; the Redis ones
 * (redis-stores.ts) let several instances share logins, rotation and
 * revocation.
 */

/**
 * Usernames are compared in one canonical spelling: Unicode NFKC, surrounding
 * white space dropped, lower case. So "Alice", " alice " and "ＡＬＩＣＥ" are
 * one account and one brute-force counter.
 */
export function normalizeUsername(username: string): string {
  return username.normalize('NFKC').trim().toLowerCase();
}

// RFC 8265 §3.3 (UsernameCaseMapped, PRECIS IdentifierClass of RFC 8264 §4.2): control and
// default-ignorable code points are disallowed. They are invisible, so "\u200Balice" would be an
// account that looks like "alice".
const DISALLOWED_IN_USERNAME = /[\p{Cc}\p{Default_Ignorable_Code_Point}]/u;

/**
 * Whether a username is free of control code points (U+0000–U+001F,
 * U+007F–U+009F) and default-ignorable ones (U+00AD, U+200B–U+200F,
 * U+2060–U+206F, U+FEFF, variation selectors, tags…), which RFC 8265's
 * UsernameCaseMapped profile disallows. The stores refuse to add such a
 * name, and sign-in answers it as an unknown user.
 */
export function usernameAllowed(username: string): boolean {
  return !DISALLOWED_IN_USERNAME.test(username);
}

/** Throws when `username` cannot be an account name (see usernameAllowed()). */
export function checkUsername(username: string): void {
  const found = DISALLOWED_IN_USERNAME.exec(username)?.[0];
  if (found === undefined) return;
  const codePoint = `U+${(found.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
  throw new RangeError(`A username may not hold a control or default-ignorable code point ${codePoint} (RFC 8265).`);
}

/** A user who signs in with the password grant. */
export interface UserRecord {
  /** The token's `sub`: a stable id, not the username. */
  readonly subject: string;
  /** A bcrypt hash (hashPassword()); the password itself is never stored. */
  readonly passwordHash: string;
  /** Scopes this user may be granted; absent: any scope the client may have. */
  readonly scopes?: readonly string[];
}

/** A user's stored hash replaced by a new one of the same password (an upgrade at sign-in). */
export interface PasswordHashUpdate {
  /** The normalized username the user was found by. */
  readonly username: string;
  /** The user's `subject`. */
  readonly subject: string;
  /** The hash the password was verified against: replace only while it is still the stored one. */
  readonly previousHash: string;
  /** The new hash (hashPassword()'s format and cost of today). */
  readonly passwordHash: string;
}

export interface UserStore {
  /** The user whose normalized username is `username`, or undefined. */
  findByUsername(username: string): Promise<UserRecord | undefined>;
  /**
   * Optional: stores the upgrade of a user's hash, made after a successful
   * sign-in whose hash was of an older format or a lower cost
   * (docs/password-hashes.md). Replace the hash only while it is still
   * `previousHash`, in one operation, so that a password changed meanwhile
   * is kept. Without this method, hashes stay as stored. A rejection never
   * fails the sign-in.
   */
  updatePasswordHash?(update: Readonly<PasswordHashUpdate>): Promise<void>;
}

/** What a refresh-token family grants: fixed at the password grant, kept through every rotation. */
export interface RefreshFamily {
  readonly familyId: string;
  readonly subject: string;
  readonly clientId: string | undefined;
  /** The scopes granted at sign-in; a refresh may narrow the access token's, never widen. */
  readonly scopes: readonly string[];
  /**
   * The DPoP key the family's refresh tokens are bound to (RFC 9449 §5, a
   * public client that sent a proof at sign-in): each refresh must come with
   * a proof of that key. Absent: not bound.
   */
  readonly jkt?: string;
}

/** A family as find() answers it: `current` tells whether the token is its family's current one. */
export interface FoundFamily extends RefreshFamily {
  /**
   * True when the token looked up is the family's current token (the one
   * that refreshes), false when it is an older, rotated one. A store that
   * does not say leaves it undefined, and introspection treats the token as
   * not active.
   */
  readonly current?: boolean;
}

/** The outcome of presenting a refresh token. */
export type RotateResult =
  /** It was the family's current token: it is now replaced by the new one. */
  | { readonly status: 'rotated'; readonly family: RefreshFamily }
  /** It was an older token of a live family: RFC 9700 §4.14.2, the whole family is now revoked. */
  | { readonly status: 'reused'; readonly familyId: string }
  /**
   * It was the token rotated last, presented again within the grace period,
   * `nextHash` is still the family's current token (it was never used), this
   * rotation was not retried yet and the one before it was not retried
   * either: a retry after a lost response. `issued` is what the rotation
   * stored (what it issued, opaque to the store). The rotation is now
   * marked as retried.
   */
  | { readonly status: 'retried'; readonly family: RefreshFamily; readonly issued?: string }
  /** Unknown, expired, or its family was revoked. */
  | { readonly status: 'invalid' };

/**
 * Refresh-token families (RFC 9700 §4.14.2). Tokens are stored only as their
 * SHA-256 hash. Every use rotates: the presented token must be the family's
 * current one; presenting an older one revokes the whole family.
 */
export interface RefreshTokenStore {
  /** Starts a family whose current token hash is `tokenHash`, expiring at `expiresAt` (ms). */
  create(family: RefreshFamily, tokenHash: string, expiresAt: number): Promise<void>;
  /** The live family that `tokenHash` belongs to (current or older token), or undefined. */
  find(tokenHash: string): Promise<FoundFamily | undefined>;
  /**
   * Atomically: if `tokenHash` is its family's current, unexpired token,
   * makes `nextHash` current (valid until `expiresAt`) and answers `rotated`;
   * if it is an older token of a live family, revokes the family (`reused`);
   * otherwise `invalid`. Of concurrent calls with one token, at most one
   * answers `rotated`, keeping `issued` with the rotation. With `graceMs`
   * above 0: when `tokenHash` is the token rotated last, less than `graceMs`
   * ago, `nextHash` is the current token, and neither this rotation nor the
   * one before it was retried, answers `retried` with the rotation's
   * `issued` and marks the rotation as retried; a second retry of one
   * rotation, or a retry right after a retried rotation, is reuse (a store
   * that ignores `graceMs` revokes, which is the strict behaviour). A
   * remembered token revokes its family as long as the family lives.
   */
  rotate(tokenHash: string, nextHash: string, expiresAt: number, graceMs?: number, issued?: string): Promise<RotateResult>;
  /** Revokes the family of the token with this hash (logout); false when none is live. */
  revokeByTokenHash(tokenHash: string): Promise<boolean>;
  /** Revokes a family by id. */
  revokeFamily(familyId: string): Promise<void>;
  /**
   * Revokes every live family `clientId` holds for `subject` (the user
   * withdrew that client's consent); answers their ids. Required by the
   * authorization endpoint (`authorization` option); the stores here keep a
   * per-user index of live families for it.
   */
  revokeClientFamilies?(subject: string, clientId: string): Promise<string[]>;
}

/** RFC 9700 §4.14: refresh tokens are opaque; 32 random bytes are 256 bits. */
export const REFRESH_TOKEN_BYTES = 32;

/** A new opaque refresh token: 256 random bits, base64url (43 characters). */
export function newRefreshToken(): string {
  return randomBytes(REFRESH_TOKEN_BYTES).toString('base64url');
}

/** The stored form of a refresh token: its SHA-256, so a store dump holds no usable token. */
export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}

/** In-memory users, keyed by normalized username. */
export class MemoryUserStore implements UserStore {
  readonly #users = new Map<string, UserRecord>();

  /** Adds or replaces a user; `passwordHash` comes from hashPassword(). */
  async add(user: Readonly<UserRecord & { username: string }>): Promise<void> {
    const { username, ...record } = user;
    checkUsername(username);
    this.#users.set(normalizeUsername(username), record);
  }

  async findByUsername(username: string): Promise<UserRecord | undefined> {
    return this.#users.get(normalizeUsername(username));
  }

  async updatePasswordHash(update: Readonly<PasswordHashUpdate>): Promise<void> {
    const key = normalizeUsername(update.username);
    const user = this.#users.get(key);
    if (user?.passwordHash === update.previousHash) this.#users.set(key, { ...user, passwordHash: update.passwordHash });
  }
}

/** In-memory clients, each checked as it is registered (client-registration.ts). */
export class MemoryClientStore implements RegisteredClientStore {
  readonly #clients = new Map<string, RegisteredClient>();

  /** Adds or replaces a client; give `secret` (hashed here) or `secretHash`. A wrong registration rejects with ConfigurationError. */
  async add(client: ClientRegistration): Promise<void> {
    const record = registerClient('MemoryClientStore.add', client);
    this.#clients.set(record.id, record);
  }

  async findById(clientId: string): Promise<RegisteredClient | undefined> {
    return this.#clients.get(clientId);
  }
}

interface MemoryFamily {
  readonly grant: RefreshFamily;
  current: string;
  /** The last `rememberedTokens` rotated hashes, newest first. */
  readonly previous: string[];
  expiresAt: number;
  /** When the last rotation happened (ms since the epoch); 0 before the first. */
  rotatedAt: number;
  /** What the last rotation issued (given to rotate()), answered to its retry. */
  issued: string | undefined;
  /** Whether the last rotation was retried, and the one before it. */
  retried: boolean;
  priorRetried: boolean;
}

/**
 * How many rotated refresh tokens of a family are remembered by default, so
 * that presenting one again is recognised as reuse and revokes the family
 * (RFC 9700 §4.14.2). Bounds a family's memory (and its Redis keys) whatever
 * the number of rotations. A token older than that is refused as unknown
 * (`invalid`): it never works again, but it no longer revokes its family.
 */
export const REMEMBERED_REFRESH_TOKENS = 16;

/** The range of the refresh-token stores' `rememberedTokens` option. */
export const REMEMBERED_REFRESH_TOKENS_RANGE = { min: 1, max: 1000 } as const;

export interface MemoryRefreshTokenStoreOptions {
  /**
   * How many rotated tokens of each family are remembered, so that their
   * reuse revokes the family; older ones are refused without revoking it.
   * From 1 to 1000. Default: `16`.
   */
  rememberedTokens?: number;
  /**
   * How often expired families are swept out of memory, in milliseconds. An
   * expired family never answers before the sweep either. Default: `60000`.
   */
  sweepIntervalMs?: number;
}

/** The default sweep interval of MemoryRefreshTokenStore, in milliseconds. */
export const DEFAULT_REFRESH_SWEEP_INTERVAL_MS = 60_000;

/** The grace's rules (refresh-grace.ts): the token rotated last, its successor unused, in time, once, not twice in a row. */
function isRetry(family: MemoryFamily, tokenHash: string, nextHash: string, graceMs: number): boolean {
  return (
    family.previous[0] === tokenHash &&
    family.current === nextHash &&
    Date.now() - family.rotatedAt < graceMs &&
    !family.retried &&
    !family.priorRetried
  );
}

/**
 * In-memory refresh-token families for one process. Rotation is atomic
 * because it runs without awaiting between its check and its change.
 *
 * Memory is bounded by live families, not by rotations: a family keeps its
 * current token hash and the last `rememberedTokens` (16) rotated ones, and
 * only those point back to it. Families are forgotten when revoked, and
 * expired ones are swept on an unref'd timer (it never keeps the process
 * alive; `close()` stops it).
 */
export class MemoryRefreshTokenStore implements RefreshTokenStore {
  // Token hash → family id, for the current and remembered tokens of live families.
  readonly #familyOf = new Map<string, string>();
  readonly #families = new Map<string, MemoryFamily>();
  // Subject → client id → ids of its live families: what a withdrawn consent revokes. Kept by #forget().
  readonly #byClient = new Map<string, Map<string, Set<string>>>();
  readonly #timer: NodeJS.Timeout;
  readonly #remembered: number;

  constructor(options?: Readonly<MemoryRefreshTokenStoreOptions>) {
    const given = readOptions<MemoryRefreshTokenStoreOptions>('MemoryRefreshTokenStore', options, [
      'rememberedTokens',
      'sweepIntervalMs',
    ]);
    this.#remembered = checkInteger(
      'MemoryRefreshTokenStore',
      'rememberedTokens',
      given.rememberedTokens ?? REMEMBERED_REFRESH_TOKENS,
      REMEMBERED_REFRESH_TOKENS_RANGE,
    );
    const sweepIntervalMs = checkInteger(
      'MemoryRefreshTokenStore',
      'sweepIntervalMs',
      given.sweepIntervalMs ?? DEFAULT_REFRESH_SWEEP_INTERVAL_MS,
      { min: 1, max: 2 ** 31 - 1 },
    );
    this.#timer = setInterval(() => this.sweep(), sweepIntervalMs);
    this.#timer.unref();
  }

  async create(family: RefreshFamily, tokenHash: string, expiresAt: number): Promise<void> {
    this.#forget(family.familyId);
    const { familyId, subject, clientId, scopes, jkt } = family;
    this.#families.set(familyId, {
      grant: jkt === undefined ? { familyId, subject, clientId, scopes } : { familyId, subject, clientId, scopes, jkt },
      current: tokenHash,
      previous: [],
      expiresAt,
      rotatedAt: 0,
      issued: undefined,
      retried: false,
      priorRetried: false,
    });
    this.#familyOf.set(tokenHash, familyId);
    if (clientId !== undefined) this.#indexFamily(subject, clientId, familyId);
  }

  async find(tokenHash: string): Promise<FoundFamily | undefined> {
    const family = this.#live(tokenHash);
    return family === undefined ? undefined : { ...family.grant, current: family.current === tokenHash };
  }

  async rotate(tokenHash: string, nextHash: string, expiresAt: number, graceMs = 0, issued?: string): Promise<RotateResult> {
    const familyId = this.#familyOf.get(tokenHash);
    const family = familyId === undefined ? undefined : this.#families.get(familyId);
    if (familyId === undefined || family === undefined) return { status: 'invalid' };
    if (family.expiresAt <= Date.now()) {
      this.#forget(familyId);
      return { status: 'invalid' };
    }
    if (family.current !== tokenHash) {
      if (graceMs > 0 && isRetry(family, tokenHash, nextHash, graceMs)) {
        family.retried = true;
        return family.issued === undefined
          ? { status: 'retried', family: family.grant }
          : { status: 'retried', family: family.grant, issued: family.issued };
      }
      this.#forget(familyId);
      return { status: 'reused', familyId };
    }
    family.previous.unshift(tokenHash);
    if (family.previous.length > this.#remembered) this.#familyOf.delete(family.previous.pop() as string);
    family.current = nextHash;
    family.expiresAt = expiresAt;
    family.rotatedAt = Date.now();
    family.issued = issued;
    family.priorRetried = family.retried;
    family.retried = false;
    this.#familyOf.set(nextHash, familyId);
    return { status: 'rotated', family: family.grant };
  }

  async revokeByTokenHash(tokenHash: string): Promise<boolean> {
    const family = this.#live(tokenHash);
    if (family === undefined) return false;
    this.#forget(family.grant.familyId);
    return true;
  }

  async revokeFamily(familyId: string): Promise<void> {
    this.#forget(familyId);
  }

  async revokeClientFamilies(subject: string, clientId: string): Promise<string[]> {
    const ids = [...(this.#byClient.get(subject)?.get(clientId) ?? [])];
    for (const familyId of ids) this.#forget(familyId);
    return ids;
  }

  /** How many families are held, expired ones not yet swept included. */
  get families(): number {
    return this.#families.size;
  }

  /** How many token hashes point to a family: at most `rememberedTokens` + 1 per family. */
  get tokens(): number {
    return this.#familyOf.size;
  }

  /** Drops every expired family. Runs on its own timer; callable at any time. */
  sweep(): void {
    const now = Date.now();
    for (const [familyId, family] of this.#families) if (family.expiresAt <= now) this.#forget(familyId);
  }

  /** Stops the sweep timer and forgets every family. */
  close(): void {
    clearInterval(this.#timer);
    this.#families.clear();
    this.#familyOf.clear();
    this.#byClient.clear();
  }

  /** Indexes a family under its user and client, for revokeClientFamilies(). */
  #indexFamily(subject: string, clientId: string, familyId: string): void {
    const clients = this.#byClient.get(subject) ?? new Map<string, Set<string>>();
    const ids = clients.get(clientId) ?? new Set<string>();
    ids.add(familyId);
    clients.set(clientId, ids);
    this.#byClient.set(subject, clients);
  }

  #live(tokenHash: string): MemoryFamily | undefined {
    const familyId = this.#familyOf.get(tokenHash);
    const family = familyId === undefined ? undefined : this.#families.get(familyId);
    return family === undefined || family.expiresAt <= Date.now() ? undefined : family;
  }

  // A revoked family is dropped whole; its old hashes then answer `invalid`.
  #forget(familyId: string): void {
    const family = this.#families.get(familyId);
    if (family === undefined) return;
    this.#families.delete(familyId);
    this.#familyOf.delete(family.current);
    for (const hash of family.previous) this.#familyOf.delete(hash);
    const { subject, clientId } = family.grant;
    if (clientId === undefined) return;
    // The index holds live families only, so it is bounded as the families are.
    const clients = this.#byClient.get(subject);
    const ids = clients?.get(clientId);
    ids?.delete(familyId);
    if (ids?.size === 0) clients?.delete(clientId);
    if (clients?.size === 0) this.#byClient.delete(subject);
  }
}
