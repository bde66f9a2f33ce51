import type { RequestHandler } from 'express';
import { invalidOption, readOptions } from '../config/options.js';
import { setResponseHeader } from '../http/response-headers.js';

/**
 * the conventions' "Security response headers", "Data clearing on logout":
 * "`Clear-Site-Data` with the values cache, cookies, storage (each a quoted
 * string)".
 */
export const CLEAR_SITE_DATA_TYPES = ['cache', 'cookies', 'storage'] as const;

// The types the Clear-Site-Data specification defines (W3C Clear Site Data §3.1).
const KNOWN_TYPES = new Set([
  'cache',
  'cookies',
  'storage',
  'executionContexts',
  'clientHints',
  'prefetchCache',
  'prerenderCache',
  '*',
]);

/** Options of clearSiteData(). */
export interface ClearSiteDataOptions {
  /** What the browser clears. Default: `['cache', 'cookies', 'storage']`. */
  types?: readonly string[];
}

/**
 * For sign-out routes: `Clear-Site-Data: "cache", "cookies", "storage"`, so
 * the browser drops what the session left behind. The value is built once.
 */
export function clearSiteData(options?: Readonly<ClearSiteDataOptions>): RequestHandler {
  const given = readOptions<ClearSiteDataOptions>('clearSiteData', options, ['types']);
  const types = given.types ?? CLEAR_SITE_DATA_TYPES;
  if (!Array.isArray(types) || types.length === 0 || types.some((t) => typeof t !== 'string' || !KNOWN_TYPES.has(t))) {
    invalidOption('clearSiteData', 'types', types, `a non-empty array of ${[...KNOWN_TYPES].join(', ')}`);
  }
  const value = types.map((type) => `"${type}"`).join(', ');
  return function clearSiteDataMiddleware(_req, res, next) {
    setResponseHeader(res, 'Clear-Site-Data', value);
    next();
  };
}
