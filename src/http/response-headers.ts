import type { Response } from 'express';
import {
  type HeaderList,
  type HeaderRule,
  type HeaderValue,
  peekResponseState,
  type ResponseState,
  responseState,
} from './response-state.js';

/**
 * How the library's headers reach the wire, and how they live beside the
 * neighbours that wrap the same response (morgan, express-session,
 * compression and everything else built on `on-headers`).
 *
 * Three kinds of header:
 * - **Facts** of one answer (Content-Type, Content-Length, ETag, Vary, CORS,
 *   RateLimit) are set when known, and read back at once.
 * - **Defaults** (Cache-Control `no-store, max-age=0`, the security
 *   headers, nosniff) are registered as fixed lists and applied when the
 *   head is written, only for the names nobody set (or removed) by then:
 *   serve-static's `Cache-Control`, a route's own CSP or a team's helmet
 *   keep their values. Like `Date`, a default is not seen by a read before
 *   the head.
 * - **Rules** run on every write of one header, whoever writes it: every
 *   `Set-Cookie` gets `Secure` and `HttpOnly`, a `Content-Encoding` gives
 *   the body's strong ETag that coding.
 *
 * Where the writes go. The cheap path holds the facts in one list per
 * response and hands it, with the defaults, to Node in one
 * `writeHead(status, list)`: Node then validates and writes each header once
 * and stores none (1.31x bare Express on the control app against 1.09x
 * with a `setHeader()` each; docs/performance.md). It is taken only when it
 * is provably safe: the response's `writeHead` is the one this module put
 * on the app's prototype, so the head cannot go out without it (a wrapper
 * installed later captures it and calls it). When something wrapped
 * `writeHead` before the preset saw the response, the writes go straight to
 * Node's store, and a wrapper around that response's `writeHead` applies
 * the defaults. Reads and writes by anyone else see Node's ordinary
 * behaviour; after the head went out, reads answer what was sent, and no
 * method of this module throws.
 *
 * Header names given here are compared without regard to case, as Node does.
 */

