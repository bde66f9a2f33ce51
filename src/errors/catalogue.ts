import { STATUS_CODES } from 'node:http';

/**
 * The catalogue of every error the library answers with. One entry per
 * situation; the integer `code` is stable and documented in docs/errors.md.
 * A package adds its own entries through registered-entries.ts (the
 * authorization server's RFC 6749 and sign-in errors are its own).
 *
 * A code is the HTTP status followed by two digits (40401: the first 404
 * case), so a person reading a log can tell the status from the code, and a
 * client can switch on the code alone.
 *
 * the conventions' Errors rule 7: "an object `errors` holding an array of objects with
 * `message` (string) and `code` (integer)".
 */
export interface CatalogueEntry {
  /** HTTP status the error is answered with. */
  readonly status: number;
  /** Stable integer code, the value of `code` in the error body. */
  readonly code: number;
  /** Message for people; safe to show in production. */
  readonly message: string;
}

export const ERROR_CATALOGUE = {
  // 400: any client error no other 4xx covers (docs/conventions.md rule 14.3).
  badRequest: { status: 400, code: 40000, message: 'The request is not valid.' },
  malformedBody: { status: 400, code: 40001, message: 'The request body could not be parsed.' },
  methodOverrideRefused: { status: 400, code: 40002, message: 'The method override is not allowed.' },
  invalidQueryParameter: { status: 400, code: 40003, message: 'A query parameter is not valid.' },
  unknownField: { status: 400, code: 40004, message: 'The fields parameter names an unknown field.' },
  validationFailed: { status: 400, code: 40005, message: 'A value in the request is not valid.' },
  malformedUri: { status: 400, code: 40006, message: 'The request URI is not valid.' },
  // RFC 8259 §8.1: JSON text exchanged between systems is UTF-8; so is a form (docs/conventions.md rules 6.3 and 13.1).
  invalidUtf8Body: {
    status: 400,
    code: 40012,
    message: 'The request body is not valid UTF-8 (or holds an unpaired surrogate escape).',
  },
  // What Node's HTTP parser refuses before any route runs (answerParserErrors()).
  malformedRequest: { status: 400, code: 40013, message: 'The request is not valid HTTP.' },
  // 401 and 403: a failed authentication, a refused authorization (docs/conventions.md rule 13.8).
  unauthenticated: { status: 401, code: 40100, message: 'Authentication is required.' },
  invalidToken: { status: 401, code: 40102, message: 'The access token is not valid.' },
  // RFC 9449 §7.1: a DPoP proof sent to a resource that does not hold.
  invalidDpopProof: { status: 401, code: 40103, message: 'The DPoP proof is not valid.' },
  // RFC 9449 §9: a resource asks for a proof with its nonce.
  useDpopNonce: { status: 401, code: 40104, message: 'The DPoP proof must carry the server nonce.' },
  forbidden: { status: 403, code: 40300, message: 'Access to this resource is not allowed.' },
  xhrRequired: {
    status: 403,
    code: 40301,
    message: 'This endpoint only answers browser scripts (X-Requested-With: XMLHttpRequest).',
  },
  csrfTokenInvalid: { status: 403, code: 40302, message: 'The CSRF token is missing or not valid.' },
  corsOriginRefused: { status: 403, code: 40303, message: 'The origin is not allowed.' },
  insufficientScope: { status: 403, code: 40304, message: 'The access token lacks a required scope.' },
  // Fetch Metadata (Sec-Fetch-Site) or Origin: a page of another site asked a browser to change state.
  crossSiteRequestRefused: {
    status: 403,
    code: 40305,
    message: 'A state-changing request from another site is not allowed.',
  },
  // 404: docs/conventions.md rule 14.4, a missing resource is told apart from a wrong URI.
  routeNotFound: { status: 404, code: 40401, message: 'No endpoint answers this URI.' },
  resourceNotFound: { status: 404, code: 40402, message: 'The resource does not exist.' },
  methodNotAllowed: { status: 405, code: 40500, message: 'The method is not allowed on this URI.' },
  notAcceptable: { status: 406, code: 40600, message: 'No representation matches the Accept header.' },
  requestTimeout: { status: 408, code: 40800, message: 'The request took too long to arrive.' },
  conflict: { status: 409, code: 40900, message: 'The request conflicts with the current state of the resource.' },
  uniqueKeyTaken: { status: 409, code: 40901, message: 'A resource with this unique key already exists.' },
  preconditionFailed: { status: 412, code: 41200, message: 'The resource changed since it was read.' },
  payloadTooLarge: { status: 413, code: 41300, message: 'The request body is too large.' },
  unsupportedMediaType: { status: 415, code: 41500, message: 'The request body media type is not supported.' },
  unsupportedCharset: { status: 415, code: 41501, message: 'The request body charset is not supported.' },
  unsupportedEncoding: { status: 415, code: 41502, message: 'The request body content encoding is not supported.' },
  preconditionRequired: {
    status: 428,
    code: 42800,
    message: 'This request must be conditional (If-Match or If-Unmodified-Since).',
  },
  // 429: too many requests, with Retry-After (docs/conventions.md rule 12.1).
  tooManyRequests: { status: 429, code: 42900, message: 'Too many requests; retry after the time in Retry-After.' },
  // 431: RFC 6585 §5, what Node's parser answers to an over-long request line or header section.
  headerFieldsTooLarge: {
    status: 431,
    code: 43100,
    message: 'The request line and header fields are too large.',
  },
  // 5xx
  internal: { status: 500, code: 50000, message: 'An internal error occurred.' },
  nonObjectJsonBody: { status: 500, code: 50001, message: 'The response body must be a JSON object.' },
  responseConventionViolated: {
    status: 500,
    code: 50002,
    message: 'The response body breaks the API conventions (responseLinter strict mode).',
  },
  badGateway: { status: 502, code: 50200, message: 'An upstream service answered with an error.' },
  serviceUnavailable: { status: 503, code: 50300, message: 'The service is unavailable.' },
  maintenance: { status: 503, code: 50301, message: 'The service is down for maintenance; retry after the time in Retry-After.' },
  stateStoreUnavailable: { status: 503, code: 50302, message: 'A shared state store is unreachable.' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorName = keyof typeof ERROR_CATALOGUE;

/**
 * The generic code of a status: the status followed by `00` (422 → 42200,
 * 504 → 50400). An error that carries only a status (http-errors, a
 * `{ status }` of another library) is answered with that status and this
 * code: the class of the error is kept, and no case of the catalogue is
 * claimed for it (40401 "wrong URI" and 40402 "missing resource" are
 * cases; a bare 404 is 40400).
 */
export const genericCodeOf = (status: number): number => status * 100;

// The catalogue's entries whose code is a status's generic code (40000, 42900, 50000, …).
const GENERIC_BY_CODE = new Map<number, CatalogueEntry>();
for (const entry of Object.values(ERROR_CATALOGUE) as CatalogueEntry[]) {
  if (entry.code === genericCodeOf(entry.status)) GENERIC_BY_CODE.set(entry.code, entry);
}

/**
 * The generic entry of an error status (400 to 599; the conventions' Errors rule 3):
 * its status, its generic code (genericCodeOf()), and the catalogue's
 * message for that code when the catalogue has one, else the status's
 * reason phrase ("Unprocessable Entity."). Any other status is the 500
 * `internal` entry.
 */
export function entryForStatus(status: number): CatalogueEntry {
  if (!Number.isInteger(status) || status < 400 || status > 599) return ERROR_CATALOGUE.internal;
  const code = genericCodeOf(status);
  const catalogued = GENERIC_BY_CODE.get(code);
  if (catalogued) return catalogued;
  const reason = STATUS_CODES[status];
  const message =
    reason === undefined ? (status < 500 ? ERROR_CATALOGUE.badRequest.message : ERROR_CATALOGUE.internal.message) : `${reason}.`;
  return { status, code, message };
}
