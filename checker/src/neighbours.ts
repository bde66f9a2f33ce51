import type { CauseId } from './causes.js';
import type { Exchange } from './probe.js';

/**
 * Who produced a value the conventions never set: the common middlewares an
 * existing app already runs, recognised by what they send with their
 * defaults, so that a finding blames them rather than a middleware of this
 * package that is mounted and does its part.
 */

/** Headers helmet() (8.x) sends with its defaults, where the conventions ask for another value or none. */
export const HELMET_DEFAULTS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self';base-uri 'self';font-src 'self' https: data:;form-action 'self';frame-ancestors 'self';img-src 'self' data:;object-src 'none';script-src 'self';script-src-attr 'none';style-src 'self' https: 'unsafe-inline';upgrade-insecure-requests",
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-frame-options': 'SAMEORIGIN',
  // Only helmet sends these two: no convention names them.
  'x-download-options': 'noopen',
  'origin-agent-cluster': '?1',
};

/** Whether `name` on `exchange` holds helmet's default value. */
export const isHelmetDefault = (exchange: Exchange, name: string): boolean => {
  const value = exchange.headers[name];
  return value !== undefined && value === HELMET_DEFAULTS[name];
};

/**
 * A preflight answered by the `cors` package with its defaults: 204 with no
 * `Content-Type` (the conventions ask for 200 and `text/plain`), with its
 * `Access-Control-Allow-Methods`. corsPolicy() never answers so.
 */
export const isCorsPackagePreflight = (preflight: Exchange): boolean =>
  preflight.method === 'OPTIONS' &&
  preflight.status === 204 &&
  preflight.headers['content-type'] === undefined &&
  preflight.headers['access-control-allow-methods'] !== undefined;

/**
 * The cause of a wrong or extra header on `exchange`: helmet's defaults when
 * the values are helmet's own; the `cors` package when it answered this
 * preflight itself, in front, so that the conventions never saw it.
 */
export function headerCause(exchange: Exchange | undefined, names: readonly string[]): CauseId | undefined {
  if (exchange === undefined) return undefined;
  if (names.length > 0 && names.every((name) => isHelmetDefault(exchange, name))) return 'helmet-defaults';
  return isCorsPackagePreflight(exchange) ? 'cors-package' : undefined;
}
