import type { IncomingHttpHeaders } from 'node:http';
import express from 'express';
import express4 from 'express4';
import { parseList } from 'structured-headers';
import { HTTP_DATE } from '../helpers.js';

/**
 * The one assertion of the neighbours suite (test/neighbours/): "every
 * header of the conventions is on this response, with the conventions' value". A response that
 * went out through the preset must carry all of them whatever else the app
 * runs; the expectations below say where a neighbour or a route set a value
 * on purpose (a default yields to it: docs/guides/existing-app.md).
 */

/** docs/conventions.md section 11, every row with a fixed value, and rule 6.4. */
export const SPEC_SECURITY_HEADERS = {
  'Strict-Transport-Security': 'max-age=63072000; includeSubDomains',
  'Content-Security-Policy': "script-src 'self'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'deny',
  'Referrer-Policy': 'no-referrer',
  'X-Permitted-Cross-Domain-Policies': 'none',
  'X-DNS-Prefetch-Control': 'off',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
} as const;

export type SpecSecurityHeader = keyof typeof SPEC_SECURITY_HEADERS;

/** SPEC_SECURITY_HEADERS with the names in lower case, as Node and supertest give them. */
export const SPEC_SECURITY_HEADERS_LOWER_CASE: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(SPEC_SECURITY_HEADERS).map(([name, value]) => [name.toLowerCase(), value]),
);

/** docs/conventions.md rule 11.8: the default where nothing else is set. */
export const SPEC_DEFAULT_CACHE_CONTROL = 'no-store, max-age=0';

/** docs/conventions.md rule 6.3. */
export const SPEC_JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Stands for "present, any value": a neighbour's own value wins over the preset's default. */
export const PRESENT = Symbol('present');

/** The preset's default policies (docs/rate-limit.md): `user` and `application`, 100 per 60 s. */
const DEFAULT_POLICIES = '"user";q=100;w=60, "application";q=100;w=60';
const DEFAULT_STATE = '"user";r=<n>;t=<n>, "application";r=<n>;t=<n>';

export interface SpecHeaderExpectations {
  /** The body is JSON: `Content-Type: application/json; charset=utf-8`. Default: `true`. */
  readonly json?: boolean;
  /**
   * The exact `Cache-Control`; `PRESENT` where the value is the app's own
   * choice. Default: the conventions' `no-store, max-age=0`.
   */
  readonly cacheControl?: string | typeof PRESENT;
  /** `RateLimit-Policy` and `RateLimit` of the preset's default policies. Default: `true`. */
  readonly rateLimit?: boolean;
  /** Security headers whose value a team set on purpose: their value, or `PRESENT`. */
  readonly security?: Partial<Record<SpecSecurityHeader, string | typeof PRESENT>>;
  /** `Date` in HTTP-date format (docs/conventions.md rule 6.2: on every response except 5xx). Default: `true`. */
  readonly date?: boolean;
}

/** Headers as Node, supertest and a raw-socket reader give them (names in lower case). */
export type HeaderBag = IncomingHttpHeaders | Readonly<Record<string, string | string[] | undefined>>;

/** A fetch() Response's headers as a bag (several `Set-Cookie` kept apart). */
export function headersOf(response: { headers: Headers }): Record<string, string | string[]> {
  const bag: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    bag[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) bag['set-cookie'] = cookies;
  return bag;
}

const single = (bag: HeaderBag, name: string): string | null => {
  const value = bag[name.toLowerCase()];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : String(value);
};

/** A RateLimit field as its items, `pk` left out (a keyed hash) and numbers of `r`/`t` as `<n>`. */
function rateLimitShape(value: string | null, kind: 'policy' | 'state'): string | null {
  if (value === null) return null;
  try {
    return parseList(value)
      .map(([name, params]) => {
        const items = [JSON.stringify(String(name))];
        for (const [key, item] of params) {
          if (key === 'pk') continue;
          const counted = kind === 'state' && (key === 'r' || key === 't');
          items.push(`${key}=${counted && Number.isInteger(item) && (item as number) >= 0 ? '<n>' : String(item)}`);
        }
        return items.join(';');
      })
      .join(', ');
  } catch (error) {
    return `unparsable (${(error as Error).message}): ${value}`;
  }
}

/**
 * Asserts every header of the conventions of a response at once, so that a failure
 * names every header that is missing or wrong, not only the first.
 */
