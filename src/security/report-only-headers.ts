import type { RequestHandler } from 'express';
import { setDefaultHeaders } from '../http/response-headers.js';
import { keepEarlierHeaders, securityHeadersBefore } from './header-precedence.js';
import {
  DEFAULT_COEP_POLICY,
  DEFAULT_CSP_OPTIONS,
  type SecurityHeadersOptions,
  securityHeaders,
  securityHeadersWriter,
  WATCHED_HEADERS,
} from './security-headers.js';

/** The report-only twin of the embedding restriction (rule 11.12); helmet has no report-only mode for it. */
export const COEP_REPORT_ONLY_HEADER = 'Cross-Origin-Embedder-Policy-Report-Only';

type CspOptions = Exclude<SecurityHeadersOptions['contentSecurityPolicy'], false | undefined>;

/**
 * securityHeaders() for report-only mode: the two headers that can break a
 * page rather than protect an API answer are sent as their `-Report-Only`
 * variants, so a browser reports what they would block and blocks nothing:
 * `Content-Security-Policy-Report-Only` (helmet's own `reportOnly`) and
 * `Cross-Origin-Embedder-Policy-Report-Only`. Every other header is as
 * securityHeaders(options) sends it. A header left out (`false`) stays out.
 * The options are checked as securityHeaders(options) checks them.
 */
export function reportOnlySecurityHeaders(options?: Readonly<SecurityHeadersOptions>): RequestHandler {
  // Built once for its checks (names, values, helmet's own): the enforcing stage never runs.
  securityHeaders(options);
  const given: SecurityHeadersOptions = { ...options };
  const csp = given.contentSecurityPolicy;
  const coep = given.crossOriginEmbedderPolicy;
  const headers = securityHeadersWriter(
    {
      ...given,
      contentSecurityPolicy: csp === false ? false : ({ ...(csp ?? DEFAULT_CSP_OPTIONS), reportOnly: true } as CspOptions),
      crossOriginEmbedderPolicy: false,
    },
    false,
  );
  const policy = coep === false ? undefined : (coep?.policy ?? DEFAULT_COEP_POLICY);
  // A fixed default (src/http/response-headers.ts): set now unless the response has it already.
  const coepDefault: readonly string[] | undefined = policy === undefined ? undefined : [COEP_REPORT_ONLY_HEADER, policy];
  return function reportOnlySecurityHeadersMiddleware(req, res, next) {
    if (res.headersSent) {
      next();
      return;
    }
    if (coepDefault !== undefined) setDefaultHeaders(res, coepDefault);
    // Report-only changes nothing a middleware in front set (a team's helmet): its values go out.
    const earlier = securityHeadersBefore(res, WATCHED_HEADERS);
    if (earlier.size === 0) {
      headers(req, res, next);
      return;
    }
    headers(req, res, (error?: unknown) => {
      keepEarlierHeaders(res, earlier);
      next(error);
    });
  };
}
