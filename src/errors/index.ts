export { ApiError, type ApiErrorInit, apiError, type ErrorItem, isApiError } from './api-error.js';
export { type CatalogueEntry, ERROR_CATALOGUE, type ErrorName, entryForStatus } from './catalogue.js';
export { type ErrorHandlerOptions, type ErrorLogEntry, errorBody, errorHandler, renderError } from './error-handler.js';
export { type ErrorShape, setErrorShape, shapeError } from './error-shape.js';
export { allowedMethods, type NotFoundOptions, notFound } from './not-found.js';
export { REFLECTED_INPUT_LIMITS } from './reflected-input.js';
export { holdRefusals, takeHeldRefusal } from './refuse.js';
export {
  type ConventionExceptions,
  type ConventionReport,
  type ConventionReporter,
  conventionExceptions,
  type ExceptionName,
  logConventionReport,
  type ReportOnlyOptions,
  reportOnly,
} from './report-only.js';
export { isStoreFailure, STORE_RETRY_AFTER_SECONDS, storeUnavailable } from './store-unavailable.js';
export { toApiError } from './to-api-error.js';
