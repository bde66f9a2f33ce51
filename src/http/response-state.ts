import type { Response } from 'express';
import type { JsonWriteStep } from './json-writer.js';

/**
 * What the ground floor keeps per response: the held headers, defaults and
 * rules (response-headers.ts), the steps the JSON writer runs
 * (json-writer.ts) and the choice each prototype dispatcher decides by
 * (installOnPrototype()). Higher floors hand their behaviour in through
 * those; this shape never names a concept above it. A rare fact of their
 * own (the error shape of an OAuth endpoint) they keep under their own
 * symbol in localsOf(res).
 *
 * It lives in one object under a symbol in `res.locals` (the object Express
 * makes for every response, with no prototype), never as new properties of
 * the response itself: every property added to a `ServerResponse` gives it
 * another hidden class, and Node's own header and write paths, which see
 * every response, then run polymorphic. Measured over HTTP (bench/micro/
 * http-ab.mjs): one added property cost 5-10 % of bare Express's
 * throughput, five cost about 25 % (docs/performance.md).
 */
/** A header value as `res.setHeader()` takes it. */
export type HeaderValue = string | number | readonly string[];

/** Headers as a flat `[name, value, name, value, …]` list, the form `writeHead()` takes. */
export type HeaderList = (string | HeaderValue)[];

export interface ResponseState {
  /** Run on the text of every JSON representation the writer writes. */
  jsonInspector: JsonWriteStep | undefined;
  /** Run on the text of a GET or HEAD 200 representation. */
  readStep: JsonWriteStep | undefined;
  /** What the dispatcher put in place of `res.json()` decides by; `undefined`: the method it replaced runs. */
  jsonChoice: unknown;
  /** The same for `res.cookie()`. */
  cookieChoice: unknown;
  /** Where the library's header writes go (src/http/response-headers.ts). */
  headerMode: number;
  /** The held headers, or after a held write, the list the head was written from. */
  headers: HeaderList | undefined;
  /** The response methods the held headers stand in front of. */
  base: object | undefined;
  /** Node's header store was empty when holding began. */
  storeEmpty: boolean;
  /** Fixed [name, value, …] lists applied when the head is written, for names nobody set by then. */
  defaults: (readonly string[])[] | undefined;
  /** Default names someone removed on purpose before the head: they stay off. */
  suppressed: string[] | undefined;
  /** Rules run on every write of their header, whoever writes it (src/http/response-headers.ts). */
  headerRules: readonly HeaderRule[] | undefined;
}

/**
 * A rule on one header, run on every `setHeader()`/`appendHeader()` of it
 * through the app's response, whoever calls it (a neighbour, a route, the
 * library): it returns the value to store.
 */
export interface HeaderRule {
  /** The header's name in lower case. */
  readonly name: string;
  readonly apply: (res: Response, value: HeaderValue) => HeaderValue;
}

const STATE = Symbol.for('express-api-conventions.responseState');

type Holder = { [STATE]?: ResponseState };

/**
 * Where the library keeps what it knows of a response, under its symbols:
 * `res.locals` under Express; the response itself (an added property) when
 * something else made it.
 */
export function localsOf(res: Response): Record<symbol, unknown> {
  const locals = (res as { locals?: unknown }).locals;
  return typeof locals === 'object' && locals !== null
    ? (locals as Record<symbol, unknown>)
    : (res as unknown as Record<symbol, unknown>);
}

const holderOf = (res: Response): Holder => localsOf(res) as Holder;

/** The response's state, made on first use. */
export function responseState(res: Response): ResponseState {
  const holder = holderOf(res);
  let state = holder[STATE];
  if (state === undefined) {
    // Every field from the start: one shape for every response's state.
    state = {
      jsonInspector: undefined,
      readStep: undefined,
      jsonChoice: undefined,
      cookieChoice: undefined,
      headerMode: 0,
      headers: undefined,
      base: undefined,
      storeEmpty: false,
      defaults: undefined,
      suppressed: undefined,
      headerRules: undefined,
    };
    holder[STATE] = state;
  }
  return state;
}

/** The response's state if a middleware set one. */
export function peekResponseState(res: Response): ResponseState | undefined {
  return holderOf(res)[STATE];
}

/**
 * Puts a dispatcher on the prototype of `res` in place of its `name`
 * method, once per prototype: under Express that prototype is the app's
 * `app.response`, shared by that app's responses only (a mounted sub-app's
 * `response` inherits its parent's, so it finds the dispatcher there). The
 * dispatcher, made by `make(replaced)`, must decide per response (from
 * dispatchChoice()) and call `replaced` otherwise, so that a response that
 * never passed the middleware, in this app or another, gets the replaced method.
 * `dispatchers` holds what `make` returned, to know them again. Returns
 * false when the response was not made by an Express app (then nothing is
 * installed: there is no per-app prototype to put it on).
 */
export function installOnPrototype<Method extends (...args: never[]) => unknown>(
  res: Response,
  name: DispatchedMethod,
  make: (replaced: Method) => Method,
  dispatchers: WeakSet<object>,
): boolean {
  const proto = Object.getPrototypeOf(res) as Record<string, unknown> | null;
  // Express's app.response has an own `app`: never Node's shared ServerResponse.prototype.
  if (proto === null || !Object.hasOwn(proto, 'app')) return false;
  const current = proto[name];
  if (typeof current === 'function' && dispatchers.has(current)) return true;
  const dispatcher = make(current as Method);
  dispatchers.add(dispatcher);
  Object.defineProperty(proto, name, { value: dispatcher, writable: true, configurable: true, enumerable: false });
  return true;
}

/** The method names installOnPrototype() replaces. */
export type DispatchedMethod = 'json' | 'cookie';

/**
 * Sets what the dispatcher in place of `res[name]` decides by for this
 * response (the middleware that installed it calls this per response).
 */
export function setDispatchChoice(res: Response, name: DispatchedMethod, choice: unknown): void {
  const state = responseState(res);
  if (name === 'json') state.jsonChoice = choice;
  else state.cookieChoice = choice;
}

/** setDispatchChoice(), unless a choice was made for this response already: the first middleware passed decides. */
export function setDispatchChoiceOnce(res: Response, name: DispatchedMethod, choice: unknown): void {
  if (dispatchChoice(res, name) === undefined) setDispatchChoice(res, name, choice);
}

/**
 * What the dispatcher in place of `res[name]` decides by for this response
 * (of the type its middleware sets); `undefined`: the replaced method runs.
 */
export function dispatchChoice<Choice>(res: Response, name: DispatchedMethod): Choice | undefined {
  const state = peekResponseState(res);
  if (state === undefined) return undefined;
  return (name === 'json' ? state.jsonChoice : state.cookieChoice) as Choice | undefined;
}
