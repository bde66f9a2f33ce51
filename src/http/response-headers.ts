import type { Response } from 'express';
import { type HeaderList, type HeaderValue, peekResponseState, type ResponseState, responseState } from './response-state.js';

/**
 * The library's own header writes, held in one list per response and handed
 * to Node in a single `writeHead(status, list)` when the response goes out.
 *
 * Why: Node's `setHeader()` validates the name and the value, lower-cases
 * the name and stores a `[name, value]` array per header; then it
 * concatenates them all again when the head is written. The preset writes
 * some twenty headers on every answer; given to `writeHead()` as one flat
 * list on a response that has no header set yet, Node validates and writes
 * each once and stores none. Measured over HTTP on the control app
 * (bench/apps/control.mjs): 1.31x bare Express with the list, 1.09x with a
 * `setHeader()` per header (docs/performance.md, issue 15).
 *
 * Nothing is given up: the methods every route and middleware uses
 * (`setHeader`, `getHeader`, `hasHeader`, `removeHeader`, `getHeaders`,
 * `getHeaderNames`, `appendHeader`, `writeHead`; Express's `res.set()`,
 * `res.get()`, `res.append()`, `res.vary()` call them) are put once on the
 * app's `app.response` and see the held list: a read answers from it, and
 * the first write of anyone else hands the list to Node's own header store
 * first, in order, then writes. From then on the response is an ordinary
 * one. After the response went out, reads answer from the list the head was
 * written from (a logger's `res.getHeader('content-length')` still works).
 *
 * Header names given here are compared without regard to case, as Node does.
 * The values are given as they would be to `setHeader()`.
 */

/** Where a response's header writes go (`ResponseState.headerMode`). */
const Mode = {
  /** No write through this module yet. */
  Unset: 0,
  /** The library's writes are held in `state.headers`. */
  Held: 1,
  /** Writes go to Node's store at once (handed over, or no app prototype to hold them). */
  Direct: 2,
  /** The head went out through writeHead(status, list): `state.headers` is what was sent. */
  Sent: 3,
} as const;

/** The prototype methods this module stands in front of, as they were before. */
interface BaseMethods {
  setHeader(this: Response, name: string, value: HeaderValue): Response;
  appendHeader(this: Response, name: string, value: HeaderValue): Response;
  getHeader(this: Response, name: string): HeaderValue | undefined;
  getHeaders(this: Response): Record<string, HeaderValue | undefined>;
  getHeaderNames(this: Response): string[];
  getRawHeaderNames(this: Response): string[];
  hasHeader(this: Response, name: string): boolean;
  removeHeader(this: Response, name: string): void;
  writeHead(this: Response, ...args: unknown[]): Response;
}

const BASE = Symbol('express-api-conventions.headerBase');

type Prototype = Record<string | symbol, unknown>;

/**
 * Header names equal without regard to ASCII case, as Node compares them;
 * without lower-casing copies (this runs for every held write).
 */
function sameName(a: string, b: string): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const lower = x | 0x20;
    // Only letters fold: '^' and '~' also differ by 0x20.
    if (lower !== (y | 0x20) || lower < 0x61 || lower > 0x7a) return false;
  }
  return true;
}

/** The position of `name` in a flat [name, value, …] list, or -1. */
function indexIn(list: HeaderList, name: string): number {
  for (let i = 0; i < list.length; i += 2) if (sameName(list[i] as string, name)) return i;
  return -1;
}

const stateIn = peekResponseState;

/** Hands a held list to Node's own store, in order; the response is ordinary from then on. */
function handOver(res: Response, state: ResponseState): void {
  const list = state.headers;
  const base = state.base as BaseMethods;
  state.headerMode = Mode.Direct;
  state.headers = undefined;
  if (list === undefined) return;
  for (let i = 0; i < list.length; i += 2) base.setHeader.call(res, list[i] as string, list[i + 1] as HeaderValue);
}

/** The list the head was written from, when Node stored none of it (its fast path). */
function sentList(res: Response, state: ResponseState): HeaderList | undefined {
  const list = state.headers;
  if (list === undefined || list.length === 0) return undefined;
  // Node's slow path (a header was already in its store) copied the list into the store.
  return (state.base as BaseMethods).getHeaderNames.call(res).length === 0 ? list : undefined;
}

