import type { Request } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';

// One reading of a client address for everything that counts by it (the rate
// limiter, the sign-in guard), so that one address is one identity for both.

/**
 * The identity of a request's client address: `req.ip` (else the socket's
 * address) through express-rate-limit's `ipKeyGenerator`, so that an IPv6
 * client counts by its /56 block and an IPv4-mapped address as its IPv4
 * address.
 */
export const clientAddressKey = (req: Pick<Request, 'ip' | 'socket'>): string =>
  ipKeyGenerator(req.ip ?? req.socket?.remoteAddress ?? '');
