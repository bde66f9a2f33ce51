import type { RequestHandler, Response } from 'express';
import { checkFunction, checkInteger, invalidOption, readOptions, refuseHintedOptions } from '../config/options.js';
import { setReadStep } from '../http/json-output/writer.js';
import { removeResponseHeader, setHeadDefaults, setResponseHeader } from '../http/response-headers.js';
import { CACHE_CONTROL_NO_CACHE, CACHE_CONTROL_NO_STORE, CACHE_CONTROL_SENSITIVE } from '../http/spec.js';
import { conditionalGetStep } from './conditional-get.js';
import { httpDate } from './entity-tag.js';

// The conventions' Cache-Control values live in the leaf layer (src/http/spec.ts);
// exported here too, where they always were.
export { CACHE_CONTROL_NO_CACHE, CACHE_CONTROL_NO_STORE, CACHE_CONTROL_SENSITIVE };

/**
 * One of the Cache-Control intents of docs/conventions.md rule 7.2:
 * - `'no-cache'`: "Client must not reuse without checking";
 * - `'no-store'`: "Confidential data, no storage by clients or proxies";
 * - `{ maxAgeSeconds }`: "Cache for a period": `public, max-age=<seconds>`;
 * - `{ nextUpdate }`: data updated at fixed times: `public, max-age=` the
 *   seconds until the next update, plus `Expires` at that instant (rule 7.3:
 *   `Expires` only for data updated at fixed times; rule 7.1: `Cache-Control`
 *   wins over `Expires`, so both name the same instant).
 */
export type CacheIntent =
  | typeof CACHE_CONTROL_NO_CACHE
  | typeof CACHE_CONTROL_NO_STORE
  | { readonly maxAgeSeconds: number }
  | { readonly nextUpdate: (now: Date) => Date };

type Compiled = { readonly value: string } | { readonly nextUpdate: (now: Date) => Date };

const compile = (factory: string, intent: unknown): Compiled => {
  if (intent === CACHE_CONTROL_NO_CACHE || intent === CACHE_CONTROL_NO_STORE) return { value: intent };
  if (typeof intent === 'object' && intent !== null && !Array.isArray(intent)) {
    const keys = Object.keys(intent);
    if (keys.length === 1 && keys[0] === 'maxAgeSeconds') {
      const seconds = checkInteger(factory, 'maxAgeSeconds', (intent as { maxAgeSeconds: unknown }).maxAgeSeconds, { min: 0 });
      return { value: `public, max-age=${seconds}` };
    }
    // A number's unit is in its name: refused with the name to use.
    if (keys.includes('maxAge')) refuseHintedOptions(factory, intent, { maxAge: 'It is now `maxAgeSeconds` (seconds).' });
    if (keys.length === 1 && keys[0] === 'nextUpdate') {
      return {
        nextUpdate: checkFunction<(now: Date) => Date>(factory, 'nextUpdate', (intent as { nextUpdate: unknown }).nextUpdate),
      };
    }
  }
  return invalidOption(factory, 'intent', intent, "'no-cache', 'no-store', { maxAgeSeconds } or { nextUpdate: (now) => Date }");
};

const apply = (res: Response, compiled: Compiled): void => {
  if (res.headersSent) return;
  if ('value' in compiled) {
    setResponseHeader(res, 'Cache-Control', compiled.value);
    removeResponseHeader(res, 'Expires');
    return;
  }
  const now = new Date();
  const next = compiled.nextUpdate(now);
  // Rounded down: a cached copy never outlives the update it waits for.
  const seconds = Math.max(0, Math.floor((next.getTime() - now.getTime()) / 1000));
  setResponseHeader(res, 'Cache-Control', `public, max-age=${seconds}`);
  setResponseHeader(res, 'Expires', httpDate(next));
};

/**
 * Route middleware stating how the response may be cached; it replaces the
 * `no-store, max-age=0` default that caching() put on every response.
 * The header value is computed once, here.
 */
