import type { RequestHandler } from 'express';
import { contentSecurityPolicy } from 'helmet';
import { readOptions } from '../config/options.js';
import { getResponseHeader, setResponseHeader } from '../http/response-headers.js';
import { type SecurityHeadersOptions, securityHeaders } from './security-headers.js';

/** The report-only twin of the embedding restriction (rule 11.12); helmet has no report-only mode for it. */
export const COEP_REPORT_ONLY_HEADER = 'Cross-Origin-Embedder-Policy-Report-Only';

// Rule 11.2's policy, as securityHeaders() writes it by default.
type CspOptions = Exclude<SecurityHeadersOptions['contentSecurityPolicy'], false | undefined>;
const DEFAULT_CSP: CspOptions = {
  useDefaults: false,
  directives: { defaultSrc: contentSecurityPolicy.dangerouslyDisableDefaultSrc, scriptSrc: ["'self'"] },
};

/**
 * securityHeaders() for report-only mode: the two headers that can break a
 * page rather than protect an API answer are sent as their `-Report-Only`
 * variants, so a browser reports what they would block and blocks nothing:
 * `Content-Security-Policy-Report-Only` (helmet's own `reportOnly`) and
 * `Cross-Origin-Embedder-Policy-Report-Only`. Every other header is as
 * securityHeaders(options) sends it. A header left out (`false`) stays out.
 */
export function reportOnlySecurityHeaders(options?: Readonly<SecurityHeadersOptions>): RequestHandler {
  const given = readOptions<SecurityHeadersOptions>('securityHeaders', options, Object.keys(options ?? {}) as never[]);
  const csp = given.contentSecurityPolicy;
  const coep = given.crossOriginEmbedderPolicy;
  const headers = securityHeaders({
    ...given,
    contentSecurityPolicy: csp === false ? false : ({ ...(csp ?? DEFAULT_CSP), reportOnly: true } as CspOptions),
    crossOriginEmbedderPolicy: false,
  });
  const coepValue = coep === false ? undefined : (coep?.policy ?? 'require-corp');
  if (coepValue === undefined) return headers;
  return function reportOnlySecurityHeadersMiddleware(req, res, next) {
    if (!res.headersSent && getResponseHeader(res, COEP_REPORT_ONLY_HEADER) === undefined) {
      setResponseHeader(res, COEP_REPORT_ONLY_HEADER, coepValue);
    }
    headers(req, res, next);
  };
}
