import type { RequestHandler } from 'express';
import { readOptions } from '../config/options.js';
import { pathWithoutQuery } from '../http/paths.js';
import { apiError } from './api-error.js';
import { routerStackOf } from './refuse.js';

/** Options of notFound(). */
export interface NotFoundOptions {
  /**
   * Answer 405 with `Allow` when the path exists for other methods.
   * Default: `true`.
   */
  methodNotAllowed?: boolean;
}

// The parts of Express 4 and 5 router internals that are read here. Both
// versions keep a stack of layers; a layer has a route or a nested router.
interface RouterLayer {
  // Express 4 returns a boolean and sets `path`; router 2.3+ (Express 5)
  // returns the match, with the matched `path`, and changes nothing.
  match(path: string): boolean | { path: string };
  path?: string;
  route?: { methods: Record<string, boolean | undefined> };
  // A nested router has a stack; the preset's one middleware lists the
  // middlewares it runs in `modules` (tokenRouter() among them).
  handle?: { stack?: RouterLayer[]; modules?: readonly { stack?: RouterLayer[] }[] };
}

/** The methods that some route of `stack` answers for `path`, upper case. */
function collectMethods(stack: readonly RouterLayer[], path: string, into: Set<string>): void {
  for (const layer of stack) {
    let match: boolean | { path: string } = false;
    try {
      match = layer.match(path);
    } catch {
      // A path segment that cannot be decoded matches nothing.
    }
    if (!match) continue;
    if (layer.route) {
      for (const [method, enabled] of Object.entries(layer.route.methods)) {
        if (enabled && method !== '_all') into.add(method.toUpperCase());
      }
    } else if (layer.handle?.stack) {
      const matched = typeof match === 'object' ? match.path : (layer.path ?? '');
      const rest = path.slice(matched.length) || '/';
      collectMethods(layer.handle.stack, rest.startsWith('/') ? rest : `/${rest}`, into);
    } else if (layer.handle?.modules) {
      // Routers inside the preset (the token endpoint) are routes of the app too.
      for (const module of layer.handle.modules) if (module.stack) collectMethods(module.stack, path, into);
    }
  }
}

/** The methods the app's routes answer for a path (GET implies HEAD), sorted. */
export function allowedMethods(app: unknown, path: string): string[] {
  const stack = routerStackOf(app) as readonly RouterLayer[] | undefined;
  if (!stack) return [];
  const methods = new Set<string>();
  collectMethods(stack, path, methods);
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
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
    const path = pathWithoutQuery(req);
    const allowed = answer405 ? allowedMethods(req.app, path) : [];
    if (allowed.length > 0) {
      next(apiError('methodNotAllowed', { headers: { Allow: allowed.join(', ') }, detail: { method: req.method, path } }));
      return;
    }
    next(apiError('routeNotFound', { detail: { method: req.method, path } }));
  };
}
