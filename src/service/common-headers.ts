import type { RequestHandler } from 'express';
import { readOptions } from '../config/options.js';
import { removeResponseHeader, setDefaultHeaders } from '../http/response-headers.js';
import { NOSNIFF_HEADER, NOSNIFF_VALUE } from '../http/spec.js';

/** Options of commonHeaders(). It has none yet; the object is kept for growth. */
export type CommonHeadersOptions = Readonly<Record<string, never>>;

/**
 * The headers every response carries, whatever else is mounted:
 * - `X-Content-Type-Options: nosniff` (SPEC.md "Common response behaviour" rule 4);
 * - no `X-Powered-By`: the URI and headers never reveal the implementation
 *   technology (SPEC.md "Path rules" rule 8 states it for URIs; the same
 *   reasoning applies to headers);
 * - `Date` (rule 2): Node writes it unless `res.sendDate` was turned off, so
 *   this makes sure it stays on.
 */
// A default (src/http/response-headers.ts): written with the head unless set by then.
const DEFAULTS: readonly string[] = [NOSNIFF_HEADER, NOSNIFF_VALUE];

export function commonHeaders(options?: CommonHeadersOptions): RequestHandler {
  readOptions<Record<string, never>>('commonHeaders', options, []);
  let appSeen: unknown;
  return function commonHeadersMiddleware(req, res, next) {
    // Express sets X-Powered-By on every response before any middleware
    // runs; its setting turned off once, the header is not written only to
    // be removed, and the response's header store stays empty (the cheap
    // path of src/http/response-headers.ts). It is still removed below.
    const app = (req as { app?: { disable?: (setting: string) => unknown } }).app;
    if (app !== appSeen) {
      appSeen = app;
      if (typeof app?.disable === 'function') app.disable('x-powered-by');
    }
    setDefaultHeaders(res, DEFAULTS);
    removeResponseHeader(res, 'X-Powered-By');
    res.sendDate = true;
    next();
  };
}