export function cacheControl(intent: CacheIntent): RequestHandler {
  const compiled = compile('cacheControl', intent);
  return function cacheControlMiddleware(_req, res, next) {
    apply(res, compiled);
    next();
  };
}

/** The same as cacheControl(), from inside a handler (for example after a lookup). */
export function setCacheControl(res: Response, intent: CacheIntent): void {
  apply(res, compile('setCacheControl', intent));
}

// RFC 9110 §5.1: a field name is a token.
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Route middleware that appends request header names to `Vary` (docs/conventions.md
 * rule 7.5: sent when the representation depends on request headers). Appended,
 * never overwritten, through Express's `res.vary()` (the `vary` package), so
 * it composes with CORS's `Vary: Origin`.
 */
export function varyOn(fields: readonly string[]): RequestHandler {
  if (!Array.isArray(fields) || fields.length === 0 || fields.some((f) => typeof f !== 'string' || !FIELD_NAME.test(f))) {
    invalidOption('varyOn', 'fields', fields, "a non-empty array of header names such as ['Accept-Language']");
  }
  const names = [...fields];
  return function varyOnMiddleware(_req, res, next) {
    if (!res.headersSent) for (const name of names) res.vary(name);
    next();
  };
}

/** Options of caching(). */
export interface CachingOptions {
  /**
   * How JSON bodies of GET and HEAD 200 answers are tagged when the route set
   * no `ETag` of its own: `'strong'` (a SHA-1 of the body), `'weak'`, or
   * `false` for no tag of ours (a tag the route sets still answers 304).
   * Default: `'strong'`.
   */
  etag?: 'strong' | 'weak' | false;
  /**
   * `Cache-Control` of every response that states no caching of its own; a
   * route's cacheControl() replaces it. `false` sets none.
   * Default: `'no-store, max-age=0'` (docs/conventions.md rule 11.8).
   */
  defaultCacheControl?: string | false;
}

/**
 * Conditional GET and safe caching defaults (docs/conventions.md section 7):
 * - every response gets `Cache-Control: no-store, max-age=0` by default, so
 *   nothing is stored unless a route (or serve-static, or `res.sendFile`'s
 *   `maxAge`) says otherwise by the time the head is written;
 * - JSON bodies of GET/HEAD 200 answers get a strong `ETag`, computed once
 *   from the bytes sent, unless the route set its own (setValidators());
 * - Express's freshness check (`req.fresh`, the `fresh` package) turns a
 *   matching `If-None-Match` / `If-Modified-Since` into 304 with an empty body.
 *
 * The last two are one step, conditionalGetStep(), that caching() hands to
 * the JSON writer (src/http/json-output/writer.ts) on each response; the
 * writer calls it for a GET or HEAD 200 before writing. Writes are never tagged by
 * the library: a PUT/PATCH/POST answer carries the tag its route set, or none.
 */
export function caching(options?: Readonly<CachingOptions>): RequestHandler {
  const given = readOptions<CachingOptions>('caching', options, ['etag', 'defaultCacheControl']);
  const etag = given.etag ?? 'strong';
  if (etag !== 'strong' && etag !== 'weak' && etag !== false) {
    invalidOption('caching', 'etag', etag, "'strong', 'weak' or false");
  }
  const fallback = given.defaultCacheControl ?? CACHE_CONTROL_SENSITIVE;
  if (fallback !== false && (typeof fallback !== 'string' || fallback.trim() === '' || /[\r\n]/.test(fallback))) {
    invalidOption('caching', 'defaultCacheControl', fallback, 'a Cache-Control value or false');
  }
  const step = conditionalGetStep(etag === false ? undefined : etag);
  // A default: written with the head unless the app, a neighbour (serve-static,
  // res.sendFile's maxAge) or a route set Cache-Control by then.
  const defaults: readonly string[] | undefined = fallback === false ? undefined : ['Cache-Control', fallback];
  return function cachingMiddleware(_req, res, next) {
    if (defaults !== undefined) setHeadDefaults(res, defaults);
    setReadStep(res, step);
    next();
  };
}
