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

/**
 * Checks on the headers of every response the run saw. The security table
 * is read on every answer except 304, which RFC 9110 §15.4.5 lets carry
 * only the validators and caching headers of the 200 it stands for.
 */
export function checkHeaders(ctx: RunContext): void {
  const all = ctx.probe.exchanges;
  if (all.length === 0) {
    return;
  }
  const full = all.filter((exchange) => exchange.status !== 304);
  const header = (name: string) => (exchange: Exchange) => exchange.headers[name];

  // Common response behaviour
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
  if (json.length === 0) {
    ctx.skip('common.json-content-type', 'no JSON body was seen');
    ctx.skip('common.top-level-object', 'no JSON body was seen');
  } else {
    ctx.verdict(
      'common.json-content-type',
      firstOffender(json, JSON_EXPECTED, (exchange) =>
        isSpecJsonType(exchange.headers['content-type']) ? undefined : `Content-Type ${shown(exchange.headers['content-type'])}`,
      ),
    );
    ctx.verdict(
      'common.top-level-object',
      firstOffender(json, 'a JSON object at the top level', (exchange) => {
        const parsed = parseJson(exchange.body);
        return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
          ? undefined
          : `JSON ${excerpt(exchange.body)}`;
      }),
    );
  }
  ctx.verdict(
    'common.no-x-powered-by',
    firstOffender(all, 'no X-Powered-By', (exchange) => {
      const value = header('x-powered-by')(exchange);
      return value === undefined ? undefined : `X-Powered-By ${shown(value)}`;
    }),
  );
  const redirects = all.filter((exchange) => exchange.status >= 300 && exchange.status < 400 && exchange.status !== 304);
  if (redirects.length === 0) ctx.skip('common.location-on-3xx', 'no 3xx answer (other than 304) was seen');
  else {
    ctx.verdict(
      'common.location-on-3xx',
      firstOffender(redirects, 'Location: the new address', (exchange) =>
        exchange.headers.location ? undefined : 'no Location',
      ),
    );
  }

  // Security response headers
  for (const row of SECURITY_HEADERS) {
    const caseInsensitive = 'caseInsensitive' in row && row.caseInsensitive;
    ctx.verdict(
      row.id,
      firstOffender(full, `${row.name}: ${row.value}`, (exchange) => {
        const value = exchange.headers[row.name];
        const same = caseInsensitive ? value?.toLowerCase() === row.value : value === row.value;
        return same ? undefined : `${row.name} ${shown(value)}`;
      }),
    );
  }
  ctx.verdict(
    'security.x-xss-protection',
    firstOffender(all, 'x-xss-protection absent, or "0"', (exchange) => {
      const value = exchange.headers['x-xss-protection'];
      return value === undefined || value === '0' ? undefined : `x-xss-protection ${shown(value)}`;
    }),
  );
  for (const row of ABSENT_HEADERS) {
    ctx.verdict(
      row.id,
      firstOffender(all, `no ${row.name}`, (exchange) => {
        const value = exchange.headers[row.name];
        return value === undefined ? undefined : `${row.name} ${shown(value)}`;
      }),
    );
  }
  ctx.verdict(
    'security.pragma',
    firstOffender(all, 'no Pragma (only a token error response carries it)', (exchange) => {
      const value = exchange.headers.pragma;
      if (value === undefined) return undefined;
      // SPEC.md: "it appears only in the token error response": the invalid_token 401 and the
      // token endpoint's errors; the endpoint's 200 is judged by auth.token.no-pragma.
      if (TOKEN_PURPOSES.has(exchange.purpose) || (exchange.purpose === 'invalid token' && exchange.status >= 400))
        return undefined;
      return `pragma ${shown(value)}`;
    }),
  );
  ctx.verdict(
    'security.cache-control',
    firstOffender(
      all,
      `cache-control: ${DEFAULT_CACHE_CONTROL} (or another value of docs/conventions.md §7.2: no-cache; public, max-age=N; no-store)`,
      (exchange) => {
        const value = exchange.headers['cache-control'];
        return value !== undefined && isSpecCacheControl(value) ? undefined : `cache-control ${shown(value)}`;
      },
    ),
  );
  const clearing = all.filter((exchange) => exchange.headers['clear-site-data'] !== undefined);
  if (clearing.length === 0) ctx.skip('security.clear-site-data', 'no Clear-Site-Data was seen (it is sent on sign-out)');
  else {
    ctx.verdict(
      'security.clear-site-data',
      firstOffender(clearing, 'clear-site-data: "cache", "cookies", "storage"', (exchange) => {
        const value = exchange.headers['clear-site-data'] as string;
        const items = value
          .split(',')
          .map((item) => item.trim())
          .sort();
        return items.join(',') === '"cache","cookies","storage"' ? undefined : `clear-site-data ${shown(value)}`;
      }),
    );
  }
  const cookies = all.filter((exchange) => exchange.headers['set-cookie'] !== undefined);
  if (cookies.length === 0) ctx.skip('security.cookies', 'no Set-Cookie was seen');
  else {
    ctx.verdict(
      'security.cookies',
      firstOffender(cookies, 'every Set-Cookie with Secure and HttpOnly', (exchange) => {
        const bad = (exchange.headers['set-cookie'] as string).split('\n').find((cookie) => {
          const attributes = cookie.toLowerCase();
          return !/;\s*secure\s*(;|$)/.test(attributes) || !/;\s*httponly\s*(;|$)/.test(attributes);
        });
        if (bad === undefined) return undefined;
        // The cookie's value is never shown: it may be a session.
        const [pair, ...attributes] = bad.split(';');
        return `cookie ${shown(pair?.split('=')[0]?.trim())} with attributes ${shown(attributes.join(';').trim())}`;
      }),
    );
  }

  // Path rules rule 10: no new X- header.
  ctx.verdict(
    'paths.no-x-prefix',
    firstOffender(all, 'no X- response header other than those the conventions name', (exchange) => {
      const extra = Object.keys(exchange.headers).filter(
        (name) => name.startsWith('x-') && !(NAMED_X_HEADERS as readonly string[]).includes(name),
      );
      return extra.length === 0 ? undefined : extra.join(', ');
    }),
  );
}
