import type { Request, RequestHandler, Response } from 'express';
import helmet, { contentSecurityPolicy, type HelmetOptions } from 'helmet';
import { ConfigurationError } from '../config/configuration-error.js';
import { checkBoolean, invalidOption, isProductionEnvironment, type OptionHints, readOptions } from '../config/options.js';
import { removeResponseHeader, removeResponseHeaders, setResponseHeader } from '../http/response-headers.js';
import { SECURITY_HEADER_TABLE, type SecurityHeaderRow } from './defaults.js';
import { sayReplacedSince, securityHeadersBefore, writeOverEarlierHeaders } from './header-precedence.js';

/**
 * docs/conventions.md rule 11.13: "Headers that are not used: `X-XSS-Protection` (if sent at all,
 * value `0`), `Public-Key-Pins`, `Expect-CT`, `Feature-Policy` (replaced by
 * `Permissions-Policy`), `Pragma`". Removed from every response that passes
 * securityHeaders() (the token error response sets its `Pragma` later).
 */
export const UNUSED_SECURITY_HEADERS = ['Public-Key-Pins', 'Expect-CT', 'Feature-Policy', 'X-XSS-Protection'] as const;

type Option<K extends keyof HelmetOptions> = Exclude<HelmetOptions[K], boolean | undefined> | false;

/** Options of securityHeaders(). Each header takes helmet's own options for it, or `false` to leave it out. */
export interface SecurityHeadersOptions {
  /**
   * Default: `{ useDefaults: false, directives: { defaultSrc: dangerouslyDisableDefaultSrc, scriptSrc: ["'self'"] } }`,
   * written `script-src 'self'`.
   */
  contentSecurityPolicy?: Option<'contentSecurityPolicy'>;
  /** Default: `{ maxAge: 63072000, includeSubDomains: true }`, written `max-age=63072000; includeSubDomains`. */
  strictTransportSecurity?: Option<'strictTransportSecurity'>;
  /** Default: `{ policy: 'no-referrer' }`. */
  referrerPolicy?: Option<'referrerPolicy'>;
  /** Default: `{ policy: 'same-origin' }`. */
  crossOriginOpenerPolicy?: Option<'crossOriginOpenerPolicy'>;
  /** Default: `{ policy: 'same-origin' }`. */
  crossOriginResourcePolicy?: Option<'crossOriginResourcePolicy'>;
  /** Default: `{ policy: 'require-corp' }`. */
  crossOriginEmbedderPolicy?: Option<'crossOriginEmbedderPolicy'>;
  /** Default: `{ permittedPolicies: 'none' }`. */
  xPermittedCrossDomainPolicies?: Option<'xPermittedCrossDomainPolicies'>;
  /** Default: `{ allow: false }`, written `off`. */
  xDnsPrefetchControl?: Option<'xDnsPrefetchControl'>;
  /** `X-Frame-Options`, written in lower case (docs/conventions.md rule 11.4). Default: `'deny'`. */
  xFrameOptions?: 'deny' | 'sameorigin' | false;
  /** `X-Content-Type-Options: nosniff`. Default: `true`. */
  xContentTypeOptions?: boolean;
  /** `Permissions-Policy`, written as given (for example `'camera=(), geolocation=()'`). Default: `false` (not sent). */
  permissionsPolicy?: string | false;
  /** helmet's `Origin-Agent-Cluster: ?1`; not in docs/conventions.md section 11. Default: `false`. */
  originAgentCluster?: boolean;
}

const FACTORY = 'securityHeaders';
type Row = (typeof SECURITY_HEADER_TABLE)[number];
const ROWS: readonly SecurityHeaderRow[] = SECURITY_HEADER_TABLE;
const OPTION_NAMES = ROWS.map((row) => row.option);

// The documented options are the table's, no more and no less: a row without its option fails to compile here.
type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const OPTIONS_ARE_THE_TABLES: SameKeys<keyof SecurityHeadersOptions, Row['option']> = true;
void OPTIONS_ARE_THE_TABLES;

const ALWAYS_REMOVED = "securityHeaders() always removes `X-Powered-By` (helmet's `xPoweredBy`/`hidePoweredBy`).";
const NO_XSS_PROTECTION =
  'There is no such option: `X-XSS-Protection` is never sent (docs/conventions.md rule 11.13 lists it as unused).';
const NO_DOWNLOAD_OPTIONS =
  'There is no such option: `X-Download-Options` is never sent (docs/conventions.md section 11 does not list it).';

/**
 * helmet's own names that differ from this factory's: its older aliases,
 * and the headers this factory always writes or never writes
 * (docs/coming-from-helmet-cors-express-rate-limit.md).
 */
