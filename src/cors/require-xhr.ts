import type { RequestHandler } from 'express';
import { readOptions } from '../config/options.js';
import { apiError } from '../errors/api-error.js';
import { refuse } from '../errors/refuse.js';

/**
 * the conventions' "Cross-origin (CORS)", Browser-script-only endpoints: "May require
 * `X-Requested-With: XMLHttpRequest`; a request that lacks it is refused."
 */
export const XHR_HEADER = 'x-requested-with' as const;
export const XHR_VALUE = 'XMLHttpRequest' as const;

/** Options of requireXhr(). It has none yet; the object is kept for growth. */
export type RequireXhrOptions = Readonly<Record<string, never>>;

const XHR_CONVENTION = { rule: '8.4', middleware: 'requireXhr' } as const;

/**
 * Marks an endpoint browser-script-only: without `X-Requested-With:
 * XMLHttpRequest` the request is refused with 403 JSON (code 40301), by
 * errorHandler() when one is mounted after it, else by this middleware
 * itself (refuse()).
 * Why it protects: a page on another site can make a browser send a plain
 * GET with the user's cookies (a `<script src>` or a form), but it cannot add
 * a custom header without a CORS preflight, which the CORS policy refuses
 * (the conventions' "JSON output escaping" rule 4).
 */
export function requireXhr(options?: RequireXhrOptions): RequestHandler {
  readOptions<Record<string, never>>('requireXhr', options, []);
  return function requireXhrMiddleware(req, res, next) {
    if (req.headers[XHR_HEADER] === XHR_VALUE) next();
    else refuse(req, res, next, apiError('xhrRequired'), XHR_CONVENTION);
  };
}
