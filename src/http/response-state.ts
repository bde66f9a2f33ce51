import type { Response } from 'express';
import type { JsonWriteStep } from './json-writer.js';

/**
 * What the ground floor keeps per response: the head's defaults and rules
 * (response-headers.ts) and the steps the JSON writer runs (json-writer.ts).
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
  /** The response keeps its properties in a dictionary (ownMethod()). */
  dictionary: boolean;
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
      dictionary: false,
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

// Two properties added and taken off again by toDictionary() when the object has no anchor.
const FIRST = Symbol('express-api-conventions.dictionaryFirst');
const SECOND = Symbol('express-api-conventions.dictionarySecond');

/**
 * Makes `method` the response's own `name` (the per-response properties the
 * write path stands in front of: `writeHead`, `json`, `cookie`, `setHeader`).
 *
 * The first time for a response, its properties are moved into a dictionary
 * (toDictionary()): Express sets every response's prototype per request,
 * after which V8 shares no hidden class between responses, so each property
 * added to a response in the usual fast form makes a hidden class of its own
 * and copies its ~50 descriptors, and every read of the response misses V8's
 * caches. Measured over HTTP (docs/performance.md, "Issue 29"): three
 * methods added in the fast form cost 1.15-1.19x the CPU of none; in the
 * dictionary, 0.91-0.94x.
 */
export function ownMethod(res: Response, name: 'writeHead' | 'json' | 'cookie' | 'setHeader', method: unknown): void {
  const state = responseState(res);
  const target = res as unknown as Record<string | symbol, unknown>;
  if (!state.dictionary) {
    state.dictionary = true;
    // Node sets `sendDate` when it makes the response: never the last property added.
    toDictionary(target, 'sendDate');
  }
  target[name] = method;
}

/**
 * Moves an object's properties into a dictionary: taking off a property
 * that was not the last one added does it in V8. `anchor` names a boolean
 * the object's constructor set (so not the last one added): it is taken off
 * and put back with its value, which costs no fast-form addition; without
 * one, two properties of the library's are added and taken off. For the
 * request and the response of one request only (ownMethod(), and the preset
 * for the request, whose later properties Express's router and the stages add).
 */
export function toDictionary(target: object, anchor?: string): void {
  const record = target as Record<string | symbol, unknown>;
  if (anchor !== undefined && Object.hasOwn(record, anchor)) {
    const value = record[anchor];
    if (typeof value === 'boolean') {
      delete record[anchor];
      record[anchor] = value;
      return;
    }
  }
  record[FIRST] = undefined;
  record[SECOND] = undefined;
  delete record[FIRST];
  delete record[SECOND];
}
