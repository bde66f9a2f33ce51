import { NOSNIFF_HEADER, NOSNIFF_VALUE } from '../http/spec.js';

/**
 * The security response headers, one row per header, in a file that loads no
 * wrapped library. Everything else is derived from these rows: securityHeaders()'s
 * option names, defaults, the headers it watches and the option its
 * precedence warning names (src/security/), the headers
 * express-api-conventions/openapi declares, and the checker's expected
 * values, check ids and cause sentence. A new header is one row here, its
 * documented option (SecurityHeadersOptions) and its doc line.
 */

/**
 * What the option of a row takes (besides `false`, which leaves the header out):
 * - `helmet`: helmet's options object for the header; helmet writes it;
 * - `helmet-switch`: `true` or `false`, given to helmet as is;
 * - `switch`: `true` writes the row's value;
 * - `text`: the header's value, written as given;
 * - a list: one of these values, written as given.
 */
export type SecurityHeaderOptionKind = 'helmet' | 'helmet-switch' | 'switch' | 'text' | readonly string[];

/** One header securityHeaders() may write. */
export interface SecurityHeaderRow {
  /** securityHeaders()'s option for the header. */
  readonly option: string;
  /** The header's name, as written. */
  readonly header: string;
  /** The value written when the option is left out (the conventions'); `undefined`: not sent unless asked for. */
  readonly value: string | undefined;
  readonly takes: SecurityHeaderOptionKind;
  /** The checker's id of the conventions' row that fixes the value (the rows with a `value`). */
  readonly check?: string;
  /** The value compares case-insensitively (RFC 7034 §2.1 for `X-Frame-Options`). */
  readonly caseInsensitive?: boolean;
  /** Sent whatever securityHeaders() says: commonHeaders() writes nosniff too (docs/conventions.md rule 4). */
  readonly alwaysSent?: boolean;
}

/**
 * The conventions' "Security response headers", value by value, then the
 * two headers securityHeaders() sends only when asked. helmet's defaults
 * differ for several (a long CSP, a one-year HSTS, `SAMEORIGIN`,
 * `X-XSS-Protection: 0`, `Origin-Agent-Cluster`, `X-Download-Options`), so
 * securityHeaders() configures every one.
 */
export const SECURITY_HEADER_TABLE = [
  // "Force HTTPS".
  {
    option: 'strictTransportSecurity',
    header: 'Strict-Transport-Security',
    value: 'max-age=63072000; includeSubDomains',
    takes: 'helmet',
    check: 'security.hsts',
  },
  // "Restrict sources".
  {
    option: 'contentSecurityPolicy',
    header: 'Content-Security-Policy',
    value: "script-src 'self'",
    takes: 'helmet',
    check: 'security.csp',
  },
  // "No MIME sniffing".
  {
    option: 'xContentTypeOptions',
    header: NOSNIFF_HEADER,
    value: NOSNIFF_VALUE,
    takes: 'switch',
    check: 'security.nosniff',
    alwaysSent: true,
  },
  // "Clickjacking", written in lower case (docs/conventions.md rule 11.4).
  {
    option: 'xFrameOptions',
    header: 'X-Frame-Options',
    value: 'deny',
    takes: ['deny', 'sameorigin'],
    check: 'security.frame-options',
    caseInsensitive: true,
  },
  // "Referrer".
  {
    option: 'referrerPolicy',
    header: 'Referrer-Policy',
    value: 'no-referrer',
    takes: 'helmet',
    check: 'security.referrer-policy',
  },
  // "Cross-domain policies".
  {
    option: 'xPermittedCrossDomainPolicies',
    header: 'X-Permitted-Cross-Domain-Policies',
    value: 'none',
    takes: 'helmet',
    check: 'security.cross-domain-policies',
  },
  // "DNS prefetch off".
  {
    option: 'xDnsPrefetchControl',
    header: 'X-DNS-Prefetch-Control',
    value: 'off',
    takes: 'helmet',
    check: 'security.dns-prefetch-control',
  },
  // "Browsing context isolation".
  {
    option: 'crossOriginOpenerPolicy',
    header: 'Cross-Origin-Opener-Policy',
    value: 'same-origin',
    takes: 'helmet',
    check: 'security.coop',
  },
  // "Resource protection".
  {
    option: 'crossOriginResourcePolicy',
    header: 'Cross-Origin-Resource-Policy',
    value: 'same-origin',
    takes: 'helmet',
    check: 'security.corp',
  },
  // "Embedding restriction".
  {
    option: 'crossOriginEmbedderPolicy',
    header: 'Cross-Origin-Embedder-Policy',
    value: 'require-corp',
    takes: 'helmet',
    check: 'security.coep',
  },
  // Not in the conventions' table: sent only when given (for example `camera=(), geolocation=()`).
  { option: 'permissionsPolicy', header: 'Permissions-Policy', value: undefined, takes: 'text' },
  // helmet's `Origin-Agent-Cluster: ?1`, not in docs/conventions.md section 11.
  { option: 'originAgentCluster', header: 'Origin-Agent-Cluster', value: undefined, takes: 'helmet-switch' },
] as const satisfies readonly SecurityHeaderRow[];

/** A header the conventions fix a value for, with the checker's id of its row. */
export type FixedSecurityHeader = SecurityHeaderRow & { readonly value: string; readonly check: string };

/**
 * The rows with a value the conventions fix: what securityHeaders() sends by
 * default. The derivations take the table as an argument, so that each
 * reader derives from the table it imported.
 */
export function fixedSecurityHeaders(table: readonly SecurityHeaderRow[]): readonly FixedSecurityHeader[] {
  return table.filter((row): row is FixedSecurityHeader => row.value !== undefined && row.check !== undefined);
}

/** The option of securityHeaders() that writes a header, by the header's lower-case name. */
export function optionOfHeader(table: readonly SecurityHeaderRow[]): ReadonlyMap<string, string> {
  return new Map(table.map((row) => [row.header.toLowerCase(), row.option]));
}
