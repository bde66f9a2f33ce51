import { hash } from 'node:crypto';

/**
 * What a CounterStore counts under: the store key of an identity within a
 * policy. The rate limiter and the sign-in guard both count with it.
 */

/** Bytes kept of the SHA-256 digest in a store key: 96 bits, written as 16 base64 characters. */
const STORE_KEY_DIGEST_BYTES = 12;

/**
 * The store key of an identity within a policy: `<policy>:{<digest>}`, an
 * unkeyed SHA-256 digest of the identity cut to 96 bits: fixed and small
 * whatever a client sends, free of raw ids in Redis, and the same on every
 * instance whatever their secrets, so a shared store counts one identity as
 * one. The digest is the key's Redis Cluster hash tag: the keys of one
 * identity in every policy (an anonymous caller is counted by its address
 * in both) share a slot, so one script counts them together on a cluster
 * too (docs/performance.md).
 */
// The digest is encoded from a buffer, not sliced from a longer string: a
// V8 slice would keep the whole 44-character string alive in the memory
// store (about 6 MB more at 100,000 keys).
export const storeKeyOf = (policyName: string, identity: string): string =>
  `${policyName}:{${hash('sha256', identity, 'buffer').toString('base64', 0, STORE_KEY_DIGEST_BYTES)}}`;
