import type { Response } from 'express';
import { warnOnce } from '../config/warnings.js';
import {
  type HeaderRule,
  type HeaderValue,
  ownMethod,
  peekResponseState,
  type ResponseState,
  responseState,
} from './response-state.js';

/**
 * How the library's headers reach the wire, beside the neighbours that wrap
 * the same response (morgan, express-session, compression and everything
 * else built on `on-headers`). Every header the library writes goes through
 * this module; nothing of Express's or Node's shared objects is touched
 * (docs/design.md principle 8, test/shared-objects.test.ts).
 *
 * - **Facts** of one answer (Content-Type, Content-Length, ETag, Vary, CORS,
 *   RateLimit) and **fixed defaults** (the security headers, nosniff) go to
 *   Node's store with `setHeader()` while the response is open: a route
 *   reads, replaces and removes them as any header. nosniff yields to a
 *   value someone set before it; the security headers replace it (order
 *   means precedence, src/security/header-precedence.ts).
 * - **Head defaults** (Cache-Control `no-store, max-age=0`) and **head
 *   removals** (X-Powered-By) wait for the head: serve-static and
 *   `res.sendFile()` set their own Cache-Control only when none is set.
 * - **Rules** hold whoever writes the header: every `Set-Cookie` gets
 *   `Secure` and `HttpOnly`, a `Content-Encoding` gives the body's strong
 *   ETag that coding.
 *
 * The head is reached, as on-headers does it, through the response's own
 * `writeHead` property: the first stage that needs it puts a hook there, per
 * response. A `writeHead(status, headers)` call's headers are moved into
 * the store first (as Node itself does once a header is stored), so the
 * rules see them. When something had wrapped `writeHead` before the hook,
 * its own hook runs after ours and may still write headers (compression's
 * Content-Encoding, express-session's cookie): the rules then also watch
 * that response's `setHeader`, from the head on.
 */

/** res.setHeader(name, value) while the response is open. */
export function setResponseHeader(res: Response, name: string, value: HeaderValue): void {
  if (!res.headersSent) res.setHeader(name, value);
}

/** Sets fixed headers, a flat [name, value, …] list computed once by the caller. */
export function setResponseHeaders(res: Response, fixed: readonly string[]): void {
  if (res.headersSent) return;
  for (let i = 0; i < fixed.length; i += 2) res.setHeader(fixed[i] as string, fixed[i + 1] as string);
}

/** res.getHeader(name). */
export function getResponseHeader(res: Response, name: string): HeaderValue | undefined {
  return res.getHeader(name) as HeaderValue | undefined;
}

/** res.removeHeader(name) while the response is open. */
export function removeResponseHeader(res: Response, name: string): void {
  if (!res.headersSent) res.removeHeader(name);
}

/**
 * Removes each header of a fixed list of names computed once by the caller,
 * while the response is open; asked first in lower case, which Node reads
 * without a lower-cased copy (most responses have none of them).
 */
export function removeResponseHeaders(res: Response, names: readonly string[]): void {
  if (res.headersSent) return;
  const lower = lowerNamesOf(names, 1);
  for (let i = 0; i < names.length; i++) if (res.hasHeader(lower[i] as string)) res.removeHeader(names[i] as string);
}

/**
 * The value added after the ones the header has (a field line each), or the
 * header set when it has none: `res.appendHeader()`, as Express's
 * `res.append()` does.
 */
export function appendResponseHeader(res: Response, name: string, value: string): void {
  if (res.headersSent) return;
  // Express's res.append() for a response-like object without Node's appendHeader().
  if (typeof res.appendHeader === 'function') res.appendHeader(name, value);
  else res.append(name, value);
}

// The lower-cased names of each fixed list, made once per list.
const LOWER_NAMES = new WeakMap<readonly string[], readonly string[]>();

/** The names of a fixed list in lower case: every entry of a list of names (`step` 1), or of a [name, value, …] list (2). */
function lowerNamesOf(fixed: readonly string[], step: 1 | 2 = 2): readonly string[] {
  let names = LOWER_NAMES.get(fixed);
  if (names === undefined) {
    names = fixed.map((entry, i) => (i % step === 0 ? entry.toLowerCase() : ''));
    LOWER_NAMES.set(fixed, names);
  }
  return names;
}

