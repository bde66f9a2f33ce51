import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The token endpoint's state behind small interfaces (DESIGN.md principle 5):
 * users, registered clients and refresh-token families. The in-memory
 * implementations here serve one process; the Redis ones
 * (redis-stores.ts) let several instances share logins, rotation and
 * revocation.
 */

/** The grant types the token endpoint answers. */
export const GRANT_TYPES = ['password', 'refresh_token'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

/**
 * Usernames are compared in one canonical spelling: Unicode NFKC, surrounding
 * white space dropped, lower case. So "Alice", " alice " and "ＡＬＩＣＥ" are
 * one account and one brute-force counter.
 */
export function normalizeUsername(username: string): string {
  return username.normalize('NFKC').trim().toLowerCase();
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

export interface UserStore {
  /** The user whose normalized username is `username`, or undefined. */
  findByUsername(username: string): Promise<UserRecord | undefined>;
}

/** A registered application (SPEC.md "Client authentication"). */
export interface ClientRecord {
  readonly id: string;
  /** SHA-256 of the client secret (hashClientSecret()); absent for a public client. */
  readonly secretHash?: string;
  /** Grants this client may use; absent: all. */
  readonly grants?: readonly GrantType[];
  /** Scopes this client may ask for; absent: all known scopes. */
  readonly scopes?: readonly string[];
  /** A blocked client is refused (SPEC.md: "block applications that are not allowed"). */
  readonly blocked?: boolean;
}

export interface ClientStore {
  findById(clientId: string): Promise<ClientRecord | undefined>;
}

/**
 * Client secrets are high-entropy values issued by the service, so one
 * SHA-256 pass is enough to keep the stored form useless to a reader (unlike
 * passwords, which need bcrypt).
 */
export function hashClientSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}

const DUMMY_SECRET_HASH = hashClientSecret(randomBytes(32).toString('base64url'));

/**
 * Whether `secret` matches the stored hash, in constant time. Compared as two
 * SHA-256 digests of equal length, so the time says nothing about the secret.
 * An absent hash is compared against a dummy, so it costs the same.
 */
export function clientSecretMatches(secret: string, secretHash: string | undefined): boolean {
  const given = Buffer.from(hashClientSecret(secret));
  const stored = Buffer.from(secretHash ?? DUMMY_SECRET_HASH);
  const equal = given.length === stored.length && timingSafeEqual(given, stored);
  return equal && secretHash !== undefined;
}

/** What a refresh-token family grants: fixed at the password grant, kept through every rotation. */
export interface RefreshFamily {
  readonly familyId: string;
  readonly subject: string;
  readonly clientId: string | undefined;
  /** The scopes granted at sign-in; a refresh may narrow the access token's, never widen. */
  readonly scopes: readonly string[];
}

/** The outcome of presenting a refresh token. */
export type RotateResult =
  /** It was the family's current token: it is now replaced by the new one. */
  | { readonly status: 'rotated'; readonly family: RefreshFamily }
  /** It was an older token of a live family: RFC 9700 §4.14.2, the whole family is now revoked. */
  | { readonly status: 'reused'; readonly familyId: string }
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
  find(tokenHash: string): Promise<RefreshFamily | undefined>;
  /**
   * Atomically: if `tokenHash` is its family's current, unexpired token,
   * makes `nextHash` current (valid until `expiresAt`) and answers `rotated`;
   * if it is an older token of a live family, revokes the family (`reused`);
   * otherwise `invalid`. Of concurrent calls with one token, at most one
   * answers `rotated`.
   */
  rotate(tokenHash: string, nextHash: string, expiresAt: number): Promise<RotateResult>;
  /** Revokes the family of the token with this hash (logout); false when none is live. */
  revokeByTokenHash(tokenHash: string): Promise<boolean>;
  /** Revokes a family by id. */
  revokeFamily(familyId: string): Promise<void>;
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
    this.#users.set(normalizeUsername(username), record);
  }

  async findByUsername(username: string): Promise<UserRecord | undefined> {
    return this.#users.get(normalizeUsername(username));
  }
}

