/**
 * express-api-conventions: Express middlewares that make a service follow
 * the API conventions written out in docs/conventions.md (every rule
 * numbered). The root holds what an app needs to mount the conventions and
 * write its routes; each module's middlewares and their option types are on
 * its own subpath (`express-api-conventions/cors`, `/oauth2`, ...). The root
 * loads no token service and no ajv (test/meta/load.test.ts).
 */

export type { AuthContext } from './auth-context.js';
export {
  type CacheIntent,
  cacheControl,
  checkPreconditions,
  entityTag,
  notModified,
  type PreconditionCheckOptions,
  type PreconditionsOptions,
  preconditions,
  setValidators,
  type Validators,
} from './caching/index.js';
export { ConfigurationError, type ConfigurationErrorCode } from './config/configuration-error.js';
export { type LibraryWarning, setWarningHandler, type WarningHandler } from './config/warnings.js';
export {
  ApiError,
  type ApiErrorInit,
  apiError,
  type ConventionExceptions,
  type ConventionReport,
  conventionExceptions,
  type ErrorHandlerOptions,
  type ErrorItem,
  type ErrorName,
  type ExceptionName,
  errorHandler,
  isApiError,
  type NotFoundOptions,
  notFound,
  type ReportOnlyOptions,
  storeUnavailable,
} from './errors/index.js';
export {
  SECURITY_EVENTS,
  SECURITY_EVENTS_CHANNEL,
  type SecurityEvent,
  type SecurityEventLevel,
  type SecurityEventName,
  type SecurityEventReason,
  type SecurityEventSpec,
  type SecurityPolicy,
} from './events/index.js';
export { type IdPair, idPair, sendJson } from './json/index.js';
export { type CheckRoutesOptions, checkRoutes } from './lint/index.js';
export {
  type ConventionsMiddleware,
  type ConventionsOptions,
  conventions,
  type Insertion,
  type Insertions,
} from './preset.js';
export {
  type FieldSelection,
  type JsonSchema,
  type ListPage,
  type Page,
  type PagingOptions,
  pageOf,
  paging,
  type SelectFieldsOptions,
  selectFields,
  sendItem,
  sendList,
  type ValidateSchemas,
  validate,
} from './request/index.js';
export {
  type ClearSiteDataOptions,
  type CsrfTokens,
  type CsrfTokensOptions,
  clearSiteData,
  cookieValue,
  csrfTokens,
} from './security/index.js';
export { STAGE_NAMES, type StageName } from './stage-names.js';
