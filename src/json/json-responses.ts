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
 * `ETag` gets one here, hashed once from the text (SPEC.md "Caching"). An
 * ETag already set keeps Express from computing its own weak one, and
 * res.send() then answers 304 when the request is fresh.
 */
export function sendJsonText(res: Response, text: string): Response {
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  const mode = res[ENTITY_TAG_MODE];
  if (mode !== undefined && res.statusCode === 200 && !res.hasHeader('ETag')) {
    const method = res.req.method;
    if (method === 'GET' || method === 'HEAD') res.setHeader('ETag', bodyEntityTag(text, mode));
  }
  return res.send(text);
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
