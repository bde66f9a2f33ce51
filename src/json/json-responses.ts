import type { RequestHandler, Response } from 'express';
import { bodyEntityTag, ENTITY_TAG_MODE } from '../caching/entity-tag.js';
import { readOptions } from '../config/options.js';
import { apiError } from '../errors/api-error.js';
import { stringifyJson } from './serialize.js';

/** SPEC.md "Common response behaviour" rule 3. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Options of jsonResponses(). It has none yet; the object is kept for growth. */
export type JsonResponsesOptions = Readonly<Record<string, never>>;

const describe = (body: unknown): string => {
  if (Array.isArray(body)) return 'an array';
  if (body === null) return 'null';
  return `a ${typeof body}`;
};

/**
 * Writes an object as the JSON response body, following SPEC.md: an object
 * at the top level only, the right Content-Type, `<`/`>` escaped, bigints
 * exact. A top-level array or scalar is a programming error: it throws an
 * ApiError (500) that the error handler renders and logs.
 */
export function sendJson(res: Response, body: unknown): Response {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw apiError('nonObjectJsonBody', {
      detail: `res.json() received ${describe(body)}; SPEC.md allows only an object at the top level`,
    });
  }
  return sendJsonText(res, stringifyJson(body));
}

/**
 * Sends JSON text that is already serialized, with SPEC.md's Content-Type.
 *
 * When caching() is mounted, a GET or HEAD 200 answer whose route set no
 * `ETag` gets one here, hashed once from the text (SPEC.md "Caching"), and
 * the answer is written here too: 304 with an empty body when the request
 * is fresh (Express's `req.fresh`, the `fresh` package, as res.send() asks
 * it), else the text with its Content-Length, in one write with the headers.
 * res.send() would turn the text into a Buffer first, because Express's
 * own ETag function is set, and write headers and body apart; it also parses
 * the Content-Type again. Every other answer goes through res.send(), and
 * so does every answer when res.send() was replaced on the response.
 */
export function sendJsonText(res: Response, text: string): Response {
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  const mode = res[ENTITY_TAG_MODE];
  if (mode === undefined || res.statusCode !== 200) return res.send(text);
  const req = res.req;
  const method = req.method;
  if (method !== 'GET' && method !== 'HEAD') return res.send(text);
  if (!res.hasHeader('ETag')) res.setHeader('ETag', bodyEntityTag(text, mode));
  // res.send() is also the place others hook (responseLinter() wraps it on
  // the response): then it must see the text, so it sends it.
  if (Object.hasOwn(res, 'send')) return res.send(text);
  const headers = req.headers;
  if ((headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) && req.fresh) {
    // As res.send() answers a fresh request: 304, no body, no entity headers.
    res.statusCode = 304;
    res.removeHeader('Content-Type');
    res.removeHeader('Content-Length');
    res.removeHeader('Transfer-Encoding');
    res.end();
    return res;
  }
  res.setHeader('Content-Length', Buffer.byteLength(text, 'utf8'));
  if (method === 'HEAD') res.end();
  else res.end(text, 'utf8');
  return res;
}

// One shared method, not a closure per request: `this` is the response.
function json(this: Response, body: unknown): Response {
  return sendJson(this, body);
}

/**
 * Makes `res.json()` (and `res.send()` of an object, which Express hands to
 * `res.json()`) follow SPEC.md's JSON output rules.
 */
export function jsonResponses(options?: JsonResponsesOptions): RequestHandler {
  readOptions<Record<string, never>>('jsonResponses', options, []);
  return function jsonResponsesMiddleware(_req, res, next) {
    res.json = json;
    next();
  };
}
