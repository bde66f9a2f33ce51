import { randomBytes } from 'node:crypto';
import { formatPasswordHash } from './password-hash-format.js';

/**
 * What an unknown username is checked against, so that it costs what a
 * known one costs and the two cannot be told apart by time
 * (docs/password-hashes.md#unknown-usernames). bcrypt's time is set by the
 * cost alone, so the stand-in takes the cost most of the recently verified
 * stored hashes have, starting at `passwordCost` until a known user signs in.
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

/** How many of the latest stored hashes' costs the stand-in's cost is chosen from. */
export const RECENT_COSTS = 32;

/**
 * The cost unknown usernames are checked at: the most frequent among the
 * costs of the last RECENT_COSTS stored hashes verified (the latest of those
 * tied), `passwordCost` before the first. The most frequent, not simply the
 * latest: a caller who signs in to an account of their own cannot set the
 * cost of the next check with one sign-in and then time a username against it.
 */
export class UnknownUserCost {
  #cost: number;
  readonly #recent: number[] = [];
  readonly #counts = new Map<number, number>();

  constructor(initialCost: number) {
    this.#cost = initialCost;
  }

  /** The cost of the next unknown username's check. */
  get cost(): number {
    return this.#cost;
  }

  /** Counts the cost of a stored hash about to be verified. */
  follow(storedCost: number): void {
    this.#recent.push(storedCost);
    this.#counts.set(storedCost, (this.#counts.get(storedCost) ?? 0) + 1);
    if (this.#recent.length > RECENT_COSTS) {
      const dropped = this.#recent.shift() as number;
      this.#counts.set(dropped, (this.#counts.get(dropped) as number) - 1);
    }
    let best = storedCost;
    for (let i = this.#recent.length - 1; i >= 0; i--) {
      const cost = this.#recent[i] as number;
      if ((this.#counts.get(cost) as number) > (this.#counts.get(best) as number)) best = cost;
    }
    this.#cost = best;
  }

  /** A stand-in hash at the current cost. */
  hash(): string {
    return unknownUserHash(this.#cost);
  }
}
