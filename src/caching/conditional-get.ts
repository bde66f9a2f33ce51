import type { Request, Response } from 'express';
import { answerNotModified, type JsonWriteStep } from '../http/json-writer.js';
import { getResponseHeader, setResponseHeader } from '../http/response-headers.js';
import { bodyEntityTag, type EntityTagMode } from './entity-tag.js';

/**
 * Whether a GET or HEAD is fresh against the validators already on the
 * response: it sent `If-None-Match` or `If-Modified-Since` and Express's
 * `req.fresh` (the `fresh` package, RFC 9110 §13.1.2–3) says they still
 * match. The header test first spares the `fresh` call on most requests.
 */
export function isFresh(req: Request): boolean {
  const headers = req.headers;
  return (headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) && req.fresh;
}

/**
 * The conditional-GET step of a JSON representation (the conventions' "Caching",
 * "Conditional request"), made once per caching(): the writer calls it for
 * a GET or HEAD 200. When the route set no `ETag`, the body gets one hashed
 * once from the text (`mode`; none when `undefined`); then a fresh request
 * is answered 304 with an empty body, and the step says so.
 */
export function conditionalGetStep(mode: EntityTagMode | undefined): JsonWriteStep {
  return function conditionalGet(res: Response, text: string): boolean {
    if (mode !== undefined && getResponseHeader(res, 'ETag') === undefined)
      setResponseHeader(res, 'ETag', bodyEntityTag(text, mode));
    if (!isFresh(res.req)) return false;
    answerNotModified(res);
    return true;
  };
}
