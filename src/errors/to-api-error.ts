import { ApiError, apiError } from './api-error.js';
import { type ErrorName, entryForStatus } from './catalogue.js';
import { isStoreFailure, storeUnavailable } from './store-unavailable.js';

// Express's body parsers tag their errors with a `type`; each maps onto one
// catalogue entry (issue: malformed JSON 400, too large 413, media type and
// charset 415).
const BODY_PARSER_ERRORS: Readonly<Record<string, ErrorName>> = {
  'entity.parse.failed': 'malformedBody',
  'entity.verify.failed': 'malformedBody',
  // parseBodies()'s UTF-8 check (src/request/body-parsers.ts).
  'entity.utf8.invalid': 'invalidUtf8Body',
  'entity.too.large': 'payloadTooLarge',
  'parameters.too.many': 'payloadTooLarge',
  'charset.unsupported': 'unsupportedCharset',
  'encoding.unsupported': 'unsupportedEncoding',
  'request.aborted': 'badRequest',
  'request.size.invalid': 'badRequest',
};

const statusOf = (error: { status?: unknown; statusCode?: unknown }): number | undefined => {
  const status = error.status ?? error.statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599 ? status : undefined;
};

/**
 * Turns anything thrown or passed to next() into an ApiError, so that it is
 * rendered in the one error shape. Unknown errors become 500; their message
 * travels only as development detail.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  // A shared store that is down is the service's 503, never a 500 (issue 12 part 5).
  if (isStoreFailure(error)) return storeUnavailable(error);
  if (typeof error !== 'object' || error === null) {
    return apiError('internal', { detail: `a non-error value was thrown: ${String(error)}`, cause: error });
  }
  const tagged = error as { type?: unknown; status?: unknown; statusCode?: unknown; message?: unknown };
  const detail = typeof tagged.message === 'string' ? tagged.message : undefined;
  const bodyParserError = typeof tagged.type === 'string' ? BODY_PARSER_ERRORS[tagged.type] : undefined;
  if (bodyParserError) return apiError(bodyParserError, { detail, cause: error });
  // The router raises a URIError with status 400 for a path it cannot decode.
  if (error instanceof URIError) return apiError('malformedUri', { detail, cause: error });
  const status = statusOf(tagged);
  if (status !== undefined) return new ApiError(entryForStatus(status), { detail, cause: error });
  return apiError('internal', { detail, cause: error });
}
