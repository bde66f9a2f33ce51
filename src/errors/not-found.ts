import type { RequestHandler } from 'express';
import { readOptions } from '../config/options.js';
import { warnOnce } from '../config/warnings.js';
import { pathWithoutQuery } from '../http/paths.js';
import { collectRouteMethods, routerStackOf } from '../http/router-stack.js';
import { apiError } from './api-error.js';

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
 * A 405 whose `Allow` names the request's own method is no wrong method: a
 * route answers it, but notFound() ran first (mounted before the routes, or
 * before a framework adds its own). Said once per notFound(), outside production.
 */
function warnIfBeforeRoutes(middleware: object, method: string, path: string, allowed: readonly string[]): void {
  if (!allowed.includes(method)) return;
  warnOnce(
    middleware,
    'EAC_NOT_FOUND_BEFORE_ROUTES',
    `notFound() answered ${method} ${path} with 405 although a route answers ${method} there (Allow: ${allowed.join(', ')}): ` +
      'notFound() runs before the routes. Mount it after every route, with errorHandler() ' +
      '(docs/configuration-errors.md#eac_not_found_before_routes).',
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
  const middleware: RequestHandler = function notFoundMiddleware(req, _res, next) {
    const path = pathWithoutQuery(req);
    const allowed = answer405 ? allowedMethods(req.app, path) : [];
    if (allowed.length > 0) {
      warnIfBeforeRoutes(middleware, req.method, path, allowed);
      next(apiError('methodNotAllowed', { headers: { Allow: allowed.join(', ') }, detail: { method: req.method, path } }));
      return;
    }
    next(apiError('routeNotFound', { detail: { method: req.method, path } }));
  };
  return middleware;
}
