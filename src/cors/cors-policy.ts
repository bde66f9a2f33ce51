import cors from 'cors';
import type { RequestHandler } from 'express';
import { ConfigurationError } from '../config/configuration-error.js';
import { checkBoolean, checkInteger, invalidOption, type OptionHints, readOptions } from '../config/options.js';
import { apiError } from '../errors/api-error.js';
import { refuse } from '../errors/refuse.js';
import { inOriginList, type OriginList, readOriginList } from '../http/origins.js';
import { getResponseHeader, setResponseHeader, setResponseHeaders } from '../http/response-headers.js';

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

/**
 * the conventions' "Cross-origin (CORS)", Preflight: "Response 200, `Content-Length: 0`,
 * `Content-Type: text/plain`".
 */
export const PREFLIGHT_STATUS = 200 as const;
export const PREFLIGHT_CONTENT_TYPE = 'text/plain' as const;

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
// RFC 9110 §5.1 field names and §9.1 method names are tokens.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const checkTokens = (name: string, value: unknown): string[] => {
  if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string' || !TOKEN.test(v))) {
    invalidOption(FACTORY, name, value, 'a non-empty array of header or method names');
  }
  return [...(value as string[])];
};

/**
 * CORS (the conventions' "Cross-origin (CORS)"), built on the `cors` package, which
 * writes the `Access-Control-*` headers and `Vary`. What this adds:
 * - the origin check: exact origins from an allow-list (a Set lookup),
 *   anchored patterns, `null` never; `Vary: Origin` on every answer, allowed
 *   or not, so a shared cache never serves one origin's answer to another;
 * - preflight as the conventions say (200, `Content-Length: 0`,
 *   `Content-Type: text/plain`), where `cors` answers 204 without a type;
 *   a preflight from an origin that is not allowed gets 403 JSON;
 * - never `*` together with credentials (a configuration error at start-up).
 */
export function corsPolicy(options: Readonly<CorsPolicyOptions>): RequestHandler {
  const given = readOptions<CorsPolicyOptions>(FACTORY, options, OPTION_NAMES, CORS_POLICY_HINTS);
  const credentials = checkBoolean(FACTORY, 'credentials', given.credentials ?? true);
  const methods = checkTokens('methods', given.methods ?? CORS_DEFAULT_METHODS);
  const allowedHeaders = checkTokens('allowedHeaders', given.allowedHeaders ?? CORS_DEFAULT_ALLOWED_HEADERS);
  const exposedHeaders = checkTokens('exposedHeaders', given.exposedHeaders ?? CORS_DEFAULT_EXPOSED_HEADERS);
  const maxAge = checkInteger(FACTORY, 'maxAgeSeconds', given.maxAgeSeconds ?? 600, { min: 0 });

  const origins = given.origins;
  const anyOrigin = origins === '*';
  if (anyOrigin && credentials) {
    throw new ConfigurationError(
      'EAC_OPTIONS_CONFLICT',
      `${FACTORY}(options): \`origins: '*'\` cannot be combined with \`credentials: true\` (browsers reject it, and reflecting every origin with credentials lets any site act as the user); list the origins, or set credentials: false.`,
    );
  }
  let allowed: OriginList = { exact: new Set(), patterns: [] };
  if (!anyOrigin) {
    if (!Array.isArray(origins) || origins.length === 0) {
      invalidOption(FACTORY, 'origins', origins, "a non-empty array of origins or anchored RegExps, or '*'");
    }
    allowed = readOriginList(FACTORY, 'origins', origins as readonly unknown[]);
  }

  // Written once: comma lists (SPEC.md: "Access-Control-Allow-Methods (comma
  // list), Access-Control-Allow-Headers (comma list), Access-Control-Max-Age
  // (integer seconds)").
  const writeHeaders = cors({
    origin: anyOrigin ? '*' : true,
    credentials,
    methods: methods.join(', '),
    allowedHeaders: allowedHeaders.join(', '),
    exposedHeaders: exposedHeaders.join(', '),
    maxAge,
    preflightContinue: true,
  });

  // What cors writes on an actual (not preflight) request from an allowed
  // origin, besides the origin itself and `Vary: Origin` (written above):
  // fixed for the policy, so written here without running cors per request.
  const actualHeaders: string[] = [];
  if (credentials) actualHeaders.push('Access-Control-Allow-Credentials', 'true');
  if (exposedHeaders.length > 0) actualHeaders.push('Access-Control-Expose-Headers', exposedHeaders.join(', '));

  const isAllowed = (origin: string): boolean => inOriginList(allowed, origin);

  return function corsPolicyMiddleware(req, res, next) {
    const origin = req.headers.origin;
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (!anyOrigin && !res.headersSent) {
      // The usual case, no Vary yet, written directly; otherwise appended
      // through Express's res.vary() (the vary package parses the list).
      if (getResponseHeader(res, 'Vary') === undefined) setResponseHeader(res, 'Vary', 'Origin');
      else res.vary('Origin');
    }
    if (origin === undefined) {
      next();
      return;
    }
    if (!anyOrigin && (origin === 'null' || !isAllowed(origin))) {
      // An actual request goes on without CORS headers: the browser keeps
      // its answer from the calling script. A preflight is refused here.
      if (preflight) refuse(req, res, next, apiError('corsOriginRefused', { detail: { origin } }));
      else next();
      return;
    }
    if (!preflight) {
      if (!res.headersSent) {
        setResponseHeader(res, 'Access-Control-Allow-Origin', anyOrigin ? '*' : origin);
        setResponseHeaders(res, actualHeaders);
      }
      next();
      return;
    }
    // A preflight: cors writes its answer's headers.
    writeHeaders(req, res, (error?: unknown) => {
      if (error) {
        next(error);
        return;
      }
      res.statusCode = PREFLIGHT_STATUS;
      res.setHeader('Content-Type', PREFLIGHT_CONTENT_TYPE);
      res.setHeader('Content-Length', '0');
      res.end();
    });
  };
}
