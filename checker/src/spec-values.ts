/**
 * The values the conventions fix, as the checker compares them. Each one quotes
 * the sentence of the conventions it comes from.
 */

/** "`Content-Type` is always correct: `application/json; charset=utf-8` for JSON." */
export const JSON_MEDIA_TYPE = 'application/json; charset=utf-8' as const;

/** The conventions' "Security response headers": every row with a fixed value (nosniff included). */
export const SECURITY_HEADERS = [
  { id: 'security.hsts', name: 'strict-transport-security', value: 'max-age=63072000; includeSubDomains' },
  { id: 'security.csp', name: 'content-security-policy', value: "script-src 'self'" },
  { id: 'security.nosniff', name: 'x-content-type-options', value: 'nosniff' },
  // RFC 7034 §2.1: the value is case-insensitive, so helmet's `DENY` is docs/conventions.md rule 11.4's `deny`.
  { id: 'security.frame-options', name: 'x-frame-options', value: 'deny', caseInsensitive: true },
  { id: 'security.referrer-policy', name: 'referrer-policy', value: 'no-referrer' },
  { id: 'security.cross-domain-policies', name: 'x-permitted-cross-domain-policies', value: 'none' },
  { id: 'security.dns-prefetch-control', name: 'x-dns-prefetch-control', value: 'off' },
  { id: 'security.coop', name: 'cross-origin-opener-policy', value: 'same-origin' },
  { id: 'security.corp', name: 'cross-origin-resource-policy', value: 'same-origin' },
  { id: 'security.coep', name: 'cross-origin-embedder-policy', value: 'require-corp' },
] as const;

/** "Headers that are not used: ... `Public-Key-Pins`, `Expect-CT`, `Feature-Policy`." */
export const ABSENT_HEADERS = [
  { id: 'security.no-public-key-pins', name: 'public-key-pins' },
  { id: 'security.no-expect-ct', name: 'expect-ct' },
  { id: 'security.no-feature-policy', name: 'feature-policy' },
] as const;

/** "`Cache-Control: no-store, max-age=0`" (Prevent cache exposure), the value where nothing else is set. */
export const DEFAULT_CACHE_CONTROL = 'no-store, max-age=0' as const;

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
