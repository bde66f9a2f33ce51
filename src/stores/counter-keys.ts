import { hash } from 'node:crypto';
import type { Request } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';

/**
 * What a CounterStore counts under: the store key of an identity within a
 * policy, and the identity of a client address. The rate limiter and the
 * sign-in guard count with these, so that one address is one identity for
 * both.
 */

/** Bytes kept of the SHA-256 digest in a store key: 96 bits, written as 16 base64 characters. */
const STORE_KEY_DIGEST_BYTES = 12;

/**
 * The store key of an identity within a policy: `<policy>:<digest>`, an
 * unkeyed SHA-256 digest of the identity cut to 96 bits: fixed and small
 * whatever a client sends, free of raw ids in Redis, and the same on every
 * instance whatever their secrets, so a shared store counts one identity as
 * one.
 */
// The digest is encoded from a buffer, not sliced from a longer string: a
// V8 slice would keep the whole 44-character string alive in the memory
// store (about 6 MB more at 100,000 keys).
export const storeKeyOf = (policyName: string, identity: string): string =>
  `${policyName}:${hash('sha256', identity, 'buffer').toString('base64', 0, STORE_KEY_DIGEST_BYTES)}`;

/**
 * The identity of a request's client address: `req.ip` (else the socket's
 * address) through express-rate-limit's `ipKeyGenerator`, so that an IPv6
 * client counts by its /56 block and an IPv4-mapped address as its IPv4
 * address.
 */
export const clientAddressKey = (req: Pick<Request, 'ip' | 'socket'>): string =>
  ipKeyGenerator(req.ip ?? req.socket?.remoteAddress ?? '');
