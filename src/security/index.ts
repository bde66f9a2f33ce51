export { CLEAR_SITE_DATA_TYPES, type ClearSiteDataOptions, clearSiteData } from './clear-site-data.js';
export { COOKIE_DEFAULTS, cookieValue, InsecureCookieError, type SecureCookiesOptions, secureCookies } from './cookies.js';
export { type CrossSiteProtectionOptions, crossSiteProtection, SEC_FETCH_SITE } from './cross-site.js';
export {
  CSRF_FIELD,
  CSRF_HEADER,
  CSRF_SAFE_METHODS,
  type CsrfProtectionOptions,
  type CsrfTokens,
  type CsrfTokensOptions,
  csrfProtection,
  csrfTokens,
} from './csrf.js';
export { type AnswerParserErrorsOptions, answerParserErrors } from './parser-errors.js';
export { COEP_REPORT_ONLY_HEADER, reportOnlySecurityHeaders } from './report-only-headers.js';
export {
  SECURITY_HEADERS,
  type SecurityHeadersOptions,
  securityHeaders,
  securityHeaderValues,
  UNUSED_SECURITY_HEADERS,
} from './security-headers.js';
export { SERVER_TIMEOUTS, type ServerTimeoutsOptions, serverTimeouts } from './server-timeouts.js';
