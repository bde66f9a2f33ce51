import { createHmac, randomBytes } from 'node:crypto';

/**
 * Partition keys. the conventions' Limits rule 4 counts per user and per application;
 * the `pk` parameter names the partition a response was counted in.
 *
 * - `pk` never shows the raw user id or client address: it is a keyed hash
 *   (HMAC-SHA-256 cut to 96 bits), so nobody without the secret can test a
 *   guessed address or user name against it.
 * - The store key is not the `pk`: it is an unkeyed digest, the same on
 *   every instance whatever their secrets (storeKeyOf(), src/stores/).
 */

/** Bytes kept of the HMAC in a `pk`: 96 bits, written as 16 base64 characters. */
export const PARTITION_KEY_BYTES = 12;

/**
 * The secret of this process, used when no `partitionSecret` is given. Give
 * instances behind one address one secret, so that their `pk` values agree.
 */
const PROCESS_SECRET = randomBytes(32);

export type PartitionSecret = string | Uint8Array;

/** A function from an identity to its `pk`, bound to one secret. */
export type PartitionHasher = (identity: string) => string;

export function partitionHasher(secret: PartitionSecret = PROCESS_SECRET): PartitionHasher {
  return function partitionKeyOf(identity: string): string {
    return createHmac('sha256', secret).update(identity).digest().toString('base64', 0, PARTITION_KEY_BYTES);
  };
}