// Two named parameters, not a rest array: these run for every header anyone sets.
const writeMethod = (name: 'setHeader' | 'appendHeader' | 'removeHeader', base: BaseMethods) =>
  function (this: Response, header: string, value: HeaderValue) {
    const state = stateIn(this);
    if (state !== undefined && state.headerMode === Mode.Held) handOver(this, state);
    return (base[name] as (this: Response, header: string, value: HeaderValue) => unknown).call(this, header, value);
  };

/** The methods put on the app's prototype, around the ones found there. */
function install(proto: Prototype): BaseMethods {
  const found = (name: keyof BaseMethods) => {
    const method = proto[name];
    if (typeof method !== 'function') throw new TypeError(`express-api-conventions: the response has no ${name}()`);
    return method as never;
  };
  const base: BaseMethods = {
    setHeader: found('setHeader'),
    appendHeader: found('appendHeader'),
    getHeader: found('getHeader'),
    getHeaders: found('getHeaders'),
    getHeaderNames: found('getHeaderNames'),
    getRawHeaderNames: found('getRawHeaderNames'),
    hasHeader: found('hasHeader'),
    removeHeader: found('removeHeader'),
    writeHead: found('writeHead'),
  };

  function getHeader(this: Response, name: string): HeaderValue | undefined {
    const state = stateIn(this);
    if (state !== undefined && (state.headerMode === Mode.Held || state.headerMode === Mode.Sent)) {
      const list = state.headerMode === Mode.Held ? state.headers : sentList(this, state);
      if (list !== undefined) {
        if (typeof name !== 'string') return base.getHeader.call(this, name); // Node's own error
        const at = indexIn(list, name);
        if (at >= 0) return list[at + 1] as HeaderValue;
        if (state.headerMode === Mode.Sent) return undefined;
      }
    }
    return base.getHeader.call(this, name);
  }

  function hasHeader(this: Response, name: string): boolean {
    return getHeader.call(this, name) !== undefined;
  }

  // Whole-store reads: rare (loggers, finalhandler); the held list is handed over first.
  const wholeRead = <Name extends 'getHeaders' | 'getHeaderNames' | 'getRawHeaderNames'>(name: Name) =>
    function (this: Response): ReturnType<BaseMethods[Name]> {
      const state = stateIn(this);
      if (state !== undefined) {
        if (state.headerMode === Mode.Held) handOver(this, state);
        else if (state.headerMode === Mode.Sent) {
          const list = sentList(this, state);
          if (list !== undefined) return readList(list, name) as ReturnType<BaseMethods[Name]>;
        }
      }
      return (base[name] as (this: Response) => unknown).call(this) as ReturnType<BaseMethods[Name]>;
    };

  function writeHead(this: Response, statusCode: number, reason?: unknown, headers?: unknown): Response {
    const state = stateIn(this);
    if (state !== undefined && state.headerMode === Mode.Held) {
      const given = typeof reason === 'string' ? headers : reason;
      if (given === undefined) {
        // Node's fast path when its store is empty; otherwise it sets each through setHeader().
        state.headerMode = Mode.Sent;
        const list = state.headers as HeaderList;
        return typeof reason === 'string'
          ? base.writeHead.call(this, statusCode, reason, list)
          : base.writeHead.call(this, statusCode, list);
      }
      handOver(this, state);
    }
    // Node reads an absent reason or headers as undefined: passing all three is the same call.
    return base.writeHead.call(this, statusCode, reason, headers);
  }

  const methods: Record<string, unknown> = {
    setHeader: writeMethod('setHeader', base),
    appendHeader: writeMethod('appendHeader', base),
    removeHeader: writeMethod('removeHeader', base),
    getHeader,
    hasHeader,
    getHeaders: wholeRead('getHeaders'),
    getHeaderNames: wholeRead('getHeaderNames'),
    getRawHeaderNames: wholeRead('getRawHeaderNames'),
    writeHead,
  };
  for (const [name, value] of Object.entries(methods)) {
    Object.defineProperty(proto, name, { value, writable: true, configurable: true, enumerable: false });
  }
  Object.defineProperty(proto, BASE, { value: base, enumerable: false });
  return base;
}

