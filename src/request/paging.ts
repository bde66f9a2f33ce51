import type { Request, RequestHandler, Response } from 'express';
import { checkInteger, invalidOption, readOptions } from '../config/options.js';
import { pathAndQuery } from '../http/paths.js';
import { appendResponseHeader } from '../http/response-headers.js';
import { sendJson } from '../json/json-responses.js';
import { applySelection } from './fields.js';
import { defaultLimitFor, PAGING_DEFAULTS } from './paging-defaults.js';
import { invalidQueryParameter, parsedQuery } from './query.js';

/** Options of paging(). */
export interface PagingOptions {
  /** `limit` used when the client sends none. Default: `20`. */
  defaultLimit?: number;
  /** Largest `limit` a client may ask for; a larger one is refused with 400. Default: `100`. */
  maxLimit?: number;
  /**
   * Query parameters of the route, besides the conventions' common ones (`limit`,
   * `q`, `fields`; `offset` is moved on), that the next-page link carries
   * over, such as a filter (`['gender']`). Any other parameter is left out
   * of the link. Default: `[]`.
   */
  linkParameters?: readonly string[];
  /**
   * Longest `Link` value sendList() adds, in bytes: beyond it no link is
   * sent (`hasNext` still tells that more follow). Default: `2048`.
   */
  maxLinkLength?: number;
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

/** The conventions' common query parameters (docs/conventions.md section 5) a next-page link keeps (`offset` is moved on): the route knows them. */
export const LINK_PARAMETERS = ['limit', 'q', 'fields'] as const;
/**
 * paging()'s default `maxLinkLength`: a `Link` value of at most 2 KB keeps
 * the response head well inside the 4 KB proxy buffers (nginx's default)
 * and Node's 16 KB header limit, whatever the query.
 */
export const DEFAULT_MAX_LINK_LENGTH = 2048;

interface LinkRules {
  readonly kept: ReadonlySet<string>;
  readonly maxLength: number;
}
const DEFAULT_LINK_RULES: LinkRules = { kept: new Set(LINK_PARAMETERS), maxLength: DEFAULT_MAX_LINK_LENGTH };
// The link rules of the paging() that parsed a page.
const LINK_RULES = new WeakMap<Page, LinkRules>();

const DIGITS = /^[0-9]+$/;
const PARAMETER_NAME = /^[A-Za-z0-9_.~-]+$/;
const LEADING_SLASHES = /^\/{2,}/;
const SCHEME_AND_HOST = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;
// Characters that cannot stand between the angle brackets of a Link header
// (RFC 8288 §3: a URI-Reference): they are percent-encoded.
const NOT_IN_LINK = /[^\x21-\x7e]|[<>"\\^`{|}]/g;

const invalid = (name: string, why: string): never => {
  throw invalidQueryParameter(name, `The query parameter "${name}" ${why}`);
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
  const given = readOptions<PagingOptions>('paging', options, ['defaultLimit', 'maxLimit', 'linkParameters', 'maxLinkLength']);
  const maxLimit = checkInteger('paging', 'maxLimit', given.maxLimit ?? PAGING_DEFAULTS.maxLimit, { min: 1 });
  const defaultLimit = checkInteger('paging', 'defaultLimit', given.defaultLimit ?? defaultLimitFor(maxLimit), {
    min: 1,
  });
  if (defaultLimit > maxLimit) {
    invalidOption('paging', 'defaultLimit', defaultLimit, `at most maxLimit (${maxLimit})`);
  }
  const linkParameters = given.linkParameters ?? [];
  if (!Array.isArray(linkParameters) || !linkParameters.every((name) => typeof name === 'string' && PARAMETER_NAME.test(name))) {
    invalidOption('paging', 'linkParameters', linkParameters, 'an array of query parameter names (letters, digits, _ . ~ -)');
  }
  const rules: LinkRules = {
    kept: new Set([...LINK_PARAMETERS, ...linkParameters.filter((name) => name !== OFFSET_PARAMETER)]),
    maxLength: checkInteger('paging', 'maxLinkLength', given.maxLinkLength ?? DEFAULT_MAX_LINK_LENGTH, { min: 64 }),
  };

  return function pagingMiddleware(req, _res, next) {
    const query = parsedQuery(req);
    const offset = readNonNegative(OFFSET_PARAMETER, query[OFFSET_PARAMETER], Number.MAX_SAFE_INTEGER) ?? 0;
    const limit = readNonNegative(LIMIT_PARAMETER, query[LIMIT_PARAMETER], maxLimit) ?? defaultLimit;
    const page = { offset, limit };
    LINK_RULES.set(page, rules);
    req.page = page;
    next();
  };
}

/**
 * The path of the route that answers, from Express's routing (`baseUrl` and
 * `path`), never from the request target as written: an absolute-form target
 * (`GET http://evil.example/v1/users`) names a scheme and host the client
 * chose. Leading slashes are collapsed, so the reference cannot read as
 * `//host/...` (a network-path reference, RFC 3986 §4.2).
 */
function routePath(req: Request): string {
  const path =
    typeof req.path === 'string' ? `${req.baseUrl ?? ''}${req.path}` : pathAndQuery(req)[0].replace(SCHEME_AND_HOST, '');
  return path.replace(LEADING_SLASHES, '/');
}

/**
 * The address of the next page: the route's own path, with `offset` moved
 * on by `limit` and the query parameters the route knows (`limit`, `q`,
 * `fields`, and paging()'s `linkParameters`) kept as the client wrote them;
 * any other parameter is left out. A relative reference (RFC 8288 §3.2
 * resolves it against the request URI).
 */
export function nextPageAddress(req: Request, page: Page): string {
  const rules = LINK_RULES.get(page) ?? DEFAULT_LINK_RULES;
  const query = pathAndQuery(req)[1];
  const kept: string[] = [];
  if (query !== undefined) {
    for (const pair of query.split('&')) {
      if (pair === '') continue;
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      if (rules.kept.has(name)) kept.push(pair);
    }
  }
  kept.push(`${OFFSET_PARAMETER}=${page.offset + page.limit}`);
  return `${routePath(req)}?${kept.join('&')}`.replace(NOT_IN_LINK, (c) => encodeURIComponent(c));
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
 * in headers), appended to any Link value already set, unless it would be
 * longer than paging()'s `maxLinkLength`: then no link, and `hasNext` alone
 * tells that more follow.
 */
export function sendList(res: Response, collection: string, list: ListPage): Response {
  const req = res.req;
  const page = req.page;
  if (list.hasNext && page && page.limit > 0) {
    const link = `<${nextPageAddress(req, page)}>; rel="next"`;
    // Every character is ASCII here (NOT_IN_LINK): its length is its size in bytes.
    if (link.length <= (LINK_RULES.get(page) ?? DEFAULT_LINK_RULES).maxLength) appendResponseHeader(res, 'Link', link);
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
