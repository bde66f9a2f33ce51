import type { Request, RequestHandler } from 'express';
import { checkBoolean, checkFunction, readOptions } from '../config/options.js';
import { apiError } from '../errors/api-error.js';
import { type AfterLookup, afterLookup } from '../http/lookup.js';
import { isSafeMethod } from '../http/spec.js';
import { httpDate, type Validators } from './entity-tag.js';

/**
 * Preconditions on writes (RFC 9110 §13.1 and §13.2.2, RFC 6585 §3). Beyond
 * the conventions, which only shows conditional GET: a PUT, PATCH or DELETE made from
 * a stale read would silently overwrite someone else's change ("lost update"),
 * so a client that sends `If-Match` or `If-Unmodified-Since` gets 412 when the
 * resource changed since it read it, and a route can require one (428).
 */

// The content codings a compressing neighbour (compression, a proxy) may
// add to a body, whose name the body's strong tag then carries (`"x-gzip"`).
const CONTENT_CODINGS = new Set(['gzip', 'x-gzip', 'deflate', 'br', 'zstd', 'compress']);

/** Whether `coding` (lower case) is one content coding a coded entity tag can name. */
export const isContentCoding = (coding: string): boolean => CONTENT_CODINGS.has(coding);

/** Whether `tag` is `"opaque-coding"` for `current` = `"opaque"`, with a known content coding. */
function isCodingOf(tag: string, current: string): boolean {
  const stem = current.slice(0, -1);
  if (tag.length <= current.length + 1 || !tag.startsWith(stem) || tag.charCodeAt(stem.length) !== 0x2d) return false;
  return CONTENT_CODINGS.has(tag.slice(stem.length + 1, -1));
}

/**
 * The entry of an entity-tag list (`If-Match`, `If-None-Match`) that names
 * `current`, or `undefined`. Parsed by hand in one pass, because an entity
 * tag may itself hold a comma (RFC 9110 §8.8.3 `etagc` includes %x2C), so
 * splitting on commas is wrong. `strong`: RFC 9110 §8.8.3.2 strong
 * comparison (neither tag weak); else weak comparison (opaque parts equal).
 * The tag of the same body under a content coding (`"x-gzip"` for `"x"`)
 * names it too: one representation, compressed on the way.
 */
export function matchingEntry(field: string, current: string, strong: boolean): string | undefined {
  const currentWeak = current.startsWith('W/');
  if (strong && currentWeak) return undefined;
  const currentOpaque = currentWeak ? current.slice(2) : current;
  let i = 0;
  const n = field.length;
  while (i < n) {
    const c = field.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x2c) {
      i++;
      continue;
    }
    let weak = false;
    const start = i;
    if (c === 0x57 && field.charCodeAt(i + 1) === 0x2f) {
      weak = true;
      i += 2;
    }
    if (field.charCodeAt(i) !== 0x22) return undefined; // not an entity tag: the field is malformed, nothing matches
    const end = field.indexOf('"', i + 1);
    if (end === -1) return undefined;
    const opaque = field.slice(i, end + 1);
    if ((opaque === currentOpaque || isCodingOf(opaque, currentOpaque)) && !(strong && weak)) return field.slice(start, end + 1);
    i = end + 1;
  }
  return undefined;
}

/** Whether an entity-tag list names `current` (matchingEntry()). */
export const listMatches = (field: string, current: string, strong: boolean): boolean =>
  matchingEntry(field, current, strong) !== undefined;

const parseDate = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
};

const lastModifiedTime = (validators: Validators): number | undefined =>
  validators.lastModified === undefined ? undefined : Date.parse(httpDate(validators.lastModified));

export interface PreconditionCheckOptions {
  /** Answer 428 when the request has neither `If-Match` nor `If-Unmodified-Since`. Default: `false`. */
  required?: boolean;
}

/**
 * Evaluates `If-Match`, `If-Unmodified-Since` and `If-None-Match` of a
 * state-changing request against the resource's current validators, in RFC
 * 9110 §13.2.2's order, and throws the ApiError to answer with: 412
 * `preconditionFailed` when a condition is false, 428 `preconditionRequired`
 * when `required` and the request is unconditional. `current` is `undefined`
 * when the resource does not exist. Safe methods are left to the conditional
 * GET of caching() (304).
 */
export function checkPreconditions(
  req: Request,
  current: Validators | undefined,
  options: Readonly<PreconditionCheckOptions> = {},
): void {
  if (isSafeMethod(req.method)) return;
  const ifMatch = req.headers['if-match'];
  const ifUnmodifiedSince = req.headers['if-unmodified-since'];
  if (options.required === true && ifMatch === undefined && ifUnmodifiedSince === undefined) {
    throw apiError('preconditionRequired');
  }
  // RFC 9110 §13.1.1: "*" is true when a current representation exists; a list
  // is true when it names the current tag under strong comparison.
  if (ifMatch !== undefined) {
    const trimmed = ifMatch.trim();
    const holds =
      trimmed === '*' ? current !== undefined : current?.etag !== undefined && listMatches(trimmed, current.etag, true);
    if (!holds) throw apiError('preconditionFailed', { detail: { header: 'If-Match', current: current?.etag ?? null } });
  } else if (ifUnmodifiedSince !== undefined) {
    // RFC 9110 §13.1.4: only without If-Match; an invalid date is ignored.
    const since = parseDate(ifUnmodifiedSince);
    const modified = current === undefined ? undefined : lastModifiedTime(current);
    if (since !== undefined && (current === undefined || (modified !== undefined && modified > since))) {
      throw apiError('preconditionFailed', { detail: { header: 'If-Unmodified-Since' } });
    }
  }
  // RFC 9110 §13.1.2: on a state-changing method, a matching If-None-Match
  // ("*": any current representation) means the precondition failed.
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch !== undefined && current !== undefined) {
    const trimmed = ifNoneMatch.trim();
    if (trimmed === '*' || (current.etag !== undefined && listMatches(trimmed, current.etag, false))) {
      throw apiError('preconditionFailed', { detail: { header: 'If-None-Match' } });
    }
  }
}

/** Options of preconditions(). */
export interface PreconditionsOptions {
  /**
   * Finds the current validators of the addressed resource (the same ETag and
   * Last-Modified its GET sends), or `undefined` when it does not exist.
   * Required: no default.
   */
  current: (req: Request) => Validators | undefined | Promise<Validators | undefined>;
  /** Refuse unconditional writes with 428 Precondition Required (RFC 6585 §3). Default: `false`. */
  required?: boolean;
}

/**
 * Route middleware for PUT, PATCH and DELETE: 412 when the client's
 * `If-Match` / `If-Unmodified-Since` no longer hold, 428 when `required` and
 * the request has neither. Inside a handler that already loaded the
 * resource, call checkPreconditions() instead.
 */
export function preconditions(options: Readonly<PreconditionsOptions>): RequestHandler {
  const given = readOptions<PreconditionsOptions>('preconditions', options, ['current', 'required']);
  const current = checkFunction<PreconditionsOptions['current']>('preconditions', 'current', given.current);
  const required = checkBoolean('preconditions', 'required', given.required ?? false);
  const check = { required };
  // next() is called exactly once, outside any promise chain.
  const decide: AfterLookup<Validators | undefined> = (req, _res, next, validators) => {
    let failure: unknown;
    try {
      checkPreconditions(req, validators, check);
    } catch (error) {
      failure = error;
    }
    next(failure);
  };
  return function preconditionsMiddleware(req, res, next) {
    if (isSafeMethod(req.method)) {
      next();
      return;
    }
    afterLookup(current, decide, req, res, next);
  };
}
