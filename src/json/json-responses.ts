import type { RequestHandler, Response } from 'express';
import { readOptions } from '../config/options.js';
import { exceptionOf, reportInstead } from '../errors/adoption.js';
import { apiError } from '../errors/api-error.js';
import { ERROR_CATALOGUE } from '../errors/catalogue.js';
import { enforcedAnswer } from '../errors/refuse.js';
import { stringifyJson } from '../http/json-output/serialize.js';
import { writeJson } from '../http/json-output/writer.js';
import { ownMethod } from '../http/response-state.js';

/** Options of jsonResponses(). It has none yet; the object is kept for growth. */
export type JsonResponsesOptions = Readonly<Record<string, never>>;

const describe = (body: unknown): string => {
  if (Array.isArray(body)) return 'an array';
  if (body === null) return 'null';
  return `a ${typeof body}`;
};

/**
 * Writes an object as the JSON response body, following the conventions: an object
 * at the top level only, the right Content-Type, `<`/`>` escaped, bigints
 * exact. A top-level array or scalar is a programming error: it throws an
 * ApiError (500) that the error handler renders and logs; in report-only
 * mode it is sent as it is and reported, and a route excepted with
 * conventionExceptions({ topLevelArray }) may send an array.
 */
export function sendJson(res: Response, body: unknown): Response {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    if (!(Array.isArray(body) && exceptionOf(res, 'topLevelArray') !== undefined) && !reportedNonObject(res, body)) {
      throw apiError('nonObjectJsonBody', { detail: nonObjectDetail(body) });
    }
  }
  return writeJson(res, stringifyJson(body));
}

/** What was wrong, and the ways out: the message names the helper and the option. */
const nonObjectFix = (body: unknown): string =>
  `res.json() received ${describe(body)}; a JSON body is an object at the top level (docs/conventions.md §2.1). ` +
  (Array.isArray(body)
    ? "Wrap the list: sendList(res, 'items', { items, hasNext }) or res.json({ items, hasNext }); " +
      "for a route that must keep an array for an old client, mount conventionExceptions({ topLevelArray: 'why' }) on it."
    : 'Wrap the value in an object, e.g. res.json({ value }).');

/** The same, as the error's `detail`: each part short enough to be kept whole (REFLECTED_INPUT_LIMITS). */
const nonObjectDetail = (body: unknown): Record<string, string> =>
  Array.isArray(body)
    ? {
        received: 'an array',
        rule: 'docs/conventions.md §2.1: a JSON body is an object at the top level',
        fix: "wrap the list: sendList(res, 'items', { items, hasNext }) or res.json({ items, hasNext })",
        exception: "for an old client that reads an array: conventionExceptions({ topLevelArray: 'why' }) on the route",
      }
    : {
        received: describe(body),
        rule: 'docs/conventions.md §2.1: a JSON body is an object at the top level',
        fix: 'wrap the value: res.json({ value })',
      };

const NON_OBJECT_ENFORCED = enforcedAnswer(ERROR_CATALOGUE.nonObjectJsonBody);

const reportedNonObject = (res: Response, body: unknown): boolean =>
  res.req !== undefined &&
  reportInstead(res.req, res, {
    rule: '2.1',
    middleware: 'jsonResponses',
    enforced: NON_OBJECT_ENFORCED,
    message: nonObjectFix(body),
  });

/**
 * Sends JSON text that is already serialized, through the one JSON writer
 * (writeJson(), src/http/json-output/writer.ts): the conventions'
 * Content-Type, the conditional GET of caching() when it is mounted, headers
 * and body in one write, never Express's weak `ETag`.
 */
export function sendJsonText(res: Response, text: string): Response {
  return writeJson(res, text);
}

// One shared method, not a closure per request: `this` is the response.
function json(this: Response, body: unknown): Response {
  return sendJson(this, body);
}

/**
 * Makes `res.json()` (and `res.send()` of an object, which Express hands to
 * `res.json()`) follow the conventions' JSON output rules, for the responses
 * that pass it: the method is the response's own (one shared function, set
 * per response), so the app's `app.response` and every other response keep
 * Express's.
 */
export function jsonResponses(options?: JsonResponsesOptions): RequestHandler {
  readOptions<Record<string, never>>('jsonResponses', options, []);
  return function jsonResponsesMiddleware(_req, res, next) {
    ownMethod(res, 'json', json);
    next();
  };
}
