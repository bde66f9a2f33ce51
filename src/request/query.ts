import type { Request } from 'express';
import { type ApiError, apiError } from '../errors/api-error.js';
import { ERROR_CATALOGUE } from '../errors/catalogue.js';

/**
 * The parsed query of a request, parsed at most once. Express 5's
 * `req.query` is a getter that parses the query string again on every read
 * (Express 5's router, unlike 4's); the first reader here pins the result on the
 * request as an own property, so paging(), selectFields(), validate() and the
 * route handler all share one parse. On Express 4 `req.query` is already a
 * plain property and is returned as it is.
 */
export function parsedQuery(req: Request): Record<string, unknown> {
  if (Object.hasOwn(req, 'query')) return req.query as Record<string, unknown>;
  const query = req.query as Record<string, unknown>;
  Object.defineProperty(req, 'query', { value: query, writable: true, enumerable: true, configurable: true });
  return query;
}

/** 400 `invalidQueryParameter`, with one item naming the parameter. */
export function invalidQueryParameter(name: string, message: string): ApiError {
  return apiError('invalidQueryParameter', {
    message,
    items: [{ message, code: ERROR_CATALOGUE.invalidQueryParameter.code, field: name }],
  });
}