/** Where a response's header writes go (`ResponseState.headerMode`). */
const Mode = {
  /** No write through this module yet. */
  Unset: 0,
  /** The facts are held in `state.headers`. */
  Held: 1,
  /** Writes go to Node's store at once. */
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

/** What install() left on an app's prototype. */
interface Installed {
  readonly base: BaseMethods;
  /** The writeHead this module put there: the cheap path needs the response to resolve to it. */
  readonly writeHead: unknown;
}

// A registry symbol: the package's CommonJS and ESM builds, both loaded in one
// process, share one set of methods on a prototype (and the state they read).
const INSTALLED = Symbol.for('express-api-conventions.headerMethods');

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
function indexIn(list: readonly (string | HeaderValue)[], name: string): number {
  for (let i = 0; i < list.length; i += 2) if (sameName(list[i] as string, name)) return i;
  return -1;
}

const stateIn = peekResponseState;

let lostHeadWarned = false;

/**
 * The head went out without passing this module while the facts were held:
 * only a wrapper that replaced `res.writeHead` and never called the one it
 * found does that. Said once, outside production; the response is treated
 * as an ordinary one from here, so nothing throws.
 */
function headWentAround(state: ResponseState): void {
  state.headerMode = Mode.Direct;
  state.headers = undefined;
  state.defaults = undefined;
  if (lostHeadWarned || process.env.NODE_ENV === 'production') return;
  lostHeadWarned = true;
  process.emitWarning(
    "A response's head was written around express-api-conventions: a middleware replaced res.writeHead() without calling the one it found, and the preset's headers were not sent. Mount that middleware after the preset, or make it call the writeHead it replaced.",
    { code: 'EAC_HEAD_WENT_AROUND' },
  );
}

/** Hands a held list to Node's own store, in order; the response is ordinary from then on. */
function handOver(res: Response, state: ResponseState): void {
  if (res.headersSent) {
    headWentAround(state);
    return;
  }
  const list = state.headers;
  const base = state.base as BaseMethods;
  state.headerMode = Mode.Direct;
  state.headers = undefined;
  if (list === undefined) return;
  for (let i = 0; i < list.length; i += 2) base.setHeader.call(res, list[i] as string, list[i + 1] as HeaderValue);
}

/** Whether a default name was removed on purpose before the head. */
const isSuppressed = (state: ResponseState, name: string): boolean =>
  state.suppressed !== undefined && indexIn(state.suppressed, name) >= 0;

/**
 * The held facts with the defaults nobody set, as one list for writeHead():
 * the defaults are appended to the held list itself (no copy per response),
 * a later stage's default over an earlier one's.
 */
function withDefaults(res: Response, state: ResponseState): HeaderList {
  const held = state.headers as HeaderList;
  const lists = state.defaults;
  if (lists === undefined) return held;
  const base = state.base as BaseMethods;
  for (let l = lists.length - 1; l >= 0; l--) {
    const list = lists[l] as readonly string[];
    for (let i = 0; i < list.length; i += 2) {
      const name = list[i] as string;
      // A fact, or a default already taken from a later list (names within one list differ).
      if (indexIn(held, name) >= 0) continue;
      if (isSuppressed(state, name) || (!state.storeEmpty && base.hasHeader.call(res, name))) continue;
      held.push(name, list[i + 1] as string);
    }
  }
  return held;
}

/** Applies the defaults nobody set to Node's store (the response's writes go there). */
function applyDefaults(res: Response, state: ResponseState): void {
  const lists = state.defaults;
  if (lists === undefined) return;
  state.defaults = undefined;
  const base = state.base as BaseMethods | undefined;
  for (let l = lists.length - 1; l >= 0; l--) {
    const list = lists[l] as readonly string[];
    for (let i = 0; i < list.length; i += 2) {
      const name = list[i] as string;
      if (isSuppressed(state, name)) continue;
      if (base === undefined ? res.hasHeader(name) : base.hasHeader.call(res, name)) continue;
      if (base === undefined) res.setHeader(name, list[i + 1] as string);
      else base.setHeader.call(res, name, list[i + 1] as string);
    }
  }
}

/**
 * The list the head was written from, when Node stored none of it (its cheap
 * path): its store was empty when holding began and, held, stayed so. Read
 * from the state, not by asking Node for its names on every later read.
 */
function sentList(state: ResponseState): HeaderList | undefined {
  const list = state.headers;
  if (list === undefined || list.length === 0) return undefined;
  // Node's other path (a header was already in its store) copied the list into the store.
  return state.storeEmpty ? list : undefined;
}

/** A value after the rules on its header (Set-Cookie, Content-Encoding). */
function ruled(res: Response, rules: readonly HeaderRule[], name: string, value: HeaderValue): HeaderValue {
  let result = value;
  // An index, not for…of: this runs on every held write, and an iterator would be allocated each time.
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as HeaderRule;
    if (sameName(rule.name, name)) result = rule.apply(res, result);
  }
  return result;
}

