import express, { type RequestHandler } from 'express';
import { invalidOption, readOptions } from '../config/options.js';

/** Options of parseBodies(). */
export interface ParseBodiesOptions {
  /**
   * Largest accepted body, in bytes or as a size string such as `'100kb'`.
   * A larger one is refused with 413. Default: `'100kb'`.
   */
  limit?: number | string;
  /** Parse `application/json` bodies. Default: `true`. */
  json?: boolean;
  /** Parse `application/x-www-form-urlencoded` bodies (UTF-8). Default: `true`. */
  form?: boolean;
  /** Most form parameters accepted; more is refused with 413. Default: `100`. */
  parameterLimit?: number;
}

const SIZE = /^\d+(?:\.\d+)?\s*(?:b|kb|mb)$/i;

/**
 * Express's own body parsers (body-parser), bounded in size, for the two
 * body types SPEC.md uses: JSON and `application/x-www-form-urlencoded`.
 * Their failures (malformed JSON, too large, bad charset) reach the error
 * handler, which answers them as JSON (400, 413, 415).
 *
 * Form bodies are parsed flat (`extended: false`): `a[b]=1` stays a key named
 * `a[b]`, so a form cannot build nested objects or reach `__proto__`.
 */
export function parseBodies(options?: Readonly<ParseBodiesOptions>): RequestHandler[] {
  const given = readOptions<ParseBodiesOptions>('parseBodies', options, ['limit', 'json', 'form', 'parameterLimit']);
  const limit = given.limit ?? '100kb';
  if (!(typeof limit === 'number' && Number.isInteger(limit) && limit > 0) && !(typeof limit === 'string' && SIZE.test(limit))) {
    invalidOption('parseBodies', 'limit', limit, "a positive whole number of bytes or a size such as '100kb'");
  }
  const parameterLimit = given.parameterLimit ?? 100;
  if (!Number.isInteger(parameterLimit) || parameterLimit < 1) {
    invalidOption('parseBodies', 'parameterLimit', parameterLimit, 'a positive whole number');
  }
  const parsers: RequestHandler[] = [];
  if (given.json ?? true) parsers.push(whenBodied(express.json({ limit, strict: true })));
  if (given.form ?? true) {
    parsers.push(whenBodied(express.urlencoded({ limit, extended: false, parameterLimit })));
  }
  return parsers;
}

/**
 * Runs a body-parser parser only when the request has a body: no
 * `Transfer-Encoding` and no `Content-Length` means none (RFC 9112 §6.3;
 * type-is `hasBody`, which body-parser asks first). A GET then costs two
 * property reads instead of the parser's own checks; `req.body` is left
 * `undefined`, as body-parser leaves it.
 */
function whenBodied(parser: RequestHandler): RequestHandler {
  return function parseBodyMiddleware(req, res, next) {
    const headers = req.headers;
    if (headers['transfer-encoding'] === undefined && headers['content-length'] === undefined) {
      if (!('body' in (req as object))) (req as { body?: unknown }).body = undefined;
      next();
      return;
    }
    parser(req, res, next);
  };
}
