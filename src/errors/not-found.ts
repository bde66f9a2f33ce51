import type { Request, RequestHandler } from 'express';
import { readOptions } from '../config/options.js';
import { warnOnce } from '../config/warnings.js';
import { pathWithoutQuery } from '../http/paths.js';
import { collectRouteMethods, routerStackOf } from '../http/router-stack.js';
import { type ApiError, apiError } from './api-error.js';

/** Options of notFound(). */
export interface NotFoundOptions {
  /**
   * Answer 405 with `Allow` when the path exists for other methods.
   * Default: `true`.
   */
  methodNotAllowed?: boolean;
}

/** The methods the app's routes answer for a path (GET implies HEAD), sorted. */
export function allowedMethods(app: unknown, path: string): string[] {
  const stack = routerStackOf(app);
  if (!stack) return [];
  const methods = new Set<string>();
  collectRouteMethods(stack, path, methods);
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}

/**
 * The answer to a request no route answered: 405 with `Allow` when the path
 * exists for other methods (and `answer405`), else 404 with code 40401.
 * notFound() and the NestJS exception filter give it alike.
 */
export function unmatchedRouteError(req: Request, answer405 = true): ApiError {
  const path = pathWithoutQuery(req);
  const allowed = answer405 ? allowedMethods(req.app, path) : [];
  if (allowed.length === 0) return apiError('routeNotFound', { detail: { method: req.method, path } });
  if (allowed.includes(req.method)) warnOfRoutesAfter(req, allowed);
  return apiError('methodNotAllowed', { headers: { Allow: allowed.join(', ') }, detail: { method: req.method, path } });
}

/**
 * A route answers this very method on this path, yet the request reached
 * the unmatched-route answer: notFound() stands before the routes (under
 * NestJS, routes are added in `app.init()`, after anything mounted before).
 */
function warnOfRoutesAfter(req: Request, allowed: readonly string[]): void {
  warnOnce(
    'EAC_NOT_FOUND_BEFORE_ROUTES',
    'EAC_NOT_FOUND_BEFORE_ROUTES',
    `${req.method} ${pathWithoutQuery(req)} was answered 405 with Allow: ${allowed.join(', ')}, which names ${req.method} itself: ` +
      'notFound() is mounted before the routes that answer it. Mount notFound() and errorHandler() after every route; ' +
      'under NestJS, mount neither and register ConventionsExceptionFilter (docs/guides/nestjs.md).',
  );
}

/**
 * Mounted after every route: a request that no route answered gets 404 JSON
 * with code 40401 (a wrong URI), which differs from 40402, the code a route
 * uses for a missing record (the conventions' Errors rule 4). When the path exists
 * for other methods, the answer is 405 with an `Allow` header.
 */
export function notFound(options?: Readonly<NotFoundOptions>): RequestHandler {
  const given = readOptions<NotFoundOptions>('notFound', options, ['methodNotAllowed']);
  const answer405 = given.methodNotAllowed ?? true;
  return function notFoundMiddleware(req, _res, next) {
    next(unmatchedRouteError(req, answer405));
  };
}