export const SECURITY_HEADERS_HINTS: OptionHints = {
  hsts: "helmet's `hsts` is `strictTransportSecurity` here (helmet's options for it, or false).",
  frameguard: "helmet's `frameguard` is `xFrameOptions` here: 'deny' (the default), 'sameorigin' or false.",
  noSniff: "helmet's `noSniff` is `xContentTypeOptions` here (true or false).",
  dnsPrefetchControl: "helmet's `dnsPrefetchControl` is `xDnsPrefetchControl` here.",
  permittedCrossDomainPolicies: "helmet's `permittedCrossDomainPolicies` is `xPermittedCrossDomainPolicies` here.",
  hidePoweredBy: ALWAYS_REMOVED,
  xPoweredBy: ALWAYS_REMOVED,
  xssFilter: NO_XSS_PROTECTION,
  xXssProtection: NO_XSS_PROTECTION,
  ieNoOpen: NO_DOWNLOAD_OPTIONS,
  xDownloadOptions: NO_DOWNLOAD_OPTIONS,
};

// helmet's options that reproduce the table's values exactly, one per row helmet writes.
const DEFAULTS = {
  // helmet insists on a default-src unless told explicitly that the conventions'
  // policy has none.
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: contentSecurityPolicy.dangerouslyDisableDefaultSrc, scriptSrc: ["'self'"] },
  },
  strictTransportSecurity: { maxAge: 63072000, includeSubDomains: true, preload: false },
  referrerPolicy: { policy: 'no-referrer' },
  crossOriginOpenerPolicy: { policy: 'same-origin' },
  crossOriginResourcePolicy: { policy: 'same-origin' },
  crossOriginEmbedderPolicy: { policy: 'require-corp' },
  xPermittedCrossDomainPolicies: { permittedPolicies: 'none' },
  xDnsPrefetchControl: { allow: false },
} as const satisfies HelmetOptions & Record<Extract<Row, { takes: 'helmet' }>['option'], object>;

/** Rule 11.2's policy as helmet's options (what reportOnlySecurityHeaders() reports on). */
export const DEFAULT_CSP_OPTIONS: Exclude<SecurityHeadersOptions['contentSecurityPolicy'], false | undefined> =
  DEFAULTS.contentSecurityPolicy;
/** Rule 11.12's embedding policy. */
export const DEFAULT_COEP_POLICY: string = DEFAULTS.crossOriginEmbedderPolicy.policy;

/** Every header this stage may write, for the replaced-value warning when its values are made per request. */
export const WATCHED_HEADERS: readonly string[] = ROWS.map((row) => row.header);

const isPlainObject = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The security response headers of docs/conventions.md section 11, on every response. helmet writes
 * them (its values computed once, when this is called); this adds the
 * settings the conventions need, `X-Frame-Options` in lower case (rule 11.4),
 * `Permissions-Policy`, and removes the headers rule 11.13 lists as unused.
 * Its values replace what a middleware in front set (order means
 * precedence); a route after it sets its own over them.
 */
export function securityHeaders(options?: Readonly<SecurityHeadersOptions>): RequestHandler {
  // Order means precedence: these replace what a middleware in front set
  // (helmet's own defaults among them); outside production, once per
  // header, a replaced value different from ours is said.
  return securityHeadersWriter(options, !isProductionEnvironment());
}

/**
 * securityHeaders() itself; `watch` says whether a replaced value is said
 * (reportOnlySecurityHeaders() sets the replaced values back, and says that).
 */
export function securityHeadersWriter(options: Readonly<SecurityHeadersOptions> | undefined, watch: boolean): RequestHandler {
  const { writeHelmetHeaders, extra, recorded } = configure(FACTORY, options);
  if (recorded !== undefined) {
    // Work once, at construction: helmet builds every value when it is
    // called, and with no function among the CSP directives its middleware
    // only writes those fixed values; what it wrote once is written again
    // here, without running its chain of twelve middlewares per request.
    const removed = [...UNUSED_SECURITY_HEADERS, ...recorded.removed];
    const written = [...extra, ...recorded.written].flat();
    return function securityHeadersMiddleware(_req, res, next) {
      if (!res.headersSent) {
        removeResponseHeaders(res, removed);
        writeOverEarlierHeaders(res, written, watch);
      }
      next();
    };
  }

  return function securityHeadersMiddleware(req, res, next) {
    if (res.headersSent) {
      next();
      return;
    }
    for (const name of UNUSED_SECURITY_HEADERS) removeResponseHeader(res, name);
    // Values made per request (a CSP nonce): what was there before is compared once helmet wrote.
    const earlier = watch ? securityHeadersBefore(res, WATCHED_HEADERS) : undefined;
    for (const [name, value] of extra) setResponseHeader(res, name, value);
    if (earlier === undefined || earlier.size === 0) {
      writeHelmetHeaders(req, res, next);
      return;
    }
    writeHelmetHeaders(req, res, (error?: unknown) => {
      sayReplacedSince(res, earlier);
      next(error);
    });
  };
}

/**
 * The headers securityHeaders(options) writes on every response, as fixed
 * name/value pairs computed once: for answers written where no middleware
 * runs (answerParserErrors()). Throws a ConfigurationError when a CSP
 * directive is a function (a nonce per request has no value without one).
 */
