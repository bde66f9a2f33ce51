import type { CheckId } from './catalogue.js';
import {
  excerpt,
  firstOffender,
  isSpecJsonType,
  JSON_EXPECTED,
  mediaType,
  parseJson,
  type RunContext,
  shown,
} from './context.js';
import { headerCause } from './neighbours.js';
import type { Exchange } from './probe.js';
import {
  ABSENT_HEADERS,
  CACHE_CONTROL_VALUES,
  DEFAULT_CACHE_CONTROL,
  HTTP_DATE,
  NAMED_X_HEADERS,
  SECURITY_HEADERS,
} from './spec-values.js';

/** The requests to the token endpoint: their error answers may carry `Pragma`, their 200 is auth.token.no-pragma's. */
export const TOKEN_PURPOSES = new Set(['token error', 'token', 'token refresh', 'limited token']);

const looksLikeJson = (exchange: Exchange): boolean => {
  const type = mediaType(exchange.headers['content-type']);
  if (type === 'application/json' || type?.endsWith('+json')) return true;
  return parseJson(exchange.body) !== undefined && /^\s*[[{]/.test(exchange.body);
};

const directives = (value: string): string[] =>
  value
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '')
    .map((part) => (/^max-age=\d+$/.test(part) && part !== 'max-age=0' ? 'max-age=<seconds>' : part))
    .sort();

/** Whether a Cache-Control value is one the conventions name, as a set of directives. */
export function isSpecCacheControl(value: string): boolean {
  const seen = directives(value);
  return CACHE_CONTROL_VALUES.some((allowed) => {
    const want = [...allowed].sort();
    if (allowed.includes('public')) {
      // `public, max-age=0` is a period of zero seconds: still the "cache for a period" form.
      const normalized = seen.map((d) => (d === 'max-age=0' ? 'max-age=<seconds>' : d));
      return normalized.length === want.length && normalized.every((d, i) => d === want[i]);
    }
    return seen.length === want.length && seen.every((d, i) => d === want[i]);
  });
}

/** A check's verdict on the first of `exchanges` that breaks it, or a skip when there is none to look at. */
function judgeEach(
  ctx: RunContext,
  id: CheckId,
  exchanges: readonly Exchange[],
  noneSeen: string,
  expected: string,
  seen: (exchange: Exchange) => string | undefined,
): void {
  if (exchanges.length === 0) ctx.skip(id, noneSeen);
  else ctx.verdict(id, firstOffender(exchanges, expected, seen));
}

/** What a response that must not carry `name` shows when it does. */
const absent =
  (name: string, label = name) =>
  (exchange: Exchange): string | undefined => {
    const value = exchange.headers[name];
    return value === undefined ? undefined : `${label} ${shown(value)}`;
  };

/**
 * Checks on the headers of every response the run saw. The security table
 * is read on every answer except 304, which RFC 9110 §15.4.5 lets carry
 * only the validators and caching headers of the 200 it stands for.
 */
export function checkHeaders(ctx: RunContext): void {
  const all = ctx.probe.exchanges;
  if (all.length === 0) return;
  checkCommonBehaviour(ctx, all);
  const full = all.filter((exchange) => exchange.status !== 304);
  checkSecurityTable(ctx, all, full);
  checkCachingHeaders(ctx, all);
  checkSessionHeaders(ctx, all);
  // Path rules rule 10: no new X- header.
  const extraXHeaders = (exchange: Exchange): string[] =>
    Object.keys(exchange.headers).filter(
      (name) => name.startsWith('x-') && !(NAMED_X_HEADERS as readonly string[]).includes(name),
    );
  const offender = all.find((exchange) => extraXHeaders(exchange).length > 0);
  ctx.verdict(
    'paths.no-x-prefix',
    firstOffender(all, 'no X- response header other than those the conventions name', (exchange) => {
      const extra = extraXHeaders(exchange);
      return extra.length === 0 ? undefined : extra.join(', ');
    }),
    // `X-Download-Options` is helmet's, not a header the app named.
    headerCause(offender, offender === undefined ? [] : extraXHeaders(offender)),
  );
}

/** Common response behaviour: Date, the JSON type and shape, no X-Powered-By, Location on a redirect. */
function checkCommonBehaviour(ctx: RunContext, all: readonly Exchange[]): void {
  ctx.verdict(
    'common.date',
    firstOffender(
      all.filter((exchange) => exchange.status < 500),
      'Date: an HTTP-date in GMT',
      (exchange) => {
        const date = exchange.headers.date;
        return date !== undefined && HTTP_DATE.test(date) ? undefined : `Date ${shown(date)}`;
      },
    ),
  );
  const json = all.filter((exchange) => exchange.body.trim() !== '' && looksLikeJson(exchange));
  judgeEach(ctx, 'common.json-content-type', json, 'no JSON body was seen', JSON_EXPECTED, (exchange) =>
    isSpecJsonType(exchange.headers['content-type']) ? undefined : `Content-Type ${shown(exchange.headers['content-type'])}`,
  );
  judgeEach(ctx, 'common.top-level-object', json, 'no JSON body was seen', 'a JSON object at the top level', (exchange) => {
    const parsed = parseJson(exchange.body);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? undefined : `JSON ${excerpt(exchange.body)}`;
  });
  ctx.verdict('common.no-x-powered-by', firstOffender(all, 'no X-Powered-By', absent('x-powered-by', 'X-Powered-By')));
  judgeEach(
    ctx,
    'common.location-on-3xx',
    all.filter((exchange) => exchange.status >= 300 && exchange.status < 400 && exchange.status !== 304),
    'no 3xx answer (other than 304) was seen',
    'Location: the new address',
    (exchange) => (exchange.headers.location ? undefined : 'no Location'),
  );
}

/** The security headers every answer carries (`full`: all but the 304s), and those none carries. */
function checkSecurityTable(ctx: RunContext, all: readonly Exchange[], full: readonly Exchange[]): void {
  for (const row of SECURITY_HEADERS) {
    const { caseInsensitive } = row;
    const differs = (exchange: Exchange): boolean => {
      const value = exchange.headers[row.name];
      return !(caseInsensitive ? value?.toLowerCase() === row.value : value === row.value);
    };
    ctx.verdict(
      row.id,
      firstOffender(full, `${row.name}: ${row.value}`, (exchange) =>
        differs(exchange) ? `${row.name} ${shown(exchange.headers[row.name])}` : undefined,
      ),
      // helmet's own value in place of the conventions' one: blame helmet, not a missing securityHeaders().
      headerCause(full.find(differs), [row.name]),
    );
  }
  ctx.verdict(
    'security.x-xss-protection',
    firstOffender(all, 'x-xss-protection absent, or "0"', (exchange) => {
      const value = exchange.headers['x-xss-protection'];
      return value === undefined || value === '0' ? undefined : `x-xss-protection ${shown(value)}`;
    }),
  );
  for (const row of ABSENT_HEADERS) ctx.verdict(row.id, firstOffender(all, `no ${row.name}`, absent(row.name)));
}

/** The caching headers: Pragma only on a token error, and a Cache-Control the conventions name. */
function checkCachingHeaders(ctx: RunContext, all: readonly Exchange[]): void {
  ctx.verdict(
    'security.pragma',
    firstOffender(all, 'no Pragma (only a token error response carries it)', (exchange) => {
      const value = exchange.headers.pragma;
      if (value === undefined) return undefined;
      // docs/conventions.md rule 11.13: `Pragma` only in the token failure (13.7): the invalid_token 401 and the
      // token endpoint's errors; the endpoint's 200 is judged by auth.token.no-pragma.
      if (TOKEN_PURPOSES.has(exchange.purpose) || (exchange.purpose === 'invalid token' && exchange.status >= 400))
        return undefined;
      return `pragma ${shown(value)}`;
    }),
  );
  const cacheControlProblem = (exchange: Exchange): string | undefined => {
    const value = exchange.headers['cache-control'];
    return value !== undefined && isSpecCacheControl(value) ? undefined : `cache-control ${shown(value)}`;
  };
  ctx.verdict(
    'security.cache-control',
    firstOffender(
      all,
      `cache-control: ${DEFAULT_CACHE_CONTROL} (or another value of docs/conventions.md §7.2: no-cache; public, max-age=N; no-store)`,
      cacheControlProblem,
    ),
    headerCause(
      all.find((exchange) => cacheControlProblem(exchange) !== undefined),
      [],
    ),
  );
}

/** Clear-Site-Data and Set-Cookie, each judged on the answers that carry it. */
function checkSessionHeaders(ctx: RunContext, all: readonly Exchange[]): void {
  judgeEach(
    ctx,
    'security.clear-site-data',
    all.filter((exchange) => exchange.headers['clear-site-data'] !== undefined),
    'no Clear-Site-Data was seen (it is sent on sign-out)',
    'clear-site-data: "cache", "cookies", "storage"',
    (exchange) => {
      const value = exchange.headers['clear-site-data'] as string;
      const items = value
        .split(',')
        .map((item) => item.trim())
        .sort();
      return items.join(',') === '"cache","cookies","storage"' ? undefined : `clear-site-data ${shown(value)}`;
    },
  );
  judgeEach(
    ctx,
    'security.cookies',
    all.filter((exchange) => exchange.headers['set-cookie'] !== undefined),
    'no Set-Cookie was seen',
    'every Set-Cookie with Secure and HttpOnly',
    (exchange) => {
      const bad = (exchange.headers['set-cookie'] as string).split('\n').find((cookie) => {
        const attributes = cookie.toLowerCase();
        return !/;\s*secure\s*(;|$)/.test(attributes) || !/;\s*httponly\s*(;|$)/.test(attributes);
      });
      if (bad === undefined) return undefined;
      // The cookie's value is never shown: it may be a session.
      const [pair, ...attributes] = bad.split(';');
      return `cookie ${shown(pair?.split('=')[0]?.trim())} with attributes ${shown(attributes.join(';').trim())}`;
    },
  );
}
