export { type ClearSiteDataOptions, clearSiteData } from './clear-site-data.js';
export { cookieValue, InsecureCookieError, type SecureCookiesOptions, secureCookies } from './cookies.js';
export { type CrossSiteProtectionOptions, crossSiteProtection } from './cross-site.js';
export {
  type CsrfProtectionOptions,
  type CsrfTokens,
  type CsrfTokensOptions,
  csrfProtection,
  csrfTokens,
} from './csrf.js';
export { type AnswerParserErrorsOptions, answerParserErrors } from './parser-errors.js';
export { reportOnlySecurityHeaders } from './report-only-headers.js';
export { type SecurityHeadersOptions, securityHeaders, securityHeaderValues } from './security-headers.js';
export { type ServerTimeoutsOptions, serverTimeouts } from './server-timeouts.js';