/** The methods of the app's response prototype that the installed ones stand in front of. */
function baseMethodsOf(proto: Prototype): BaseMethods {
  const found = (name: keyof BaseMethods) => {
    const method = proto[name];
    if (typeof method !== 'function') throw new TypeError(`express-api-conventions: the response has no ${name}()`);
    return method as never;
  };
  return {
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
}

// Each installed method below is made once per prototype around `base`, the
// method it replaced; per response it decides from the response's state.

/** setHeader() or appendHeader(): hands held facts over, then applies the header's rules. */
function writeMethod(base: BaseMethods, name: 'setHeader' | 'appendHeader') {
  // Two named parameters, not a rest array: these run for every header anyone sets.
  return function (this: Response, header: string, value: HeaderValue) {
    const state = stateIn(this);
    let stored = value;
    if (state !== undefined) {
      if (state.headerMode === Mode.Held) handOver(this, state);
      if (state.headerRules !== undefined) stored = ruled(this, state.headerRules, header, value);
    }
    return base[name].call(this, header, stored);
  };
}

/** removeHeader(): a default removed on purpose stays off. */
function removeMethod(base: BaseMethods) {
  return function removeHeader(this: Response, name: string): void {
    const state = stateIn(this);
    if (state !== undefined) {
      if (state.headerMode === Mode.Held) handOver(this, state);
      if (state.defaults !== undefined && typeof name === 'string') {
        // A flat [name, value, …] list, as indexIn() reads it.
        if (state.suppressed === undefined) state.suppressed = [name, ''];
        else state.suppressed.push(name, '');
      }
    }
    base.removeHeader.call(this, name);
  };
}

/** getHeader(): the held list (or the list the head was written from) first. */
function readMethod(base: BaseMethods) {
  return function getHeader(this: Response, name: string): HeaderValue | undefined {
    const state = stateIn(this);
    if (state !== undefined && (state.headerMode === Mode.Held || state.headerMode === Mode.Sent)) {
      if (state.headerMode === Mode.Held && this.headersSent) headWentAround(state);
      else {
        const list = state.headerMode === Mode.Held ? state.headers : sentList(state);
        if (list !== undefined) {
          if (typeof name !== 'string') return base.getHeader.call(this, name); // Node's own error
          const at = indexIn(list, name);
          if (at >= 0) return list[at + 1] as HeaderValue;
          if (state.headerMode === Mode.Sent || state.storeEmpty) return undefined;
        }
      }
    }
    return base.getHeader.call(this, name);
  };
}

/** Whole-store reads: rare (loggers, finalhandler); held facts are handed over first. */
function wholeReadMethod<Name extends 'getHeaders' | 'getHeaderNames' | 'getRawHeaderNames'>(base: BaseMethods, name: Name) {
  return function (this: Response): ReturnType<BaseMethods[Name]> {
    const state = stateIn(this);
    if (state !== undefined) {
      if (state.headerMode === Mode.Held) handOver(this, state);
      else if (state.headerMode === Mode.Sent) {
        const list = sentList(state);
        if (list !== undefined) return readList(list, name) as ReturnType<BaseMethods[Name]>;
      }
    }
    return (base[name] as (this: Response) => unknown).call(this) as ReturnType<BaseMethods[Name]>;
  };
}

/** writeHead(): the held facts and the defaults in one list when nothing was stored, else through the store. */
function writeHeadMethod(base: BaseMethods) {
  return function writeHead(this: Response, statusCode: number, reason?: unknown, headers?: unknown): Response {
    const state = stateIn(this);
    if (state !== undefined && !this.headersSent) {
      if (state.headerMode === Mode.Held) {
        const given = typeof reason === 'string' ? headers : reason;
        if (given === undefined) {
          // Node's cheap path when its store is empty; otherwise it sets each through setHeader().
          const list = withDefaults(this, state);
          state.headerMode = Mode.Sent;
          state.headers = list;
          state.defaults = undefined;
          return typeof reason === 'string'
            ? base.writeHead.call(this, statusCode, reason, list)
            : base.writeHead.call(this, statusCode, list);
        }
        handOver(this, state);
      }
      if (state.headerMode === Mode.Direct) applyDefaults(this, state);
    }
    // Node reads an absent reason or headers as undefined: passing all three is the same call.
    return base.writeHead.call(this, statusCode, reason, headers);
  };
}

/** The methods put on the app's prototype, around the ones found there. */
function install(proto: Prototype): Installed {
  const base = baseMethodsOf(proto);
  const getHeader = readMethod(base);
  const writeHead = writeHeadMethod(base);
  const methods: Record<string, unknown> = {
    setHeader: writeMethod(base, 'setHeader'),
    appendHeader: writeMethod(base, 'appendHeader'),
    removeHeader: removeMethod(base),
    getHeader,
    hasHeader: function hasHeader(this: Response, name: string): boolean {
      return getHeader.call(this, name) !== undefined;
    },
    getHeaders: wholeReadMethod(base, 'getHeaders'),
    getHeaderNames: wholeReadMethod(base, 'getHeaderNames'),
    getRawHeaderNames: wholeReadMethod(base, 'getRawHeaderNames'),
    writeHead,
  };
  for (const [name, value] of Object.entries(methods)) {
    Object.defineProperty(proto, name, { value, writable: true, configurable: true, enumerable: false });
  }
  const installed: Installed = { base, writeHead };
  Object.defineProperty(proto, INSTALLED, { value: installed, enumerable: false });
  return installed;
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
 * The outermost Express app prototype of `res`: a sub-app's `response`
 * inherits its parent's, so methods put there serve the whole app tree,
 * also when a response that passed the preset in a sub-app is finished by
 * the parent (its 404, its error handler). Express's app.response has an
 * own `app`; Node's shared ServerResponse.prototype never does.
 */
function rootAppPrototype(res: Response): Prototype | undefined {
  let root: Prototype | undefined;
  let proto = Object.getPrototypeOf(res) as Prototype | null;
  while (proto !== null && Object.hasOwn(proto, 'app')) {
    root = proto;
    proto = Object.getPrototypeOf(proto) as Prototype | null;
  }
  return root;
}

/**
 * Applies the defaults when the head is written, around a `writeHead` this
 * module does not own (a neighbour's wrapper, or a response no Express app
 * made): the on-headers pattern, so it runs whatever wrapped writeHead
 * before, and a wrapper put on after calls it.
 */
function applyDefaultsAtHead(res: Response, state: ResponseState): void {
  const previous = res.writeHead;
  res.writeHead = function writeHeadWithDefaults(this: Response, ...args: unknown[]) {
    if (!this.headersSent) applyDefaults(this, state);
    return (previous as (...a: unknown[]) => Response).apply(this, args);
  } as Response['writeHead'];
}

/** Decides, once per response, where its writes go. */
function begin(res: Response, state: ResponseState): void {
  const proto = Object.getPrototypeOf(res) as Prototype | null;
  let installed = proto?.[INSTALLED] as Installed | undefined;
  if (installed === undefined) {
    const root = rootAppPrototype(res);
    if (root !== undefined) installed = install(root);
  }
  state.base = installed?.base;
  state.headerMode = Mode.Direct;
  if (res.headersSent) return;
  if (installed === undefined || res.writeHead !== installed.writeHead) {
    applyDefaultsAtHead(res, state);
    return;
  }
  state.headerMode = Mode.Held;
  state.headers = [];
  // Whether Node's store was empty when holding began (it then stays so:
  // anyone else's write hands the list over); spares removals a lookup there.
  state.storeEmpty = installed.base.getHeaderNames.call(res).length === 0;
}

/** The response's state when its facts are held; `undefined` when writes go straight to Node. */
function held(res: Response): ResponseState | undefined {
  const state = responseState(res);
  if (state.headerMode === Mode.Unset) begin(res, state);
  return state.headerMode === Mode.Held ? state : undefined;
}

/** res.setHeader(name, value), held while the response's facts are; the header's rules apply either way. */
export function setResponseHeader(res: Response, name: string, value: HeaderValue): void {
  const state = held(res);
  if (state === undefined) {
    if (!res.headersSent) res.setHeader(name, value);
    return;
  }
  const stored = state.headerRules === undefined ? value : ruled(res, state.headerRules, name, value);
  const list = state.headers as HeaderList;
  const at = indexIn(list, name);
  if (at >= 0) list[at + 1] = stored;
  else list.push(name, stored);
}

/** Sets fixed headers, a flat [name, value, …] list computed once by the caller. */
export function setResponseHeaders(res: Response, fixed: readonly string[]): void {
  const state = held(res);
  if (state !== undefined && (state.headers as HeaderList).length === 0) {
    const list = state.headers as HeaderList;
    list.push(...fixed);
    const rules = state.headerRules;
    if (rules !== undefined) {
      for (let i = 0; i < list.length; i += 2) list[i + 1] = ruled(res, rules, list[i] as string, list[i + 1] as HeaderValue);
    }
    return;
  }
  for (let i = 0; i < fixed.length; i += 2) setResponseHeader(res, fixed[i] as string, fixed[i + 1] as string);
}

/**
 * Registers fixed defaults, a flat [name, value, …] list computed once by
 * the caller: each is written when the head is, unless the app, a neighbour
 * or a route set (or removed) that header by then. A later list's value
 * wins over an earlier one's. Nothing is registered once the head went out.
 */
export function setDefaultHeaders(res: Response, fixed: readonly string[]): void {
  const state = responseState(res);
  if (state.headerMode === Mode.Unset) begin(res, state);
  if (res.headersSent || state.headerMode === Mode.Sent) return;
  if (state.defaults === undefined) state.defaults = [fixed];
  else if (!state.defaults.includes(fixed)) state.defaults.push(fixed);
}

// The lists of rules, made once per combination (rules are made once per
// middleware, so there are few): a response is given a shared list, not a
// new array.
const ONE_RULE = new WeakMap<HeaderRule, readonly HeaderRule[]>();
const ONE_MORE = new WeakMap<readonly HeaderRule[], WeakMap<HeaderRule, readonly HeaderRule[]>>();

function withRule(rules: readonly HeaderRule[] | undefined, rule: HeaderRule): readonly HeaderRule[] {
  if (rules === undefined) {
    let one = ONE_RULE.get(rule);
    if (one === undefined) {
      one = Object.freeze([rule]);
      ONE_RULE.set(rule, one);
    }
    return one;
  }
  let byRule = ONE_MORE.get(rules);
  if (byRule === undefined) {
    byRule = new WeakMap();
    ONE_MORE.set(rules, byRule);
  }
  let more = byRule.get(rule);
  if (more === undefined) {
    more = Object.freeze([...rules, rule]);
    byRule.set(rule, more);
  }
  return more;
}

/**
 * Runs `rule` on every later write of its header to this response, whoever
 * writes it, and on the value it has now. Rules are shared objects made
 * once by their middleware.
 */
export function addHeaderRule(res: Response, rule: HeaderRule): void {
  const state = responseState(res);
  if (state.headerMode === Mode.Unset) begin(res, state);
  const rules = state.headerRules;
  if (rules?.includes(rule)) return;
  state.headerRules = withRule(rules, rule);
  if (res.headersSent) return;
  const current = getResponseHeader(res, rule.name);
  if (current !== undefined) {
    const next = rule.apply(res, current);
    if (next !== current) setResponseHeader(res, rule.name, next);
  }
}

/**
 * The default registered for `name` that the head will carry unless someone
 * sets or removes the header first, or `undefined`: for diagnostics and
 * tests that ask which stages ran; routes read headers with getHeader().
 */
export function pendingDefault(res: Response, name: string): string | undefined {
  const state = peekResponseState(res);
  const lists = state?.defaults;
  if (state === undefined || lists === undefined || isSuppressed(state, name)) return undefined;
  for (let l = lists.length - 1; l >= 0; l--) {
    const list = lists[l] as readonly string[];
    const at = indexIn(list, name);
    if (at >= 0) return list[at + 1];
  }
  return undefined;
}

/** res.getHeader(name), the held list first. Defaults are not seen before the head. */
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

/**
 * res.removeHeader(name), from the held list and from Node's store: the
 * library's own clean-up (a 304 has no Content-Type), which leaves the
 * defaults in place.
 */
export function removeResponseHeader(res: Response, name: string): void {
  const state = held(res);
  if (state === undefined) {
    if (res.headersSent) return;
    const base = peekResponseState(res)?.base as BaseMethods | undefined;
    if (base === undefined) res.removeHeader(name);
    else base.removeHeader.call(res, name);
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
    if (!res.headersSent) res.append(name, value);
    return;
  }
  const previous = getResponseHeader(res, name);
  if (previous === undefined) setResponseHeader(res, name, value);
  else if (Array.isArray(previous)) setResponseHeader(res, name, [...(previous as string[]), value]);
  else setResponseHeader(res, name, [String(previous), value]);
}