/** In-memory clients. */
export class MemoryClientStore implements ClientStore {
  readonly #clients = new Map<string, ClientRecord>();

  /** Adds or replaces a client; give `secret` (hashed here) or `secretHash`. */
  async add(client: Readonly<Omit<ClientRecord, 'secretHash'> & { secret?: string; secretHash?: string }>): Promise<void> {
    const { secret, ...record } = client;
    this.#clients.set(client.id, secret === undefined ? record : { ...record, secretHash: hashClientSecret(secret) });
  }

  async findById(clientId: string): Promise<ClientRecord | undefined> {
    return this.#clients.get(clientId);
  }
}

interface MemoryFamily extends RefreshFamily {
  current: string;
  expiresAt: number;
}

/**
 * In-memory refresh-token families for one process. Rotation is atomic
 * because it runs without awaiting between its check and its change.
 */
export class MemoryRefreshTokenStore implements RefreshTokenStore {
  // Every hash ever issued points to its family, so an old one is recognised.
  readonly #familyOf = new Map<string, string>();
  readonly #families = new Map<string, MemoryFamily>();
  readonly #hashesOf = new Map<string, string[]>();
  #created = 0;

  async create(family: RefreshFamily, tokenHash: string, expiresAt: number): Promise<void> {
    // Expired families are dropped now and then, so memory stays bounded by live sign-ins.
    if (++this.#created % 1024 === 0) this.#sweep();
    this.#families.set(family.familyId, { ...family, current: tokenHash, expiresAt });
    this.#familyOf.set(tokenHash, family.familyId);
    this.#hashesOf.set(family.familyId, [tokenHash]);
  }

  async find(tokenHash: string): Promise<RefreshFamily | undefined> {
    const familyId = this.#familyOf.get(tokenHash);
    const family = familyId === undefined ? undefined : this.#families.get(familyId);
    if (!family || family.expiresAt <= Date.now()) return undefined;
    const { current: _current, expiresAt: _expiresAt, ...granted } = family;
    return granted;
  }

  async rotate(tokenHash: string, nextHash: string, expiresAt: number): Promise<RotateResult> {
    const familyId = this.#familyOf.get(tokenHash);
    const family = familyId === undefined ? undefined : this.#families.get(familyId);
    if (familyId === undefined || family === undefined) return { status: 'invalid' };
    if (family.expiresAt <= Date.now()) {
      this.#forget(familyId);
      return { status: 'invalid' };
    }
    if (family.current !== tokenHash) {
      this.#forget(familyId);
      return { status: 'reused', familyId };
    }
    family.current = nextHash;
    family.expiresAt = expiresAt;
    this.#familyOf.set(nextHash, familyId);
    this.#hashesOf.get(familyId)?.push(nextHash);
    const { current: _current, expiresAt: _expiresAt, ...granted } = family;
    return { status: 'rotated', family: granted };
  }

  async revokeByTokenHash(tokenHash: string): Promise<boolean> {
    const familyId = this.#familyOf.get(tokenHash);
    if (familyId === undefined || !this.#families.has(familyId)) return false;
    this.#forget(familyId);
    return true;
  }

  async revokeFamily(familyId: string): Promise<void> {
    this.#forget(familyId);
  }

  #sweep(): void {
    const now = Date.now();
    for (const [familyId, family] of this.#families) if (family.expiresAt <= now) this.#forget(familyId);
  }

  // A revoked family is dropped whole; its old hashes then answer `invalid`.
  #forget(familyId: string): void {
    this.#families.delete(familyId);
    for (const hash of this.#hashesOf.get(familyId) ?? []) this.#familyOf.delete(hash);
    this.#hashesOf.delete(familyId);
  }
}