export function securityHeaderValues(
  options?: Readonly<SecurityHeadersOptions>,
  factory = 'securityHeaderValues',
): readonly (readonly [string, string])[] {
  const { extra, recorded } = configure(factory, options);
  if (recorded === undefined) {
    const problem = 'must have fixed directives here; a directive given as a function has no value before a request exists.';
    throw new ConfigurationError('EAC_OPTION_INVALID', `${factory}(options): \`contentSecurityPolicy\` ${problem}`, {
      option: 'contentSecurityPolicy',
      problem,
    });
  }
  return [...extra, ...recorded.written];
}

interface Configuration {
  readonly writeHelmetHeaders: RequestHandler;
  readonly extra: readonly [string, string][];
  /** What helmet writes, when it is the same on every response. */
  readonly recorded: { written: [string, string][]; removed: string[] } | undefined;
}

/** Turns securityHeaders()'s options into helmet's middleware and the fixed headers added to it. */
function configure(factory: string, options: unknown): Configuration {
  const given = readOptions<Record<string, unknown>>(factory, options, OPTION_NAMES, SECURITY_HEADERS_HINTS);
  // helmet's writers of headers this package writes itself, or never writes, are off; X-Powered-By is removed.
  const helmetOptions: Record<string, unknown> = {
    xFrameOptions: false,
    xXssProtection: false,
    xDownloadOptions: false,
    xPoweredBy: true,
    xContentTypeOptions: false,
  };
  const extra: [string, string][] = [];
  for (const row of ROWS) {
    if (row.takes === 'helmet' || row.takes === 'helmet-switch')
      helmetOptions[row.option] = helmetSetting(factory, row, given[row.option]);
    else {
      const value = ownValue(factory, row, given[row.option]);
      if (value !== undefined) extra.push([row.header, value]);
    }
  }
  let writeHelmetHeaders: ReturnType<typeof helmet>;
  try {
    writeHelmetHeaders = helmet(helmetOptions as HelmetOptions);
  } catch (error) {
    // helmet checks its values when it is called: report its finding as ours.
    throw new ConfigurationError('EAC_OPTION_INVALID', `${factory}(options): ${(error as Error).message}`);
  }
  const recorded = hasDynamicDirective(helmetOptions.contentSecurityPolicy) ? undefined : record(writeHelmetHeaders);
  return { writeHelmetHeaders, extra, recorded };
}

/** What helmet is given for a row it writes: helmet's options for the header (the conventions' by default), or a switch. */
function helmetSetting(factory: string, row: SecurityHeaderRow, given: unknown): unknown {
  if (row.takes === 'helmet-switch') return checkBoolean(factory, row.option, given ?? row.value !== undefined);
  const value = given ?? DEFAULTS[row.option as keyof typeof DEFAULTS];
  if (value !== false && !isPlainObject(value))
    invalidOption(factory, row.option, value, "helmet's options object for this header, or false");
  return value;
}

/** The value this package writes for one of its rows, or undefined when the header is left out. */
function ownValue(factory: string, row: SecurityHeaderRow, given: unknown): string | undefined {
  const { takes } = row;
  if (takes === 'switch') return checkBoolean(factory, row.option, given ?? row.value !== undefined) ? row.value : undefined;
  const value = given ?? row.value ?? false;
  if (value === false) return undefined;
  if (Array.isArray(takes)) {
    if (!takes.includes(value as string))
      invalidOption(factory, row.option, value, `${takes.map((item) => `'${item}'`).join(', ')} or false`);
  } else if (typeof value !== 'string' || value.trim() === '' || /[\r\n]/.test(value)) {
    invalidOption(factory, row.option, value, `a ${row.header} value or false`);
  }
  return value as string;
}

/** A CSP directive given as a function (a nonce per request) makes helmet's output differ per request. */
function hasDynamicDirective(csp: unknown): boolean {
  if (typeof csp !== 'object' || csp === null) return false;
  const directives = (csp as { directives?: Record<string, unknown> }).directives;
  if (typeof directives !== 'object' || directives === null) return false;
  return Object.values(directives).some(
    (value) => typeof value === 'function' || (Array.isArray(value) && value.some((item) => typeof item === 'function')),
  );
}

/**
 * What helmet's middleware writes, recorded from one run against a response
 * that only takes notes (helmet calls nothing but setHeader and removeHeader).
 * `undefined` when it did anything else or did not call `next` at once.
 */
function record(middleware: RequestHandler): { written: [string, string][]; removed: string[] } | undefined {
  const written: [string, string][] = [];
  const removed: string[] = [];
  const notes = {
    setHeader(name: string, value: unknown) {
      if (typeof value !== 'string') throw new TypeError('not a fixed string value');
      written.push([name, value]);
    },
    removeHeader(name: string) {
      removed.push(name);
    },
  };
  let passed = false;
  try {
    middleware({} as Request, notes as unknown as Response, (error?: unknown) => {
      passed = error === undefined;
    });
  } catch {
    return undefined;
  }
  return passed ? { written, removed } : undefined;
}
