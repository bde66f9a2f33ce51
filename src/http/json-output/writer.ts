import type { Response } from 'express';
import { checkHeadPassed, removeResponseHeader, setResponseHeader } from '../response-headers.js';
import { type JsonWriteStep, peekResponseState, responseState } from '../response-state.js';
import { JSON_CONTENT_TYPE } from '../spec.js';

/**
 * The one JSON writer: every JSON answer of the library goes out through
 * writeJson() (a representation: res.json() under jsonResponses(),
 * sendJson(), sendItem(), sendList()) or writeJsonAnswer() (an error, a
 * protocol answer that is never conditional). Both write headers and body in
 * one `res.end()`, never through `res.send()`: Express's send would turn the
 * text into a Buffer, parse the Content-Type again and add its own weak
 * `ETag` (`W/"…"`) to every answer, writes included, which a client would
 * then send back in `If-Match` and get 412 (RFC 9110 §13.1.1 compares
 * If-Match strongly).
 *
 * What the writer does not decide itself, middlewares hand in per response,
 * by an explicit step it calls, the same in development and production:
 * - a step for a GET or HEAD 200 (caching()'s tag and 304) with
 *   setReadStep();
 * - an inspector of every representation's text (the response linter) with
 *   setJsonInspector().
 * A step is one function made when its middleware was built; handing it in
 * is one field of the response's state (src/http/response-state.ts), not a
 * closure per request nor a new property of the response.
 */

/** Hands the writer a step for a GET or HEAD 200 representation of this response (caching() does). */
export function setReadStep(res: Response, step: JsonWriteStep): void {
  responseState(res).readStep = step;
}

/** Hands the writer an inspector of this response's JSON text (responseLinter() does). */
export function setJsonInspector(res: Response, inspector: JsonWriteStep): void {
  responseState(res).jsonInspector = inspector;
}

/**
 * Writes JSON text that is already serialized as the representation of the
 * response, with the status already set (200 unless a route chose another):
 * the conventions' Content-Type, the inspector's look, the read step for
 * a GET or HEAD 200, then the text with its Content-Length in one write.
 * An `ETag` a route set (setValidators()) is kept on every status, so a
 * write (PUT/PATCH 200, POST 201) answers the same strong tag a GET would;
 * the writer itself never adds one.
 */
export function writeJson(res: Response, text: string): Response {
  setResponseHeader(res, 'Content-Type', JSON_CONTENT_TYPE);
  const state = peekResponseState(res);
  if (state === undefined) {
    endWithText(res, text);
    return res;
  }
  if (state.jsonInspector?.(res, text)) return res;
  const readStep = state.readStep;
  if (readStep !== undefined && res.statusCode === 200) {
    const method = res.req.method;
    if ((method === 'GET' || method === 'HEAD') && readStep(res, text)) return res;
  }
  endWithText(res, text);
  return res;
}

/**
 * Writes a JSON answer with the given status, not a representation: no
 * inspector, no tag, no freshness check. For errors (errorHandler) and
 * protocol answers (the token endpoint's success).
 */
export function writeJsonAnswer(res: Response, status: number, text: string): void {
  res.statusCode = status;
  setResponseHeader(res, 'Content-Type', JSON_CONTENT_TYPE);
  endWithText(res, text);
}

/**
 * 304 Not Modified (RFC 9110 §15.4.5): no body, and no header that would
 * describe one.
 */
export function answerNotModified(res: Response): void {
  res.statusCode = 304;
  endWithoutBody(res);
}

function endWithoutBody(res: Response): void {
  removeResponseHeader(res, 'Content-Type');
  removeResponseHeader(res, 'Content-Length');
  removeResponseHeader(res, 'Transfer-Encoding');
  res.end();
  checkHeadPassed(res);
}

function endWithText(res: Response, text: string): void {
  const status = res.statusCode;
  // RFC 9110 §15.3.5 and §15.4.5: 204 and 304 carry no content.
  if (status === 204 || status === 304) {
    endWithoutBody(res);
    return;
  }
  setResponseHeader(res, 'Content-Length', Buffer.byteLength(text, 'utf8'));
  // Node writes no body for HEAD; the Content-Length stays that of GET.
  if (res.req.method === 'HEAD') res.end();
  else res.end(text, 'utf8');
  checkHeadPassed(res);
}
