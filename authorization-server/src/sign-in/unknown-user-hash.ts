import { randomBytes } from 'node:crypto';
import { formatPasswordHash } from './password-hash-format.js';

/**
 * What an unknown username is checked against, so that it costs what a
 * known one costs and the two cannot be told apart by time
 * (docs/password-hashes.md#unknown-usernames). bcrypt's time is set by the
 * cost alone, so the stand-in follows the cost of the stored hash verified
 * last, starting at `passwordCost` until a known user signs in.
 *
 * The stand-in is made, not hashed: a well-formed hash with a random salt
 * and a random digest takes a full bcrypt computation to compare and matches
 * no password (its digest would have to be guessed, 2^-184). So nothing is
 * hashed at start-up, and no start-up work weighs on the pool's measure of a
 * task's time.
 */

// bcrypt's own base64 alphabet: 64 characters, so a random byte's low 6 bits pick one evenly.
const BCRYPT_ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** 22 characters of salt and 31 of digest. */
const SALT_AND_DIGEST_LENGTH = 53;

/** A well-formed version-1 hash of no password, at `cost`. */
export function unknownUserHash(cost: number): string {
  let saltAndDigest = '';
  for (const byte of randomBytes(SALT_AND_DIGEST_LENGTH)) saltAndDigest += BCRYPT_ALPHABET[byte & 63];
  return formatPasswordHash(`$2b$${String(cost).padStart(2, '0')}$${saltAndDigest}`);
}

/** The cost unknown usernames are checked at: that of the stored hash verified last, `passwordCost` before the first. */
export class UnknownUserCost {
  #cost: number;

  constructor(initialCost: number) {
    this.#cost = initialCost;
  }

  /** The cost of the next unknown username's check. */
  get cost(): number {
    return this.#cost;
  }

  /** Follows the cost of a stored hash about to be verified. */
  follow(storedCost: number): void {
    this.#cost = storedCost;
  }

  /** A stand-in hash at the current cost. */
  hash(): string {
    return unknownUserHash(this.#cost);
  }
}