/** Sets each header of a fixed [name, value, …] list that the response does not have yet. */
function setMissing(res: Response, fixed: readonly string[]): void {
  const lower = lowerNamesOf(fixed);
  for (let i = 0; i < fixed.length; i += 2) {
    if (!res.hasHeader(lower[i] as string)) res.setHeader(fixed[i] as string, fixed[i + 1] as string);
  }
}

/**
 * Fixed defaults, a flat [name, value, …] list computed once by the caller,
 * set now for the names the response does not have: a route replaces or
 * removes them as any header; a value a middleware set before stays.
 */
export function setDefaultHeaders(res: Response, fixed: readonly string[]): void {
  if (!res.headersSent) setMissing(res, fixed);
}

/**
 * Defaults written when the head is, a flat [name, value, …] list computed
 * once by the caller: each unless the app, a neighbour or a route set that
 * header by then. A later list's value wins over an earlier one's.
 */
export function setHeadDefaults(res: Response, fixed: readonly string[]): void {
  if (res.headersSent) return;
  const state = hooked(res);
  if (!state.defaults?.includes(fixed)) state.defaults = withEntry(state.defaults, fixed);
}

/** Header names removed when the head is written, whoever set them (a fixed list computed once by the caller). */
export function removeAtHead(res: Response, names: readonly string[]): void {
  if (res.headersSent) return;
  const state = hooked(res);
  if (!state.removals?.includes(names)) state.removals = withEntry(state.removals, names);
}

/**
 * The head default registered for `name`, or `undefined`: for diagnostics
 * and tests that ask which stages ran; routes read headers with getHeader().
 */
export function pendingDefault(res: Response, name: string): string | undefined {
  const lists = peekResponseState(res)?.defaults;
  if (lists === undefined) return undefined;
  const wanted = name.toLowerCase();
  for (let l = lists.length - 1; l >= 0; l--) {
    const list = lists[l] as readonly string[];
    const lower = lowerNamesOf(list);
    for (let i = 0; i < list.length; i += 2) if (lower[i] === wanted) return list[i + 1];
  }
  return undefined;
}

// The lists of rules and of fixed lists, made once per combination (each
// entry is made once per middleware, so there are few): a response is given
// a shared frozen list, not a new array.
const ONE = new WeakMap<object, readonly object[]>();
const ONE_MORE = new WeakMap<readonly object[], WeakMap<object, readonly object[]>>();

function withEntry<Entry extends object>(list: readonly Entry[] | undefined, entry: Entry): readonly Entry[] {
  if (list === undefined) {
    let one = ONE.get(entry);
    if (one === undefined) {
      one = Object.freeze([entry]);
      ONE.set(entry, one);
    }
    return one as readonly Entry[];
  }
  let byEntry = ONE_MORE.get(list);
  if (byEntry === undefined) {
    byEntry = new WeakMap();
    ONE_MORE.set(list, byEntry);
  }
  let more = byEntry.get(entry);
  if (more === undefined) {
    more = Object.freeze([...list, entry]);
    byEntry.set(entry, more);
  }
  return more as readonly Entry[];
}

/**
 * Runs `rule` on its header when the head is written, whoever wrote it.
 * Rules are shared objects made once by their middleware.
 */
export function addHeaderRule(res: Response, rule: HeaderRule): void {
  if (res.headersSent) return;
  const state = hooked(res);
  if (!state.rules?.includes(rule)) state.rules = withEntry(state.rules, rule);
}

/** The response's state, with the head hook on. */
function hooked(res: Response): ResponseState {
  const state = responseState(res);
  if (state.writeHead === undefined) {
    state.writeHead = res.writeHead as ResponseState['writeHead'];
    // An own writeHead is a neighbour's per-response wrapper (on-headers): Node's is on the prototype.
    state.wrappedBefore = Object.hasOwn(res, 'writeHead');
    ownMethod(res, 'writeHead', writeHeadWithConventions);
  }
  return state;
}

/** The value of one header after the rules on it. */
function ruled(res: Response, rules: readonly HeaderRule[], name: string, value: HeaderValue): HeaderValue {
  let result = value;
  // An index, not for…of: no iterator per header written.
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as HeaderRule;
    if (name.length === rule.name.length && name.toLowerCase() === rule.name) result = rule.apply(res, result);
  }
  return result;
}