export function expectSpecHeaders(bag: HeaderBag, expectations: SpecHeaderExpectations = {}): void {
  const seen: Record<string, unknown> = {};
  const want: Record<string, unknown> = {};
  const overrides = expectations.security ?? {};
  for (const [name, value] of Object.entries(SPEC_SECURITY_HEADERS)) {
    const actual = single(bag, name);
    const expected = overrides[name as SpecSecurityHeader] ?? value;
    if (expected === PRESENT) {
      seen[name] = actual === null ? null : 'present';
      want[name] = 'present';
    } else {
      // RFC 7034 §2.1: X-Frame-Options is case-insensitive.
      seen[name] = name === 'X-Frame-Options' && actual !== null ? actual.toLowerCase() : actual;
      want[name] = expected;
    }
  }
  const cacheControl = expectations.cacheControl ?? SPEC_DEFAULT_CACHE_CONTROL;
  seen['Cache-Control'] =
    cacheControl === PRESENT ? (single(bag, 'Cache-Control') === null ? null : 'present') : single(bag, 'Cache-Control');
  want['Cache-Control'] = cacheControl === PRESENT ? 'present' : cacheControl;
  if (expectations.json ?? true) {
    seen['Content-Type'] = single(bag, 'Content-Type');
    want['Content-Type'] = SPEC_JSON_CONTENT_TYPE;
  }
  if (expectations.rateLimit ?? true) {
    seen['RateLimit-Policy'] = rateLimitShape(single(bag, 'RateLimit-Policy'), 'policy');
    want['RateLimit-Policy'] = DEFAULT_POLICIES;
    seen.RateLimit = rateLimitShape(single(bag, 'RateLimit'), 'state');
    want.RateLimit = DEFAULT_STATE;
  }
  if (expectations.date ?? true) {
    const date = single(bag, 'Date');
    seen.Date = date !== null && HTTP_DATE.test(date) ? 'an HTTP-date' : date;
    want.Date = 'an HTTP-date';
  }
  // Headers the conventions list as not used, and what reveals the implementation.
  for (const name of ['X-Powered-By', 'Public-Key-Pins', 'Expect-CT', 'Feature-Policy', 'Pragma']) {
    seen[name] = single(bag, name);
    want[name] = null;
  }
  const xss = single(bag, 'X-XSS-Protection');
  seen['X-XSS-Protection'] = xss === null || xss === '0' ? 'absent or 0' : xss;
  want['X-XSS-Protection'] = 'absent or 0';
  const cookies = cookieLines(bag);
  seen['Set-Cookie'] = cookies.map((line) => cookieVerdict(line));
  want['Set-Cookie'] = cookies.map((line) => `${cookieName(line)}: Secure, HttpOnly`);
  expect(seen).toEqual(want);
}

/** Every `Set-Cookie` line of a response. */
export function cookieLines(bag: HeaderBag): string[] {
  const value = bag['set-cookie'];
  if (value === undefined) return [];
  return Array.isArray(value) ? [...value] : [String(value)];
}

const cookieName = (line: string): string => line.slice(0, line.indexOf('=')).trim();

/** docs/conventions.md rule 11.14: cookies are `Secure` and `HttpOnly`. */
function cookieVerdict(line: string): string {
  const attributes = line
    .split(';')
    .slice(1)
    .map((part) => part.trim().split('=')[0]?.toLowerCase());
  const missing = ['Secure', 'HttpOnly'].filter((name) => !attributes.includes(name.toLowerCase()));
  return missing.length === 0
    ? `${cookieName(line)}: Secure, HttpOnly`
    : `${cookieName(line)}: lacks ${missing.join(', ')} (${line})`;
}

/**
 * The `Cookie` request header that sends back what a response set. Done by
 * hand: the cookies are `Secure` and the test speaks plain HTTP on
 * 127.0.0.1, where a cookie jar rightly keeps them back.
 */
export function cookieHeader(bag: HeaderBag): string {
  return cookieLines(bag)
    .map((line) => line.slice(0, line.indexOf(';') === -1 ? line.length : line.indexOf(';')))
    .join('; ');
}

/** Express 5 and Express 4 (the `express4` alias): the suites whose behaviour may differ run on both. */
export const EXPRESS_VERSIONS = [
  ['Express 5', express],
  ['Express 4', express4 as unknown as typeof express],
] as const;
