import type { RequestHandler } from 'express';
import { readOptions } from './config/options.js';
import { type MaintenanceOptions, maintenance } from './errors/maintenance.js';
import { type CommonHeadersOptions, commonHeaders } from './headers/common-headers.js';
import { type JsonResponsesOptions, jsonResponses } from './json/json-responses.js';
import { type RateLimitOptions, rateLimit } from './rate-limit/rate-limit.js';
import { type ParseBodiesOptions, parseBodies } from './request/body-parsers.js';
import { type MethodOverrideOptions, methodOverride } from './request/method-override.js';

/**
 * Options of conventions(): one key per module, holding that module's
 * options, or `false` to leave the module out.
 */
export interface ConventionsOptions {
  commonHeaders?: CommonHeadersOptions | false;
  json?: JsonResponsesOptions | false;
  /** Present (not `false`) turns maintenance() on; absent or `false` leaves it out. */
  maintenance?: MaintenanceOptions | false;
  /**
   * rateLimit(): per user and per application, memory store by default.
   * It runs before the body parsers, so a limited client's body is never
   * parsed; it counts per user only when `req.auth` is set before it runs.
   */
  rateLimit?: RateLimitOptions | false;
  bodies?: ParseBodiesOptions | false;
  methodOverride?: MethodOverrideOptions | false;
}

const MODULES = ['commonHeaders', 'json', 'maintenance', 'rateLimit', 'bodies', 'methodOverride'] as const;

/**
 * The whole preset, in the order it must run. Use it as
 * `app.use(conventions())`, then the routes, then
 * `app.use(notFound(), errorHandler())`.
 */
export function conventions(options?: Readonly<ConventionsOptions>): RequestHandler[] {
  const given = readOptions<ConventionsOptions>('conventions', options, MODULES);
  const stack: RequestHandler[] = [];
  if (given.commonHeaders !== false) stack.push(commonHeaders(given.commonHeaders));
  if (given.json !== false) stack.push(jsonResponses(given.json));
  if (given.maintenance) stack.push(maintenance(given.maintenance));
  if (given.rateLimit !== false) stack.push(rateLimit(given.rateLimit));
  if (given.bodies !== false) stack.push(...parseBodies(given.bodies));
  if (given.methodOverride !== false) stack.push(methodOverride(given.methodOverride));
  return stack;
}
