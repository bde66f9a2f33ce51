/**
 * What an Express app's router holds, read in one place: Express 4 and 5
 * keep it in different properties and shapes, and none of it is public API.
 * notFound() asks which methods a path answers; refuse() and errorHandler()
 * ask which error middlewares are mounted, and where.
 */

/** The parts of an Express 4 or 5 router layer read here. */
export interface RouterLayer {
  /** The function the layer calls: a middleware, a route's dispatcher or a nested router. */
  readonly handle?: unknown;
  /** Express 4 returns a boolean and sets `path`; router 2.3+ (Express 5) returns the match and changes nothing. */
  match?(path: string): boolean | { path: string };
  readonly path?: string;
  readonly route?: { readonly methods: Record<string, boolean | undefined> };
  /** Express 5: the path it was mounted at; `slash`: mounted at the root. */
  readonly rawPath?: unknown;
  readonly slash?: boolean;
  /** Express 4: the compiled mount path; `fast_slash`: mounted at the root. */
  readonly regexp?: { readonly source?: string; readonly fast_slash?: boolean };
}

type AppLike = { readonly router?: unknown; readonly _router?: unknown };

/** The router stack of an Express 4 (`app._router`) or 5 (`app.router`) app. */
export function routerStackOf(app: unknown): readonly RouterLayer[] | undefined {
  if (typeof app !== 'function' && (typeof app !== 'object' || app === null)) return undefined;
  const holder = app as AppLike;
  let router: unknown;
  if ('_router' in holder && holder._router) router = holder._router;
  else {
    try {
      // Express 4 throws on `app.router`.
      router = holder.router;
    } catch {
      router = undefined;
    }
  }
  const stack = (router as { stack?: unknown } | undefined)?.stack;
  return Array.isArray(stack) ? (stack as RouterLayer[]) : undefined;
}

/** Whether the layer was mounted at the root (`app.use(fn)`). */
export const isRootMount = (layer: RouterLayer): boolean => layer.slash === true || layer.regexp?.fast_slash === true;

/** The path a layer was mounted at, comparable between layers of one app. */
export const mountOf = (layer: RouterLayer): unknown => layer.rawPath ?? layer.regexp?.source;

/** Whether the layer's function is an error middleware (four parameters). */
export const isErrorLayer = (layer: RouterLayer): boolean => typeof layer.handle === 'function' && layer.handle.length === 4;

// Middlewares that run others as one (the preset) name them under this
// symbol, so that a reader of the stack sees routers inside them without
// knowing their shape. A global symbol: the CommonJS and ESM builds of the
// package, both loaded in one app, still read each other's lists.
const INNER = Symbol.for('express-api-conventions.innerMiddlewares');

/** Declares the middlewares `composite` runs at its own mount path, in order. */
export function declareInnerMiddlewares(composite: object, inner: readonly unknown[]): void {
  Object.defineProperty(composite, INNER, { value: Object.freeze([...inner]), enumerable: false });
}

/** A layer's nested router stacks at the layer's own path: those of the middlewares a composite declared. */
function innerStacksOf(handle: unknown): readonly (readonly RouterLayer[])[] {
  if (typeof handle !== 'function') return [];
  const inner = ((handle as { [INNER]?: readonly unknown[] })[INNER] ?? []) as readonly unknown[];
  return inner.flatMap((middleware) => {
    const stack = (middleware as { stack?: unknown }).stack;
    return Array.isArray(stack) ? [stack as RouterLayer[]] : [];
  });
}

/** Adds to `into` the methods that some route of `stack` answers for `path`, upper case. */
export function collectRouteMethods(stack: readonly RouterLayer[], path: string, into: Set<string>): void {
  for (const layer of stack) {
    let match: boolean | { path: string } = false;
    try {
      match = layer.match?.(path) ?? false;
    } catch {
      // A path segment that cannot be decoded matches nothing.
    }
    if (!match) continue;
    const nested = (layer.handle as { stack?: unknown } | undefined)?.stack;
    if (layer.route) {
      for (const [method, enabled] of Object.entries(layer.route.methods)) {
        if (enabled && method !== '_all') into.add(method.toUpperCase());
      }
    } else if (Array.isArray(nested)) {
      const matched = typeof match === 'object' ? match.path : (layer.path ?? '');
      const rest = path.slice(matched.length) || '/';
      collectRouteMethods(nested as RouterLayer[], rest.startsWith('/') ? rest : `/${rest}`, into);
    } else {
      for (const inner of innerStacksOf(layer.handle)) collectRouteMethods(inner, path, into);
    }
  }
}
