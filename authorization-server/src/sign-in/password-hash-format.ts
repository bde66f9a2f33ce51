import { createHmac } from 'node:crypto';

/**
 * The stored password hash format (docs/password-hashes.md, which states the
 * grammar and the promise): which versions exist, how each one turns a
 * password into bcrypt's input, and whether a stored hash is older than what
 * is written today. Every version ever written stays readable here; a new
 * version is added beside the others, never in their place.
 */

/** The version hashPassword() writes today. */
export const PASSWORD_HASH_VERSION = 1;

/** A plain bcrypt hash of the password itself (another system's, or made before the versioned format). */
export const PLAIN_BCRYPT_VERSION = 0;

/**
 * The start of every hash made by hashPassword(): the version of the scheme,
 * then an ordinary bcrypt hash (`$2b$12$…`) of the password's pre-hash. A
 * stored hash without it is a plain bcrypt hash of the password itself
 * (made before this scheme, or by another tool) and is still verified.
 */
export const PREHASHED_BCRYPT_PREFIX = `$eac-bcrypt-sha384$v=${PASSWORD_HASH_VERSION}`;

// A fixed key per version, not a secret: it only makes the pre-hash differ from
// a plain SHA-384 of the password, so a leaked unsalted SHA-384 list elsewhere
// cannot be tried against these bcrypt hashes directly. Never change a key:
// the hashes of its version are made with it.
const PREHASH_KEYS: ReadonlyMap<number, string> = new Map([[1, 'express-api-conventions password pre-hash v1']]);

// `$2a$`, `$2b$` or `$2y$`, a cost from 04 to 31, then 22 characters of salt and 31 of digest in bcrypt's base64.
const BCRYPT_HASH = /^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;
const VERSIONED = /^\$eac-bcrypt-sha384\$v=([1-9][0-9]{0,5})(\$.*)$/s;

/** A stored hash, read. */
export interface PasswordHashParts {
  /** Its format version: PLAIN_BCRYPT_VERSION for a plain bcrypt hash. */
  readonly version: number;
  /** The bcrypt hash it holds (`$2b$12$…`). */
  readonly bcrypt: string;
  /** That bcrypt hash's cost. */
  readonly cost: number;
}

/** Reads a stored hash; undefined when it is no version this package knows (it never matches). */
export function parsePasswordHash(hash: string): PasswordHashParts | undefined {
  const versioned = VERSIONED.exec(hash);
  const version = versioned ? Number(versioned[1]) : PLAIN_BCRYPT_VERSION;
  if (versioned && !PREHASH_KEYS.has(version)) return undefined;
  const bcrypt = versioned ? (versioned[2] as string) : hash;
  const cost = BCRYPT_HASH.exec(bcrypt)?.[1];
  return cost === undefined ? undefined : { version, bcrypt, cost: Number(cost) };
}

/**
 * What bcrypt is given for `password` in hashes of `version`. A plain bcrypt
 * hash takes the password itself. Version 1 takes HMAC-SHA-384 of all its
 * UTF-8 bytes, base64 (64 ASCII characters): every byte of a password of any
 * length counts, the input fits bcrypt's 72 bytes, and it holds no NUL byte
 * (which some bcrypt implementations stop at); the 384 bits exceed what
 * bcrypt keeps.
 */
export function bcryptInput(password: string, version: number): string {
  const key = PREHASH_KEYS.get(version);
  return key === undefined ? password : createHmac('sha384', key).update(password, 'utf8').digest('base64');
}

/** The stored form of a bcrypt hash of `bcryptInput(password, PASSWORD_HASH_VERSION)`. */
export function formatPasswordHash(bcryptHash: string): string {
  return `${PREHASHED_BCRYPT_PREFIX}${bcryptHash}`;
}

/**
 * Whether a stored hash should be replaced by a new one at the next
 * successful sign-in: an older version (a plain bcrypt hash included) or a
 * cost below `cost`. A higher cost is kept (never weakened), and an unreadable
 * hash is not "outdated": it never matches, so no sign-in could replace it.
 */
export function needsRehash(hash: string, cost: number): boolean {
  const parts = parsePasswordHash(hash);
  return parts !== undefined && (parts.version !== PASSWORD_HASH_VERSION || parts.cost < cost);
}
