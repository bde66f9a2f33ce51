import { NOSNIFF_HEADER, NOSNIFF_VALUE } from '../http/spec.js';

/**
 * securityHeaders()'s values and option names, in a file that loads no
 * wrapped library: securityHeaders() configures helmet to write them, and
 * express-api-conventions/openapi states them without loading helmet.
 */

/**
 * The conventions' "Security response headers", value by value. Each is
 * what the table writes; helmet's defaults differ for several (a long CSP, a
 * one-year HSTS, `SAMEORIGIN`, `X-XSS-Protection: 0`, `Origin-Agent-Cluster`,
 * `X-Download-Options`), so securityHeaders() configures every one.
 */
export const SECURITY_HEADERS = {
  /** "Force HTTPS". */
  'Strict-Transport-Security': 'max-age=63072000; includeSubDomains',
  /** "Restrict sources". */
  'Content-Security-Policy': "script-src 'self'",
  /** "No MIME sniffing". */
  [NOSNIFF_HEADER]: NOSNIFF_VALUE,
  /** "Clickjacking". */
  'X-Frame-Options': 'deny',
  /** "Referrer". */
  'Referrer-Policy': 'no-referrer',
  /** "Cross-domain policies". */
  'X-Permitted-Cross-Domain-Policies': 'none',
  /** "DNS prefetch off". */
  'X-DNS-Prefetch-Control': 'off',
  /** "Browsing context isolation". */
  'Cross-Origin-Opener-Policy': 'same-origin',
  /** "Resource protection". */
  'Cross-Origin-Resource-Policy': 'same-origin',
  /** "Embedding restriction". */
  'Cross-Origin-Embedder-Policy': 'require-corp',
} as const;

/**
 * securityHeaders()'s option that turns each header off (`false`), or
 * `undefined` for `X-Content-Type-Options`, which commonHeaders() sends
 * whatever securityHeaders() says (the conventions' rule 4).
 */
export const SECURITY_HEADER_OPTIONS = {
  'Strict-Transport-Security': 'strictTransportSecurity',
  'Content-Security-Policy': 'contentSecurityPolicy',
  [NOSNIFF_HEADER]: undefined,
  'X-Frame-Options': 'xFrameOptions',
  'Referrer-Policy': 'referrerPolicy',
  'X-Permitted-Cross-Domain-Policies': 'xPermittedCrossDomainPolicies',
  'X-DNS-Prefetch-Control': 'xDnsPrefetchControl',
  'Cross-Origin-Opener-Policy': 'crossOriginOpenerPolicy',
  'Cross-Origin-Resource-Policy': 'crossOriginResourcePolicy',
  'Cross-Origin-Embedder-Policy': 'crossOriginEmbedderPolicy',
} as const satisfies Readonly<Record<keyof typeof SECURITY_HEADERS, string | undefined>>;