/**
 * Stores the headers given to `writeHead(status, headers)` as Node does once
 * its store holds any (an object's names replace, a raw list's lines are
 * appended after its names were removed). False for a form Node refuses: it
 * is then handed to Node as it was, to be refused there.
 */
function storeGiven(res: Response, given: object): boolean {
  if (Array.isArray(given)) {
    if (given.length % 2 !== 0 || Array.isArray(given[0])) return false;
    for (let i = 0; i < given.length; i += 2) if (given[i]) res.removeHeader(String(given[i]));
    for (let i = 0; i < given.length; i += 2) if (given[i]) res.appendHeader(String(given[i]), given[i + 1]);
    return true;
  }
  for (const name of Object.keys(given)) {
    if (name) res.setHeader(name, (given as Record<string, HeaderValue>)[name] as HeaderValue);
  }
  return true;
}

/** The head's work: removals, the defaults nobody set, then the rules on what is stored. */
function applyAtHead(res: Response, state: ResponseState): void {
  const removals = state.removals;
  if (removals !== undefined)
    for (let l = 0; l < removals.length; l++) removeResponseHeaders(res, removals[l] as readonly string[]);
  const lists = state.defaults;
  if (lists !== undefined) for (let l = lists.length - 1; l >= 0; l--) setMissing(res, lists[l] as readonly string[]);
  const rules = state.rules;
  if (rules === undefined) return;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as HeaderRule;
    const value = res.getHeader(rule.name) as HeaderValue | undefined;
    if (value === undefined) continue;
    const next = rule.apply(res, value);
    if (next !== value) res.setHeader(rule.field, next);
  }
}

/**
 * Says once, outside production, that a response's head went out without
 * passing the hook (a wrapper replaced `res.writeHead` and never called the
 * one it found): its head defaults and rules were not applied.
 */
export function checkHeadPassed(res: Response): void {
  const state = peekResponseState(res);
  if (state?.writeHead === undefined || state.headPassed || !res.headersSent) return;
  warnOnce(
    'EAC_HEAD_WENT_AROUND',
    'EAC_HEAD_WENT_AROUND',
    "A response's head was written around express-api-conventions: a middleware replaced res.writeHead() without calling the one it found, and the preset's head defaults and cookie rules were not applied. Mount that middleware after the preset, or make it call the writeHead it replaced.",
  );
}

// The hook, one function for every response: `this` is the response, its
// state says what to do and which writeHead comes next. Three named
// parameters, not a rest array: it runs once per response.
function writeHeadWithConventions(this: Response, statusCode: unknown, reason?: unknown, headers?: unknown): Response {
  const state = peekResponseState(this) as ResponseState;
  const next = state.writeHead as (...a: unknown[]) => Response;
  // biome-ignore lint/complexity/noArguments: the count is passed on as it came, without a rest array per response.
  let count = arguments.length;
  if (!this.headersSent) {
    state.headPassed = true;
    const at = typeof reason === 'string' ? 2 : 1;
    const given = at === 2 ? headers : reason;
    // Once stored, the call goes on with the status (and reason) only, as on-headers does.
    if (typeof given === 'object' && given !== null && storeGiven(this, given)) count = at;
    applyAtHead(this, state);
    if (state.wrappedBefore && state.rules !== undefined && state.setHeader === undefined) {
      state.setHeader = this.setHeader as ResponseState['setHeader'];
      ownMethod(this, 'setHeader', setHeaderUnderRules);
    }
  }
  if (count <= 1) return next.call(this, statusCode);
  if (count === 2) return next.call(this, statusCode, reason);
  return next.call(this, statusCode, reason, headers);
}

// What a hook below ours sets (compression's Content-Encoding, a session's
// cookie) passes the rules too.
function setHeaderUnderRules(this: Response, name: string, value: HeaderValue): Response {
  const state = peekResponseState(this) as ResponseState;
  const rules = state.rules;
  const stored = rules === undefined || typeof name !== 'string' ? value : ruled(this, rules, name, value);
  return (state.setHeader as (n: string, v: HeaderValue) => Response).call(this, name, stored);
}
