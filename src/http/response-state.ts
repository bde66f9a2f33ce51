import type { Response } from 'express';
import { toDictionary } from './dictionary-mode.js';

/**
 * What the ground floor keeps per response: the head's defaults and rules
 * (response-headers.ts) and the steps the JSON writer runs (json-output/writer.ts).
 * Higher floors hand their behaviour in through those; this shape never
 * names a concept above it. A fact of their own (the error shape of an
 * OAuth endpoint, a cookie's opt-out) they keep under their own symbol in
 * localsOf(res).
 *
 * It lives in one object under a symbol in `res.locals` (the object Express
 * makes for every response, with no prototype), not as properties of the
 * response: the response itself gets only the methods the conventions must
 * stand in front of (`writeHead`, and `json`/`cookie` when their stages run;
 * docs/performance.md measures what each costs).
 */
/** A header value as `res.setHeader()` takes it. */
export type HeaderValue = string | number | readonly string[];

/**
 * A step the JSON writer (json-output/writer.ts) runs before writing a JSON
 * representation. It may set headers; it returns `true` when it answered the
 * response itself (a 304, a replaced answer), and then the writer writes
 * nothing more.
 */
export type JsonWriteStep = (res: Response, text: string) => boolean;

export interface ResponseState {
  /** Run on the text of every JSON representation the writer writes. */
  jsonInspector: JsonWriteStep | undefined;
  /** Run on the text of a GET or HEAD 200 representation. */
  readStep: JsonWriteStep | undefined;
  /** The `writeHead` the head hook stands in front of; `undefined` until the hook is on. */
  writeHead: ((this: Response, ...args: unknown[]) => Response) | undefined;
  /** Something had wrapped `res.writeHead` before the hook: its own hook runs after ours. */
  wrappedBefore: boolean;
  /** The head went out through the hook. */
  headPassed: boolean;
  /** ownMethod() has yet to move the response's properties into a dictionary; false once done, or when the preset's `dictionaryMode` is off. */
  toDictionary: boolean;
  /** The `setHeader` the rules watch below the hook, when something wrapped writeHead before it. */
  setHeader: ((this: Response, name: string, value: HeaderValue) => Response) | undefined;
  /** Fixed [name, value, …] lists written with the head, for names nobody set by then. */
  defaults: readonly (readonly string[])[] | undefined;
  /** Fixed lists of header names removed when the head is written. */
  removals: readonly (readonly string[])[] | undefined;
  /** Rules on one header each, run at the head whoever wrote it (src/http/response-headers.ts). */
  rules: readonly HeaderRule[] | undefined;
}

/**
 * A rule on one header, run when the head is written on whatever value it
 * has then (set by a neighbour, a route, the library, or given to
 * `writeHead(status, headers)`), and on every later `setHeader()` of it
 * by a hook that runs below the library's: it returns the value to send.
 */
export interface HeaderRule {
  /** The header's name in lower case. */
  readonly name: string;
  /** The same name as it is written on the wire. */
  readonly field: string;
  readonly apply: (res: Response, value: HeaderValue) => HeaderValue;
}

// A private symbol: `import` and `require` share one build, so one copy of
// the package has one key. Two copies in one tree (two versions side by
// side) each keep their own state and head hook on a response, never one
// shape read by the other version's code.
const STATE = Symbol('express-api-conventions.responseState');

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
      writeHead: undefined,
      wrappedBefore: false,
      headPassed: false,
      toDictionary: true,
      setHeader: undefined,
      defaults: undefined,
      removals: undefined,
      rules: undefined,
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
 * Makes `method` the response's own `name` (the per-response properties the
 * write path stands in front of: `writeHead`, `json`, `cookie`, `setHeader`).
 *
 * The first time for a response, its properties are moved into a
 * dictionary (dictionary-mode.ts; only for a response Express made):
 * otherwise each property added to it makes a hidden class of its own and
 * every read of it misses V8's caches (docs/performance.md, "The request
 * and the response as dictionaries").
 */
export function ownMethod(res: Response, name: 'writeHead' | 'json' | 'cookie' | 'setHeader', method: unknown): void {
  const state = responseState(res);
  if (state.toDictionary) {
    state.toDictionary = false;
    toDictionary(res, 'response');
  }
  (res as unknown as Record<string, unknown>)[name] = method;
}

/** The preset's `dictionaryMode: false`: ownMethod() leaves the response's properties as they are. */
export function keepFastProperties(res: Response): void {
  responseState(res).toDictionary = false;
}
