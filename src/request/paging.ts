import type { Request, RequestHandler, Response } from 'express';
import { checkInteger, invalidOption, readOptions } from '../config/options.js';
import { apiError } from '../errors/api-error.js';
import { ERROR_CATALOGUE } from '../errors/catalogue.js';
import { pathAndQuery } from '../http/paths.js';
import { sendJson } from '../json/json-responses.js';
import { applySelection } from './fields.js';
import { parsedQuery } from './query.js';

/** Options of paging(). */
export interface PagingOptions {
  /** `limit` used when the client sends none. Default: `20`. */
  defaultLimit?: number;
  /** Largest `limit` a client may ask for; a larger one is refused with 400. Default: `100`. */
  maxLimit?: number;
}

/** The page a client asked for, parsed once by paging(). */
export interface Page {
  /** The conventions' "Common query parameters": "Start position of the result." */
  readonly offset: number;
  /** The conventions' "Common query parameters": "Number of items to return." */
  readonly limit: number;
}

declare module 'express-serve-static-core' {
  interface Request {
    /** The page asked for by `offset` and `limit`, set by paging(). */
    page?: Page;
  }
}

/** The conventions' "Common query parameters": `offset`, "Start position of the result". */
export const OFFSET_PARAMETER = 'offset' as const;
/** The conventions' "Common query parameters": `limit`, "Number of items to return". */
export const LIMIT_PARAMETER = 'limit' as const;
/** The conventions' "Paging flag": "A list result includes a boolean `hasNext`". */
export const HAS_NEXT_KEY = 'hasNext' as const;

// SPEC.md leaves "Default and maximum value of `limit`" unshown; these are ours.
const DEFAULT_LIMIT = 20;
const DEFAULT_MAX_LIMIT = 100;

const DIGITS = /^[0-9]+$/;
// Characters that cannot stand between the angle brackets of a Link header
// (RFC 8288 §3: a URI-Reference): they are percent-encoded.
const NOT_IN_LINK = /[^\x21-\x7e]|[<>"\\^`{|}]/g;

const invalid = (name: string, why: string): never => {
  const message = `The query parameter "${name}" ${why}`;
  throw apiError('invalidQueryParameter', {
    message,
    items: [{ message, code: ERROR_CATALOGUE.invalidQueryParameter.code, field: name }],
  });
};

function readNonNegative(name: string, raw: unknown, max: number): number | undefined {
  if (raw === undefined) return undefined;
  // validate() may already have coerced the parameter to a number.
  if (typeof raw === 'number') return readNonNegative(name, String(raw), max);
  if (typeof raw !== 'string') invalid(name, 'must be given once, as a single whole number.');
  const text = raw as string;
  const range = max === Number.MAX_SAFE_INTEGER ? 'a whole number, 0 or more' : `a whole number from 0 to ${max}`;
  if (!DIGITS.test(text)) invalid(name, `must be ${range}; received ${JSON.stringify(text)}.`);
  const value = Number(text);
  if (value > max) invalid(name, `must be ${range}; received ${text}.`);
  return value;
}

/**
 * Parses `offset` and `limit` once (Express 5's `req.query` parses the query
 * string again on every read) and keeps the result in `req.page`. Each must
 * be a whole number, 0 or more, given once; `limit` at most `maxLimit`.
 * Anything else is refused with 400 (code 40003) naming the parameter.
 */
export function paging(options?: Readonly<PagingOptions>): RequestHandler {
  const given = readOptions<PagingOptions>('paging', options, ['defaultLimit', 'maxLimit']);
  const maxLimit = checkInteger('paging', 'maxLimit', given.maxLimit ?? DEFAULT_MAX_LIMIT, { min: 1 });
  const defaultLimit = checkInteger('paging', 'defaultLimit', given.defaultLimit ?? Math.min(DEFAULT_LIMIT, maxLimit), {
    min: 1,
  });
  if (defaultLimit > maxLimit) {
    invalidOption('paging', 'defaultLimit', defaultLimit, `at most maxLimit (${maxLimit})`);
  }

  return function pagingMiddleware(req, _res, next) {
    const query = parsedQuery(req);
    const offset = readNonNegative(OFFSET_PARAMETER, query[OFFSET_PARAMETER], Number.MAX_SAFE_INTEGER) ?? 0;
    const limit = readNonNegative(LIMIT_PARAMETER, query[LIMIT_PARAMETER], maxLimit) ?? defaultLimit;
    req.page = { offset, limit };
    next();
  };
}

/**
 * The address of the next page: the request's own path and query, with
 * `offset` moved on by `limit`. Every other parameter is kept as the client
 * wrote it. A relative reference (RFC 8288 §3.2 resolves it against the
 * request URI).
 */
export function nextPageAddress(req: Request, page: Page): string {
  const [path, query] = pathAndQuery(req);
  const kept: string[] = [];
  if (query !== undefined) {
    for (const pair of query.split('&')) {
      if (pair === '') continue;
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      if (name !== OFFSET_PARAMETER) kept.push(pair);
    }
  }
  kept.push(`${OFFSET_PARAMETER}=${page.offset + page.limit}`);
  return `${path}?${kept.join('&')}`.replace(NOT_IN_LINK, (c) => encodeURIComponent(c));
}

/** One page of a list: its items and whether more follow. */
export interface ListPage<T = unknown> {
  readonly items: readonly T[];
  readonly hasNext: boolean;
}

/**
 * Sends a list in the conventions' shape, `{ "<collection>": [...], "hasNext": bool }`,
 * through sendJson() (escaping, exact bigints). The route's field selection
 * (selectFields()) is applied to every item. When `hasNext` is true and the
 * route uses paging(), the next page's address goes in a
 * `Link: <...>; rel="next"` header (the conventions' "Envelope": meta information goes
 * in headers), appended to any Link value already set.
 */
export function sendList(res: Response, collection: string, list: ListPage): Response {
  const req = res.req;
  const page = req.page;
  if (list.hasNext && page && page.limit > 0) {
    res.append('Link', `<${nextPageAddress(req, page)}>; rel="next"`);
  }
  const selection = req.fieldSelection;
  const items = selection ? list.items.map((item) => applySelection(item, selection)) : list.items;
  // A computed key in a literal always makes an own property, whatever the name.
  return sendJson(res, { [collection]: items, [HAS_NEXT_KEY]: list.hasNext === true });
}

/**
 * Cuts the asked-for page out of a whole list held in memory:
 * `sendList(res, 'users', pageOf(users, req.page))`. Without a page, every
 * item is kept. (A database query instead fetches `limit + 1` rows from
 * `offset`: `hasNext` is whether the extra row came.)
 */
export function pageOf<T>(all: readonly T[], page: Page | undefined): ListPage<T> {
  if (!page) return { items: all, hasNext: false };
  const end = page.offset + page.limit;
  return { items: all.slice(page.offset, end), hasNext: end < all.length };
}
