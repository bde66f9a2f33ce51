import type { Request, Response } from 'express';
import { answerNotModified } from '../http/json-output/writer.js';
import { addHeaderRule, getResponseHeader, removeResponseHeader, setResponseHeader } from '../http/response-headers.js';
import type { HeaderRule, HeaderValue, JsonWriteStep } from '../http/response-state.js';
import { bodyEntityTag, type EntityTagMode } from './entity-tag.js';
import { isContentCoding, matchingEntry } from './preconditions.js';

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
    let tag = getResponseHeader(res, 'ETag');
    if (mode !== undefined && tag === undefined) {
      tag = bodyEntityTag(text, mode);
      setResponseHeader(res, 'ETag', tag);
    }
    if (isFresh(res.req)) {
      answerNotModified(res);
      return true;
    }
    if (typeof tag !== 'string' || !tag.startsWith('"')) return false;
    // A copy of the body under a content coding ("x-gzip") is fresh too; the
    // 304 names the tag that copy was sent with (RFC 9110 §15.4.5).
    const ifNoneMatch = res.req.headers['if-none-match'];
    const variant = ifNoneMatch === undefined ? undefined : matchingEntry(ifNoneMatch, tag, false);
    if (variant !== undefined && !variant.startsWith('W/')) {
      setResponseHeader(res, 'ETag', variant);
      answerNotModified(res);
      return true;
    }
    addHeaderRule(res, CODED_TAG);
    return false;
  };
}

/**
 * RFC 9110 §8.8.3: a strong tag names one sequence of bytes, so the gzip and
 * identity bodies of one resource cannot share it. When a neighbour
 * (compression) gives the body a content coding, its strong tag takes the
 * coding's name: `"x"` becomes `"x-gzip"`. Conditional requests and
 * preconditions take either as the same representation (matchingEntry()).
 * A coding no tag can name (several stacked, or one not known) leaves the
 * body without a strong tag rather than with one that names other bytes.
 */
const CODED_TAG: HeaderRule = {
  name: 'content-encoding',
  field: 'Content-Encoding',
  apply(res: Response, value: HeaderValue): HeaderValue {
    const coding = String(value).trim().toLowerCase();
    const tag = getResponseHeader(res, 'ETag');
    if (coding === '' || coding === 'identity' || typeof tag !== 'string' || !tag.startsWith('"')) return value;
    if (!isContentCoding(coding)) removeResponseHeader(res, 'ETag');
    else if (!tag.endsWith(`-${coding}"`)) setResponseHeader(res, 'ETag', `${tag.slice(0, -1)}-${coding}"`);
    return value;
  },
};
