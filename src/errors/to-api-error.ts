import { ApiError, apiError, isApiError } from './api-error.js';
import { type ErrorName, entryForStatus } from './catalogue.js';
import { isStoreFailure, storeUnavailable } from './store-unavailable.js';

// Express's body parsers tag their errors with a `type`; each maps onto one
// catalogue entry (malformed JSON 400, too large 413, media type and
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

// multer's errors carry a `code` and no status: a limit on size or count is
// the content being too large (413); anything else is a malformed form (400).
// Its messages are fixed strings of its own ("File too large"), safe to show.
const MULTER_TOO_LARGE = new Set([
  'LIMIT_PART_COUNT',
  'LIMIT_FILE_SIZE',
  'LIMIT_FILE_COUNT',
  'LIMIT_FIELD_KEY',
  'LIMIT_FIELD_VALUE',
  'LIMIT_FIELD_COUNT',
]);

const statusOf = (error: { status?: unknown; statusCode?: unknown }): number | undefined => {
  const status = error.status ?? error.statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599 ? status : undefined;
};

/**
 * An ApiError made by the package's other build (CommonJS or ESM), rebuilt
 * as one of this build: same status, code, message, headers, items, body.
 */
function fromOtherBuild(error: ApiError): ApiError {
  return new ApiError(
    { status: error.status, code: error.code, message: error.message },
    {
      message: error.message,
      detail: error.detail,
      headers: error.headers,
      items: error.items,
      ...(error.body === undefined ? {} : { body: error.body }),
      cause: error.cause,
    },
  );
}

/**
 * Turns anything thrown or passed to next() into an ApiError, so that it is
 * rendered in the one error shape (docs/errors.md "What it maps"):
 * - an ApiError of either build of the package is kept as it is;
 * - an error that carries a 4xx/5xx `status` (or `statusCode`) keeps that
 *   status, with the generic code of the status (entryForStatus(): 422 →
 *   42200); its own message is shown only when the error says it may be
 *   (`expose: true`, which http-errors sets on every 4xx), else it travels
 *   as development detail;
 * - multer's errors: a size or count limit is 413, any other 400;
 * - anything else is a 500 whose message travels only as development detail.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isApiError(error)) return fromOtherBuild(error);
  // A shared store that is down is the service's 503, never a 500.
  if (isStoreFailure(error)) return storeUnavailable(error);
  if (typeof error !== 'object' || error === null) {
    return apiError('internal', { detail: `a non-error value was thrown: ${String(error)}`, cause: error });
  }
  const tagged = error as {
    type?: unknown;
    status?: unknown;
    statusCode?: unknown;
    message?: unknown;
    expose?: unknown;
    name?: unknown;
    code?: unknown;
  };
  const detail = typeof tagged.message === 'string' ? tagged.message : undefined;
  if (tagged.name === 'MulterError' && typeof tagged.code === 'string' && statusOf(tagged) === undefined) {
    const name = MULTER_TOO_LARGE.has(tagged.code) ? 'payloadTooLarge' : 'badRequest';
    return apiError(name, {
      ...(detail === undefined ? {} : { message: detail }),
      detail: { multer: tagged.code },
      cause: error,
    });
  }
  const bodyParserError = typeof tagged.type === 'string' ? BODY_PARSER_ERRORS[tagged.type] : undefined;
  if (bodyParserError) return apiError(bodyParserError, { detail, cause: error });
  // The router raises a URIError with status 400 for a path it cannot decode.
  if (error instanceof URIError) return apiError('malformedUri', { detail, cause: error });
  const status = statusOf(tagged);
  if (status !== undefined) {
    // `expose: true` is the error's own word that its message is meant for the client (http-errors sets it on 4xx).
    if (tagged.expose === true && detail !== undefined && detail.trim() !== '') {
      return new ApiError(entryForStatus(status), { message: detail, cause: error });
    }
    return new ApiError(entryForStatus(status), { detail, cause: error });
  }
  return apiError('internal', { detail, cause: error });
}
