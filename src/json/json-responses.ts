import type { RequestHandler, Response } from 'express';
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

/** Sends JSON text that is already serialized, with SPEC.md's Content-Type. */
export function sendJsonText(res: Response, text: string): Response {
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
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
