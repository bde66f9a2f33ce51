/**
 * What an Express app's router holds, read in one place: Express 4 and 5
 * keep it in different properties and shapes, and none of it is public API.
 * notFound() asks which methods a path answers; refuse() and errorHandler()
 * ask which error middlewares are mounted, and where; checkRoutes() asks for
 * every route with its full path.
 */

/** The parts of an Express 4 or 5 router layer read here. */
export interface RouterLayer {
  /** The function the layer calls: a middleware, a route's dispatcher or a nested router. */
  readonly handle?: unknown;
  /** Express 4 returns a boolean and sets `path`; router 2.3+ (Express 5) returns the match and changes nothing. */
  match?(path: string): boolean | { path: string };
  readonly path?: string;
  readonly route?: { readonly path?: unknown; readonly methods: Record<string, boolean | undefined> };
  /** Express 5: the path it was mounted at; `slash`: mounted at the root. */
  readonly rawPath?: unknown;
  readonly slash?: boolean;
  /** Express 4: the compiled mount path (`fast_slash`: mounted at the root) and its parameters. */
  readonly regexp?: RegExp & { readonly fast_slash?: boolean };
  readonly keys?: readonly { readonly name: string | number; readonly optional?: boolean }[];
}

type StackHolder = { stack?: unknown; router?: { stack?: unknown }; _router?: { stack?: unknown }; lazyrouter?: unknown };

/**
 * The layers of an Express 5 app (`app.router`), an Express 4 app
 * (`app._router`, none yet: empty), or a router; undefined for anything else.
 */
export function routerStackOf(target: unknown): readonly RouterLayer[] | undefined {
  if (typeof target !== 'function' && (typeof target !== 'object' || target === null)) return undefined;
  const t = target as StackHolder;
  if (Array.isArray(t.stack)) return t.stack as RouterLayer[];
  // Express 5's `app.router` is a getter creating the router on first use;
  // Express 4 throws on it, and has `_router` once a route or middleware was added.
  if (typeof t.lazyrouter !== 'function' && t.router && Array.isArray(t.router.stack)) return t.router.stack as RouterLayer[];
  if (t._router && Array.isArray(t._router.stack)) return t._router.stack as RouterLayer[];
  if (typeof t.lazyrouter === 'function') return [];
  return undefined;
}

/** Whether the layer was mounted at the root (`app.use(fn)`). */
export const isRootMount = (layer: RouterLayer): boolean => layer.slash === true || layer.regexp?.fast_slash === true;

/** The path a layer was mounted at, comparable between layers of one app. */
export const mountOf = (layer: RouterLayer): unknown => layer.rawPath ?? layer.regexp?.source;

/** Whether the layer's function is an error middleware (four parameters). */
export const isErrorLayer = (layer: RouterLayer): boolean => typeof layer.handle === 'function' && layer.handle.length === 4;

// Middlewares that run others as one (the preset) name them under this
// symbol, so that a reader of the stack sees routers inside them without
// knowing their shape. Private, as every state of the package
// (docs/architecture.md, "Symbols"): a second copy of the package keeps its own.
const INNER = Symbol('express-api-conventions.innerMiddlewares');

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

/** A route an app or router answers: its full path, and its methods in upper case (`ALL` for `all()`). */
export interface RouteEntry {
  readonly path: string;
  readonly methods: string[];
}

/**
 * The mount path of an Express 4 layer, read back from its regular
 * expression (Express 4 keeps no string): `^\/v1(?:\/([^/]+?))\/?(?=\/|$)`
 * is `/v1/:tenant`. Undefined when the expression is not one Express wrote
 * for a plain path.
 */
function express4MountPath(layer: RouterLayer): string | undefined {
  const regexp = layer.regexp;
  if (!regexp) return undefined;
  if (regexp.fast_slash) return '';
  let source = regexp.source;
  if (!source.startsWith('^') || !source.endsWith('\\/?(?=\\/|$)')) return undefined;
  source = source.slice(1, -'\\/?(?=\\/|$)'.length);
  const keys = layer.keys ?? [];
  let index = 0;
  source = source.replace(/\(\?:\\\/\(\[\^\\?\/\]\+\?\)\)(\?)?/g, (_m, optional: string | undefined) => {
    const key = keys[index++];
    return `/:${String(key?.name ?? index)}${optional ?? ''}`;
  });
  source = source.replace(/\\([/.\-~])/g, '$1');
  if (/[\\()[\]|^$+*]/.test(source.replace(/\/:[A-Za-z0-9_$]+\??/g, ''))) return undefined;
  return source;
}

/**
 * Adds the routes of `target` (an app or a router, mounted routers included)
 * under `prefix` to `out`, and to `unreadable` what cannot be read as a path
 * (a regular expression, a mount Express 4 compiled from one).
 */
export function collectRoutes(target: unknown, prefix: string, out: RouteEntry[], unreadable: string[]): void {
  const stack = routerStackOf(target);
  if (!stack) return;
  for (const layer of stack) {
    if (layer.route) {
      const methods = Object.keys(layer.route.methods)
        .filter((m) => layer.route?.methods[m])
        .map((m) => (m === '_all' ? 'ALL' : m.toUpperCase()));
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      for (const path of paths) {
        if (typeof path === 'string') out.push({ path: joinPath(prefix, path), methods });
        else unreadable.push(`${prefix}${String(path)}`);
      }
    } else if (Array.isArray((layer.handle as { stack?: unknown } | undefined)?.stack)) {
      const raw = layer.rawPath;
      const mounts = raw === undefined ? [express4MountPath(layer)] : Array.isArray(raw) ? raw : [raw];
      for (const mount of mounts) {
        if (typeof mount === 'string') collectRoutes(layer.handle, joinPath(prefix, mount), out, unreadable);
        else unreadable.push(`${prefix}${String(mount ?? layer.regexp)}`);
      }
    }
  }
}

const joinPath = (prefix: string, path: string): string => {
  const joined = `${prefix.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  return joined.length > 1 ? joined.replace(/\/+$/, '') : joined;
};
