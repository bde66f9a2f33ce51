export { corsPolicy } from './cors-policy.js';
export {
  CORS_DEFAULT_ALLOWED_HEADERS,
  CORS_DEFAULT_EXPOSED_HEADERS,
  CORS_DEFAULT_METHODS,
  type CorsPolicyOptions,
} from './options.js';
export { type RequireXhrOptions, requireXhr } from './require-xhr.js';
