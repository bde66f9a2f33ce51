import { readOptions } from '../config/options.js';
import { CACHE_CONTROL_SENSITIVE } from '../http/spec.js';
import { INTROSPECTION_PATH, metadataPath, REVOCATION_PATH, TOKEN_PATH } from '../oauth2/paths.js';
import { isTokenService, type TokenEndpoints } from '../oauth2/token-service.js';
import type { ConventionsOptions } from '../preset.js';
import { defaultLimitFor, PAGING_DEFAULTS } from '../request/paging-defaults.js';
import { fixedSecurityHeaders, SECURITY_HEADER_TABLE } from '../security/defaults.js';
import { CONVENTIONS_OPTION_NAMES, stageGiven } from '../stage-names.js';
import { isObject, type Json } from './document.js';

/** Options of withConventions(): those given to conventions(), and the paging of the list routes. */
export type WithConventionsOptions = Readonly<ConventionsOptions> & {
  /** The options the list routes give paging(): `limit`'s default and maximum. Default: `{ defaultLimit: 20, maxLimit: 100 }`. */
  readonly paging?: Readonly<{ defaultLimit?: number; maxLimit?: number }>;
};

/** The token service as the document states it: its paths (undefined when off) and DPoP. */
export type TokenServicePlan = TokenEndpoints;

/** What the preset sends with these options. */
export interface Plan {
  /** Security headers sent on every answer, each with its fixed value (undefined: configured otherwise). */
  readonly securityHeaders: readonly (readonly [string, string | undefined])[];
  /** `RateLimit` and `RateLimit-Policy` are sent. */
  readonly rateLimit: boolean;
  /** A request over the limit may be answered 429 (not when every request is report-only). */
  readonly limitRefuses: boolean;
  readonly cors: boolean;
  readonly bearer: boolean;
  /** Whether state-changing requests may be refused with 403 (Fetch Metadata, CSRF tokens). */
  readonly crossSite: boolean;
  readonly etag: boolean;
  /** The default `Cache-Control`, or undefined when caching() sets none. */
  readonly cacheControl: string | undefined;
  readonly maxLimit: number;
  readonly defaultLimit: number;
  readonly token: TokenServicePlan | undefined;
}

const objectOr = (value: unknown): Json | undefined => (isObject(value) ? value : undefined);

/** The path of an endpoint the token router serves: its option, its default, or undefined when `false`. */
const endpointPath = (value: unknown, fallback: string): string | undefined =>
  value === false ? undefined : typeof value === 'string' ? value : fallback;

/** The metadata path of an issuer (RFC 8414 §3.1), or undefined when no metadata is served. */
function metadataPathOf(token: Json): string | undefined {
  if (token.metadata === false || typeof token.issuer !== 'string') return undefined;
  try {
    return metadataPath(new URL(token.issuer));
  } catch {
    return undefined;
  }
}

/**
 * The token service's endpoints: those of the router itself when given the
 * one tokenRouter() made, or read from its options written as data (a
 * document's options are JSON: examples/server/openapi.options.json).
 */
function tokenPlan(value: unknown): TokenServicePlan | undefined {
  if (isTokenService(value)) return value.endpoints;
  const token = objectOr(value);
  if (!token) return undefined;
  return {
    token: typeof token.path === 'string' ? token.path : TOKEN_PATH,
    revocation: endpointPath(token.revocationPath, REVOCATION_PATH),
    introspection: endpointPath(token.introspectionPath, INTROSPECTION_PATH),
    metadata: metadataPathOf(token),
    dpop: token.dpop !== undefined && token.dpop !== false,
  };
}

/** The two headers report-only sends as their `-Report-Only` variants (reportOnlySecurityHeaders()). */
const SOFTENED_HEADERS = new Set(['Content-Security-Policy', 'Cross-Origin-Embedder-Policy']);

/** Which requests run report-only: none, some (`reportOnly: { when }`), or every one. */
type ReportOnlyReach = 'none' | 'some' | 'every';

function reportOnlyReach(value: unknown): ReportOnlyReach {
  if (value === undefined || value === false) return 'none';
  return isObject(value) && value.when !== undefined ? 'some' : 'every';
}

/** The security headers with a value of their own, from the table, once. */
const FIXED_SECURITY_HEADERS = fixedSecurityHeaders(SECURITY_HEADER_TABLE);

function securityHeadersPlan(value: unknown, reach: ReportOnlyReach): Plan['securityHeaders'] {
  const options = stageGiven('securityHeaders', value) ? (objectOr(value) ?? {}) : undefined;
  const sent: (readonly [string, string | undefined])[] = [];
  for (const { header: name, value: fixed, option, alwaysSent } of FIXED_SECURITY_HEADERS) {
    if (alwaysSent) sent.push([name, fixed]);
    else if (options && options[option] !== false) {
      const value = options[option] === undefined ? fixed : undefined;
      if (reach !== 'every' || !SOFTENED_HEADERS.has(name)) sent.push([name, value]);
      if (reach !== 'none' && SOFTENED_HEADERS.has(name)) sent.push([`${name}-Report-Only`, value]);
    }
  }
  return sent;
}

/** Reads the options as conventions() reads them: absent is the stage's default, `false` is off. */
export function readPlan(options: WithConventionsOptions | undefined): Plan {
  // conventions()'s keys and `paging`: a typo (`cors` for `corsPolicy`) is refused, never ignored.
  const given: Json = readOptions<Json>('withConventions', options, [...CONVENTIONS_OPTION_NAMES, 'paging']);
  const caching = stageGiven('caching', given.caching) ? (objectOr(given.caching) ?? {}) : undefined;
  const cacheControl = caching?.defaultCacheControl;
  const paging = objectOr(given.paging) ?? {};
  const maxLimit = typeof paging.maxLimit === 'number' ? paging.maxLimit : PAGING_DEFAULTS.maxLimit;
  const cors = objectOr(given.corsPolicy);
  // Report-only refuses nothing for the limit, cross-site writes or CSRF; its headers stay.
  const reach = reportOnlyReach(given.reportOnly);
  return {
    securityHeaders: securityHeadersPlan(given.securityHeaders, reach),
    rateLimit: stageGiven('rateLimit', given.rateLimit),
    limitRefuses: stageGiven('rateLimit', given.rateLimit) && reach !== 'every',
    cors: cors !== undefined && (cors.origins === '*' || (Array.isArray(cors.origins) && cors.origins.length > 0)),
    bearer: stageGiven('bearerAuth', given.bearerAuth),
    crossSite:
      reach !== 'every' &&
      (stageGiven('crossSiteProtection', given.crossSiteProtection) || stageGiven('csrfProtection', given.csrfProtection)),
    etag: caching !== undefined && caching.etag !== false,
    cacheControl: caching === undefined || cacheControl === false ? undefined : String(cacheControl ?? CACHE_CONTROL_SENSITIVE),
    maxLimit,
    defaultLimit: typeof paging.defaultLimit === 'number' ? paging.defaultLimit : defaultLimitFor(maxLimit),
    token: tokenPlan(given.tokenRouter),
  };
}
