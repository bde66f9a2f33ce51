import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { apiError } from '../errors/api-error.js';
import { refuse } from '../errors/refuse.js';
import { inOriginList } from '../http/origins.js';
import { getResponseHeader, setResponseHeader, setResponseHeaders } from '../http/response-headers.js';
import { type CorsPolicyConfiguration, type CorsPolicyOptions, readCorsPolicyOptions } from './options.js';
import { unlistedHeaderWarning } from './unlisted-headers.js';

/**
 * the conventions' "Cross-origin (CORS)", Preflight: "Response 200, `Content-Length: 0`,
 * `Content-Type: text/plain`".
 */
export const PREFLIGHT_STATUS = 200 as const;
export const PREFLIGHT_CONTENT_TYPE = 'text/plain' as const;

/**
 * What a preflight from an allowed origin carries besides the origin itself:
 * fixed for the policy, so the comma lists are joined here, once (docs/conventions.md
 * rule 8.3: allowed methods and headers as comma lists, the max age in
 * integer seconds). The same headers,
 * in the same order, as the `cors` package writes for these options.
 */
function preflightHeaders(config: CorsPolicyConfiguration): string[] {
  const headers: string[] = [];
  if (config.credentials) headers.push('Access-Control-Allow-Credentials', 'true');
  headers.push(
    'Access-Control-Allow-Methods',
    config.methods.join(', '),
    'Access-Control-Allow-Headers',
    config.allowedHeaders.join(', '),
    'Access-Control-Max-Age',
    String(config.maxAge),
    'Access-Control-Expose-Headers',
    config.exposedHeaders.join(', '),
  );
  return headers;
}

/**
 * What an actual (not preflight) request from an allowed origin carries,
 * besides the origin itself and `Vary: Origin`: fixed for the policy, so
 * computed once.
 */
function actualRequestHeaders(config: CorsPolicyConfiguration): string[] {
  const headers: string[] = [];
  if (config.credentials) headers.push('Access-Control-Allow-Credentials', 'true');
  if (config.exposedHeaders.length > 0) headers.push('Access-Control-Expose-Headers', config.exposedHeaders.join(', '));
  return headers;
}

/** `Vary: Origin` on every answer, allowed or not, so a shared cache never serves one origin's answer to another. */
function varyOnOrigin(res: Response): void {
  if (res.headersSent) return;
  // The usual case, no Vary yet, written directly; otherwise appended
  // through Express's res.vary() (the vary package parses the list).
  if (getResponseHeader(res, 'Vary') === undefined) setResponseHeader(res, 'Vary', 'Origin');
  else res.vary('Origin');
}

/**
 * An origin that is not allowed. An actual request goes on without CORS
 * headers: the browser keeps its answer from the calling script. A
 * preflight is refused here.
 */
function refuseOrigin(req: Request, res: Response, next: NextFunction, origin: string, preflight: boolean): void {
  if (preflight) refuse(req, res, next, apiError('corsOriginRefused', { detail: { origin } }));
  else next();
}

/** The headers of an actual request from an allowed origin. */
function allowActualRequest(res: Response, allowOrigin: string, fixed: readonly string[]): void {
  if (res.headersSent) return;
  setResponseHeader(res, 'Access-Control-Allow-Origin', allowOrigin);
  setResponseHeaders(res, fixed);
}

/** A preflight from an allowed origin: its headers, then the conventions' 200 with no body. */
function answerPreflight(res: Response, allowOrigin: string, fixed: readonly string[]): void {
  setResponseHeader(res, 'Access-Control-Allow-Origin', allowOrigin);
  setResponseHeaders(res, fixed);
  res.statusCode = PREFLIGHT_STATUS;
  setResponseHeader(res, 'Content-Type', PREFLIGHT_CONTENT_TYPE);
  setResponseHeader(res, 'Content-Length', '0');
  res.end();
}

/**
 * CORS (the conventions' "Cross-origin (CORS)"). Every header it writes is
 * fixed for the policy but the allowed origin, so the lists are joined once at
 * construction and written with `setHeader`; the `cors` package would only
 * have joined them (and it cannot answer a preflight as the conventions ask).
 * What it does:
 * - the origin check: exact origins from an allow-list (a Set lookup),
 *   anchored patterns, `null` never; `Vary: Origin` on every answer, allowed
 *   or not, so a shared cache never serves one origin's answer to another;
 * - preflight as the conventions say (200, `Content-Length: 0`,
 *   `Content-Type: text/plain`; `cors` answers 204 without a type);
 *   a preflight from an origin that is not allowed gets 403 JSON;
 * - never `*` together with credentials (a configuration error at start-up);
 * - outside production, a request header a preflight asks for that
 *   `allowedHeaders` lacks is named once (EAC_CORS_HEADER_NOT_ALLOWED).
 */
export function corsPolicy(options: Readonly<CorsPolicyOptions>): RequestHandler {
  const config = readCorsPolicyOptions(options);
  const { anyOrigin, allowed } = config;
  const preflightFixed = preflightHeaders(config);
  const actualHeaders = actualRequestHeaders(config);
  const warnOfUnlistedHeaders = unlistedHeaderWarning(config.allowedHeaders);

  return function corsPolicyMiddleware(req, res, next) {
    const origin = req.headers.origin;
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (!anyOrigin) varyOnOrigin(res);
    if (origin === undefined) {
      next();
      return;
    }
    if (!anyOrigin && (origin === 'null' || !inOriginList(allowed, origin))) {
      refuseOrigin(req, res, next, origin, preflight);
      return;
    }
    if (!preflight) {
      allowActualRequest(res, anyOrigin ? '*' : origin, actualHeaders);
      next();
      return;
    }
    warnOfUnlistedHeaders(req, origin);
    answerPreflight(res, anyOrigin ? '*' : origin, preflightFixed);
  };
}
