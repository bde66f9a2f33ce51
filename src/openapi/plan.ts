import { readOptions } from '../config/options.js';
import { type DocumentPart, documentPartOf } from '../document-parts.js';
import { CACHE_CONTROL_SENSITIVE } from '../http/spec.js';
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
  /** The part of the document the `tokenRouter` stage's package describes (docs/extend.md), when the stage is on. */
  readonly tokenRouter: DocumentPart | undefined;
}

const objectOr = (value: unknown): Json | undefined => (isObject(value) ? value : undefined);

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
    tokenRouter: documentPartOf('withConventions(options)', 'tokenRouter', given.tokenRouter),
  };
}
