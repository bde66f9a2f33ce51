import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { checkBoolean, isProductionEnvironment, readOptions } from '../config/options.js';
import { type ApiError, apiError } from '../errors/api-error.js';
import type { ErrorName } from '../errors/catalogue.js';
import { errorBody } from '../errors/error-handler.js';
import { refusalEventOf } from '../errors/refusal-events.js';
import { publishSecurityEvent, securityEventsWanted } from '../events/index.js';
import { stringifyJson } from '../http/json-output/serialize.js';
import { CACHE_CONTROL_SENSITIVE, JSON_CONTENT_TYPE } from '../http/spec.js';
import { rawHttpResponse } from './raw-response.js';
import { type SecurityHeadersOptions, securityHeaderValues } from './security-headers.js';

/** Options of answerParserErrors(). */
export interface AnswerParserErrorsOptions {
  /**
   * The options given to securityHeaders(), so that these answers carry the
   * same security headers as every other. Default: securityHeaders()'s
   * defaults, the conventions' values.
   */
  securityHeaders?: SecurityHeadersOptions;
  /**
   * Leave out `detail` (the parser's error code), as errorHandler({ production })
   * does. Default: whether `NODE_ENV` is `production` when called.
   */
  production?: boolean;
}

const FACTORY = 'answerParserErrors';

/**
 * Node's codes for what its HTTP parser refuses, with the catalogue entry of
 * each; any other parser error is a malformed request (400). Node counts the
 * request line and the header fields together against `maxHeaderSize`
 * (16 KB by default) and reports both as HPE_HEADER_OVERFLOW, so an over-long
 * URI gets 431 like an over-long header (not 414: the parser cannot tell them apart).
 */
const PARSER_ERRORS: Readonly<Record<string, ErrorName>> = {
  HPE_HEADER_OVERFLOW: 'headerFieldsTooLarge',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'payloadTooLarge',
  ERR_HTTP_REQUEST_TIMEOUT: 'requestTimeout',
};

type ClientSocket = Duplex & { _httpMessage?: { headersSent?: boolean } | null; remoteAddress?: string };

/** No request was parsed: the address is the connection's own, as `trust proxy` cannot resolve one. */
function publishParserRefusal(socket: ClientSocket, refused: ApiError): void {
  const fields = refusalEventOf(refused);
  if (fields !== undefined) publishSecurityEvent(undefined, { ...fields, sourceIp: socket.remoteAddress });
}

/**
 * Answers in the conventions' error shape what Node's HTTP parser refuses before
 * Express sees a request (the conventions' Errors: the error is described in the
 * body, always JSON): 431 for a request line or header section over
 * `maxHeaderSize`, 408 when the headers or the request take longer than
 * `headersTimeout`/`requestTimeout`, 413 for over-long chunk extensions, 400
 * for anything malformed. Node would write the bare status with no body and
 * no headers; this writes `{"errors":[{"message","code"}]}` with
 * `Content-Type: application/json; charset=utf-8`, `Date`,
 * `Cache-Control: no-store, max-age=0`, the security headers and
 * `Connection: close`, then closes the connection (the parser's state is
 * lost, nothing more can be read from it).
 *
 * Attach it to the `http.Server` (or `https.Server`) that serves the app:
 * `answerParserErrors(app.listen(port))`. Returns the server.
 */
export function answerParserErrors<S extends Server>(server: S, options?: Readonly<AnswerParserErrorsOptions>): S {
  const given = readOptions<AnswerParserErrorsOptions>(FACTORY, options, ['securityHeaders', 'production']);
  const production =
    given.production === undefined ? isProductionEnvironment() : checkBoolean(FACTORY, 'production', given.production);
  // Work once: every header but Date is fixed.
  const fixed: (readonly [string, string])[] = [
    ['Content-Type', JSON_CONTENT_TYPE],
    ['Cache-Control', CACHE_CONTROL_SENSITIVE],
    ...securityHeaderValues(given.securityHeaders, FACTORY),
    ['Connection', 'close'],
  ];
  server.on('clientError', function answerParserError(error: Error & { code?: string }, socket: ClientSocket) {
    // A reset connection has nobody to answer; and when a response of an
    // earlier request on this connection has begun, another one written now
    // would corrupt it (Node's own rule for its bare answers).
    if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const code = error.code ?? 'unknown';
    const refused = apiError(PARSER_ERRORS[code] ?? 'malformedRequest', { detail: { parserError: code } });
    if (securityEventsWanted()) publishParserRefusal(socket, refused);
    const body = stringifyJson(errorBody(refused, production));
    const headers = [['Date', new Date().toUTCString()] as const, ...fixed];
    socket.end(rawHttpResponse(refused.status, headers, body), () => socket.destroy());
  });
  return server;
}
