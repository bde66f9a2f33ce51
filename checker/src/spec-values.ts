import {
  CACHE_CONTROL_SENSITIVE,
  fixedSecurityHeaders,
  JSON_CONTENT_TYPE,
  SECURITY_HEADER_TABLE,
} from 'express-api-conventions/extend';

/**
 * The values the conventions fix, as the checker compares them. Those the
 * library sends come from its own tables, through `express-api-conventions/extend`. Each one quotes
 * the sentence of the conventions it comes from.
 */

/** "`Content-Type` is always correct: `application/json; charset=utf-8` for JSON." */
export const JSON_MEDIA_TYPE = JSON_CONTENT_TYPE;

/** The checker's id of each row of the conventions' "Security response headers" (nosniff included). */
export type SecurityHeaderCheckId = Extract<(typeof SECURITY_HEADER_TABLE)[number], { check: string }>['check'];

/**
 * The conventions' "Security response headers": every row with a fixed
 * value, the values securityHeaders() sends (the library's one table of
 * security headers). RFC 7034 §2.1: `X-Frame-Options` is case-insensitive,
 * so helmet's `DENY` is the conventions' `deny`.
 */
export const SECURITY_HEADERS = fixedSecurityHeaders(SECURITY_HEADER_TABLE).map((row) => ({
  id: row.check as SecurityHeaderCheckId,
  /** As the header is written, for sentences. */
  header: row.header,
  name: row.header.toLowerCase(),
  value: row.value,
  caseInsensitive: row.caseInsensitive === true,
}));

/** "Headers that are not used: ... `Public-Key-Pins`, `Expect-CT`, `Feature-Policy`." */
export const ABSENT_HEADERS = [
  { id: 'security.no-public-key-pins', name: 'public-key-pins' },
  { id: 'security.no-expect-ct', name: 'expect-ct' },
  { id: 'security.no-feature-policy', name: 'feature-policy' },
] as const;

/** "`Cache-Control: no-store, max-age=0`" (Prevent cache exposure), the value where nothing else is set. */
export const DEFAULT_CACHE_CONTROL = CACHE_CONTROL_SENSITIVE;

/**
 * "Cache-Control values by intent": `no-cache`, `public, max-age=<seconds>`,
 * `no-store`; and the security table's `no-store, max-age=0`. Compared as
 * sets of directives, so order and spacing do not matter.
 */
export const CACHE_CONTROL_VALUES: readonly (readonly string[])[] = [
  ['no-store', 'max-age=0'],
  ['no-store'],
  ['no-cache'],
  ['public', 'max-age=<seconds>'],
];

/** "The older three-header set `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` is superseded." */
export const LEGACY_RATE_LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'] as const;

/**
 * "Existing headers named in this document keep their names" (Path rules
 * rule 10): the X- headers the conventions name. `X-Powered-By` and `X-RateLimit-*`
 * have checks of their own.
 */
export const NAMED_X_HEADERS = [
  'x-content-type-options',
  'x-frame-options',
  'x-permitted-cross-domain-policies',
  'x-dns-prefetch-control',
  'x-xss-protection',
  'x-http-method-override',
  'x-requested-with',
  'x-powered-by',
  ...LEGACY_RATE_LIMIT_HEADERS,
] as const;

/** "`<` and `>` are written as the escapes `\u003C` and `\u003E`." */
export const ESCAPED_LT = '\\u003C' as const;
export const ESCAPED_GT = '\\u003E' as const;

/** An HTTP-date (RFC 9110 §5.6.7, IMF-fixdate): "in HTTP-date format in GMT". */
export const HTTP_DATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;
