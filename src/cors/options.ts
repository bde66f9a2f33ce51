import { ConfigurationError } from '../config/configuration-error.js';
import { checkBoolean, checkInteger, invalidOption, type OptionHints, readOptions } from '../config/options.js';
import { type OriginList, readOriginList } from '../http/origins.js';

/** The conventions' "Methods" table: every method the API answers. */
export const CORS_DEFAULT_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * Request headers a browser script may send cross-origin by default: the
 * ones the conventions and this library read (`Authorization` for bearer tokens,
 * `X-Requested-With` for browser-script-only endpoints, `X-HTTP-Method-Override`,
 * the CSRF header, and the conditional-request headers).
 */
export const CORS_DEFAULT_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'CSRF-Token',
  'If-Match',
  'If-Modified-Since',
  'If-None-Match',
  'If-Unmodified-Since',
  'X-HTTP-Method-Override',
  'X-Requested-With',
] as const;

/** Response headers a browser script may read by default, beyond the CORS-safelisted ones. */
export const CORS_DEFAULT_EXPOSED_HEADERS = ['ETag', 'Location', 'RateLimit', 'RateLimit-Policy', 'Retry-After'] as const;

/** Default `Access-Control-Max-Age` of a preflight, in seconds. */
const DEFAULT_MAX_AGE_SECONDS = 600;

/** Options of corsPolicy(). */
export interface CorsPolicyOptions {
  /**
   * Origins allowed cross-origin: exact origins (`'https://app.example.com'`,
   * compared as whole strings, never by prefix or substring), anchored
   * RegExps (`/^https:\/\/[a-z]+\.example\.com$/`; a pattern must start with
   * `^` and end with `$`), or `'*'` for every origin (only without
   * credentials). Required: no default.
   */
  origins: readonly (string | RegExp)[] | '*';
  /**
   * Send `Access-Control-Allow-Credentials: true`, so cookies and
   * `Authorization` may be used (the conventions' "Credentials"). Default: `true`.
   */
  credentials?: boolean;
  /** `Access-Control-Allow-Methods` of a preflight. Default: GET, HEAD, POST, PUT, PATCH, DELETE. */
  methods?: readonly string[];
  /** `Access-Control-Allow-Headers` of a preflight. Default: `CORS_DEFAULT_ALLOWED_HEADERS`. */
  allowedHeaders?: readonly string[];
  /** `Access-Control-Expose-Headers` of an actual response. Default: `CORS_DEFAULT_EXPOSED_HEADERS`. */
  exposedHeaders?: readonly string[];
  /** `Access-Control-Max-Age` of a preflight, in seconds (an integer, 0 or more). Default: `600`. */
  maxAgeSeconds?: number;
}

const FACTORY = 'corsPolicy';
const OPTION_NAMES = ['origins', 'credentials', 'methods', 'allowedHeaders', 'exposedHeaders', 'maxAgeSeconds'] as const;

/**
 * What corsPolicy() answers to an old name of its options and to the names
 * cors users bring (docs/coming-from-helmet-cors-express-rate-limit.md).
 */
export const CORS_POLICY_HINTS: OptionHints = {
  maxAge: 'It is now `maxAgeSeconds` (seconds).',
  origin:
    "cors's `origin` is `origins` here: an array of exact origins or anchored RegExps, or '*' (without credentials); no function and no `true` that reflects every origin.",
  optionsSuccessStatus:
    'There is no `optionsSuccessStatus`: a preflight is always answered 200 with `Content-Length: 0` and `Content-Type: text/plain` (docs/conventions.md §8.3), where cors answers 204.',
  preflightContinue:
    'There is no `preflightContinue`: corsPolicy() answers every preflight itself; it never reaches your routes.',
  headers: "cors's `headers` is `allowedHeaders` here.",
};

/** corsPolicy()'s options, checked, with their defaults. */
export interface CorsPolicyConfiguration {
  /** `origins: '*'`: every origin, no `Vary: Origin`, no credentials. */
  readonly anyOrigin: boolean;
  /** The allowed origins; empty when `anyOrigin`. */
  readonly allowed: OriginList;
  readonly credentials: boolean;
  readonly methods: readonly string[];
  readonly allowedHeaders: readonly string[];
  readonly exposedHeaders: readonly string[];
  /** `Access-Control-Max-Age`, in seconds. */
  readonly maxAge: number;
}

// RFC 9110 §5.1 field names and §9.1 method names are tokens.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const checkTokens = (name: string, value: unknown): string[] => {
  if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string' || !TOKEN.test(v))) {
    invalidOption(FACTORY, name, value, 'a non-empty array of header or method names');
  }
  return [...(value as string[])];
};

/** The allowed origins of `origins`, refusing `'*'` with credentials (never both). */
function readOrigins(origins: unknown, credentials: boolean): OriginList {
  if (origins === '*') {
    if (credentials) {
      throw new ConfigurationError(
        'EAC_OPTIONS_CONFLICT',
        `${FACTORY}(options): \`origins: '*'\` cannot be combined with \`credentials: true\` (browsers reject it, and reflecting every origin with credentials lets any site act as the user); list the origins, or set credentials: false.`,
      );
    }
    return { exact: new Set(), patterns: [] };
  }
  if (!Array.isArray(origins) || origins.length === 0) {
    invalidOption(FACTORY, 'origins', origins, "a non-empty array of origins or anchored RegExps, or '*'");
  }
  return readOriginList(FACTORY, 'origins', origins as readonly unknown[]);
}

/** Turns corsPolicy()'s options into its configuration, or throws a ConfigurationError at start-up. */
export function readCorsPolicyOptions(options: unknown): CorsPolicyConfiguration {
  const given = readOptions<CorsPolicyOptions>(FACTORY, options, OPTION_NAMES, CORS_POLICY_HINTS);
  const credentials = checkBoolean(FACTORY, 'credentials', given.credentials ?? true);
  const methods = checkTokens('methods', given.methods ?? CORS_DEFAULT_METHODS);
  const allowedHeaders = checkTokens('allowedHeaders', given.allowedHeaders ?? CORS_DEFAULT_ALLOWED_HEADERS);
  const exposedHeaders = checkTokens('exposedHeaders', given.exposedHeaders ?? CORS_DEFAULT_EXPOSED_HEADERS);
  const maxAge = checkInteger(FACTORY, 'maxAgeSeconds', given.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS, { min: 0 });
  const allowed = readOrigins(given.origins, credentials);
  return { anyOrigin: given.origins === '*', allowed, credentials, methods, allowedHeaders, exposedHeaders, maxAge };
}