/** getHeaders(), getHeaderNames() or getRawHeaderNames() of a sent list. */
function readList(list: HeaderList, name: 'getHeaders' | 'getHeaderNames' | 'getRawHeaderNames'): unknown {
  if (name === 'getHeaders') {
    const headers: Record<string, HeaderValue> = Object.create(null) as Record<string, HeaderValue>;
    for (let i = 0; i < list.length; i += 2) headers[(list[i] as string).toLowerCase()] = list[i + 1] as HeaderValue;
    return headers;
  }
  const names: string[] = [];
  for (let i = 0; i < list.length; i += 2)
    names.push(name === 'getHeaderNames' ? (list[i] as string).toLowerCase() : (list[i] as string));
  return names;
}

/**
 * The response's state when its headers are held; `undefined` when writes go
 * straight to Node (the headers went out, or the response was not made by
 * an Express app, whose `app.response` is where the methods above live).
 */
function held(res: Response): ResponseState | undefined {
  const state = responseState(res);
  if (state.headerMode === Mode.Held) return state;
  if (state.headerMode !== Mode.Unset) return undefined;
  const proto = Object.getPrototypeOf(res) as Prototype | null;
  let base = proto?.[BASE] as BaseMethods | undefined;
  // Express's app.response has an own `app`: never Node's shared ServerResponse.prototype.
  if (base === undefined && proto !== null && Object.hasOwn(proto, 'app')) base = install(proto);
  if (base === undefined || res.headersSent) {
    state.headerMode = Mode.Direct;
    return undefined;
  }
  state.headerMode = Mode.Held;
  state.base = base;
  state.headers = [];
  // Whether Node's store was empty when holding began (it then stays so:
  // anyone else's write hands the list over); spares removals a lookup there.
  state.storeEmpty = base.getHeaderNames.call(res).length === 0;
  return state;
}

/** res.setHeader(name, value), held while the response's headers are. */
export function setResponseHeader(res: Response, name: string, value: HeaderValue): void {
  const state = held(res);
  if (state === undefined) {
    res.setHeader(name, value);
    return;
  }
  const list = state.headers as HeaderList;
  const at = indexIn(list, name);
  if (at >= 0) list[at + 1] = value;
  else list.push(name, value);
}

/** Sets fixed headers, a flat [name, value, …] list computed once by the caller. */
export function setResponseHeaders(res: Response, fixed: readonly string[]): void {
  const state = held(res);
  if (state !== undefined && (state.headers as HeaderList).length === 0) {
    (state.headers as HeaderList).push(...fixed);
    return;
  }
  for (let i = 0; i < fixed.length; i += 2) setResponseHeader(res, fixed[i] as string, fixed[i + 1] as string);
}

/** res.getHeader(name), the held list first. */
export function getResponseHeader(res: Response, name: string): HeaderValue | undefined {
  const state = held(res);
  if (state !== undefined) {
    const list = state.headers as HeaderList;
    const at = indexIn(list, name);
    if (at >= 0) return list[at + 1] as HeaderValue;
    if (state.storeEmpty) return undefined;
    return (state.base as BaseMethods).getHeader.call(res, name);
  }
  return res.getHeader(name);
}

/** res.removeHeader(name), from the held list and from Node's store. */
export function removeResponseHeader(res: Response, name: string): void {
  const state = held(res);
  if (state === undefined) {
    res.removeHeader(name);
    return;
  }
  const list = state.headers as HeaderList;
  const at = indexIn(list, name);
  if (at >= 0) list.splice(at, 2);
  if (!state.storeEmpty) (state.base as BaseMethods).removeHeader.call(res, name);
}

/**
 * Express's `res.append(name, value)`: the value added after the ones the
 * header has (a field line each), or the header set when it has none.
 */
export function appendResponseHeader(res: Response, name: string, value: string): void {
  if (held(res) === undefined) {
    res.append(name, value);
    return;
  }
  const previous = getResponseHeader(res, name);
  if (previous === undefined) setResponseHeader(res, name, value);
  else if (Array.isArray(previous)) setResponseHeader(res, name, [...(previous as string[]), value]);
  else setResponseHeader(res, name, [String(previous), value]);
}
