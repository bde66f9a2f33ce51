export { ApiError, type ApiErrorInit, apiError, type ErrorItem, isApiError } from './api-error.js';
export { type CatalogueEntry, type ErrorName, entryForStatus } from './catalogue.js';
export { type ErrorHandlerOptions, type ErrorLogEntry, errorHandler } from './error-handler.js';
export { type NotFoundOptions, notFound } from './not-found.js';
export {
  type ConventionExceptions,
  type ConventionReport,
  type ConventionReporter,
  conventionExceptions,
  type ExceptionName,
  type ReportOnlyOptions,
  reportOnly,
} from './report-only.js';
export { storeUnavailable } from './store-unavailable.js';
