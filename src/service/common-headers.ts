import type { RequestHandler } from 'express';
import { readOptions } from '../config/options.js';
import { removeAtHead, setDefaultHeaders } from '../http/response-headers.js';
import { NOSNIFF_HEADER, NOSNIFF_VALUE } from '../http/spec.js';

/** Options of commonHeaders(). It has none yet; the object is kept for growth. */
export type CommonHeadersOptions = Readonly<Record<string, never>>;

/**
 * The headers every response carries, whatever else is mounted:
 * - `X-Content-Type-Options: nosniff` (docs/conventions.md rule 6.4);
 * - no `X-Powered-By`: the URI and headers never reveal the implementation
 *   technology (docs/conventions.md rule 3.8 states it for URIs; the same
 *   reasoning applies to headers);
 * - `Date` (rule 2): Node writes it unless `res.sendDate` was turned off, so
 *   this makes sure it stays on.
 */
// A fixed default (src/http/response-headers.ts): set unless set already; a route may replace it.
const DEFAULTS: readonly string[] = [NOSNIFF_HEADER, NOSNIFF_VALUE];
// Removed when the head is written: Express's own (the app's, or a sub-app's
// mounted after the preset) and anyone else's. The app's `x-powered-by`
// setting is left as the app set it (docs/design.md principle 8).
const REMOVED: readonly string[] = ['X-Powered-By'];

export function commonHeaders(options?: CommonHeadersOptions): RequestHandler {
  readOptions<Record<string, never>>('commonHeaders', options, []);
  return function commonHeadersMiddleware(_req, res, next) {
    setDefaultHeaders(res, DEFAULTS);
    removeAtHead(res, REMOVED);
    res.sendDate = true;
    next();
  };
}
