import { randomBytes } from 'node:crypto';

/**
 * The JSON serializer behind every response body: native JSON.stringify, plus
 * what the conventions ask on top of it, in as few passes as possible.
 *
 * - `<` and `>` become `\u003C` and `\u003E` (the conventions' "JSON output escaping"
 *   rule 2). They can only occur inside strings in JSON text, so replacing
 *   them in the whole text is exact, keys included.
 * - A bigint is written as the exact integer (the conventions' "Large integers"); Node
 *   20 has no JSON.rawJSON, so the integer first travels as a marked string
 *   and the marks are removed afterwards.
 * - Dates are written by Date#toJSON: RFC 3339 in UTC with the `Z` suffix.
 */

// The marker carries 96 random bits drawn at start-up. It never leaves the
// process (every marked string is rewritten before the text is returned), so
// a client cannot make a string of its own look like a marked integer.
const MARKER = `~eac${randomBytes(12).toString('hex')}~`;
// A marked integer in JSON text: the opening quote, the marker, the digits,
// the closing quote (marker and digits need no JSON escaping).
const QUOTED_MARKER = `"${MARKER}`;
const MARKED_INTEGER = new RegExp(`"${MARKER}(-?[0-9]+)"`, 'g');
// Up to this many marked integers, an indexOf walk rewrites them; beyond, one
// global regex replace does. Measured on a 400-byte object with one id, the
// walk adds ~150 ns to JSON.stringify and the regex ~370 ns; on a 100-item
// list the regex is ~1.3x cheaper than the walk (bench/micro/serializer.mjs).
const FEW_MARKS = 8;

// Bumped by every JsonInteger#toJSON call: stringifyJson() compares it before
// and after JSON.stringify to learn, without scanning the text, whether any
// marked integer was written (most bodies hold none). A counter, not a flag,
// stays right when a toJSON method calls stringifyJson() again from inside
// JSON.stringify.
let marksWritten = 0;

/** A value written as an exact JSON integer, whatever its size. */
export class JsonInteger {
  readonly digits: string;
  // What toJSON returns, built once, not on every serialization: the number
  // itself when it is a safe integer (JSON.stringify writes those exactly,
  // and no rewriting pass is needed), else the marked string.
  readonly #json: number | string;

  constructor(value: bigint | number | string) {
    const digits = typeof value === 'string' ? value : BigInt(value).toString();
    if (!/^-?(0|[1-9][0-9]*)$/.test(digits)) {
      throw new TypeError(`JsonInteger: ${JSON.stringify(digits)} is not an integer written in decimal digits`);
    }
    this.digits = digits;
    const number = Number(digits);
    // String(number) === digits also keeps "-0" marked: JSON writes -0 as 0.
    this.#json = Number.isSafeInteger(number) && String(number) === digits ? number : MARKER + digits;
  }

  toJSON(): number | string {
    if (typeof this.#json === 'string') marksWritten = (marksWritten + 1) | 0;
    return this.#json;
  }

  toString(): string {
    return this.digits;
  }
}

function markBigInts(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? MARKER + value.toString() : value;
}

/** Rewrites each `"<marker><digits>"` as `<digits>`, from one to the next. */
function unmarkFewIntegers(text: string): string {
  let at = text.indexOf(QUOTED_MARKER);
  let out = '';
  let from = 0;
  while (at !== -1) {
    const digits = at + QUOTED_MARKER.length;
    const close = text.indexOf('"', digits);
    out += text.slice(from, at) + text.slice(digits, close);
    from = close + 1;
    at = text.indexOf(QUOTED_MARKER, from);
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * the conventions' "JSON output escaping" rule 2: `<` and `>` become `\u003C` and
 * `\u003E`. They can only occur inside strings in JSON text, so replacing
 * them in the whole text is exact, keys included. Text without them (the
 * common case) costs two indexOf scans and is returned as it is; otherwise
 * one walk from sign to sign copies the runs between them, which measured
 * about 1.5x cheaper than two replaceAll calls (bench/micro/serializer.mjs).
 */
function escapeAngleBrackets(text: string): string {
  let lt = text.indexOf('<');
  let gt = text.indexOf('>');
  if (lt === -1 && gt === -1) return text;
  let out = '';
  let from = 0;
  while (lt !== -1 || gt !== -1) {
    if (gt === -1 || (lt !== -1 && lt < gt)) {
      out += `${text.slice(from, lt)}\\u003C`;
      from = lt + 1;
      lt = text.indexOf('<', from);
    } else {
      out += `${text.slice(from, gt)}\\u003E`;
      from = gt + 1;
      gt = text.indexOf('>', from);
    }
  }
  return out + text.slice(from);
}

/**
 * Finds bigints among an object's own values before JSON.stringify would
 * throw on them: returns `value` itself when there is none, else a copy with
 * each top-level bigint replaced by its marked string. On Node 20 the thrown
 * TypeError alone costs about one whole JSON.stringify of a 400-byte object
 * and the replacer pass about two (bench/micro/serializer.mjs); a for-in
 * walk over the top-level values costs a few per cent of one. Only the top
 * level: a walk into nested objects and arrays measured 20-25 % of
 * JSON.stringify on every body, bigints or not. The copy holds what
 * JSON.stringify would read: own enumerable string keys in their order. An object with a toJSON method (Date, JsonInteger, a
 * class's own) or an array is kept as it is. Each marked bigint counts in
 * `marksWritten`, as a JsonInteger's toJSON does, so the few are unmarked
 * by the indexOf walk, not the regex.
 */
function markTopLevelBigInts(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  const record = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key in record) {
    const item = record[key];
    // for-in also walks inherited keys, which JSON.stringify does not write.
    if (typeof item === 'bigint' && Object.hasOwn(record, key)) {
      // Spread copies the own enumerable keys in their order, as
      // JSON.stringify reads them (and symbol keys, which it skips).
      copy ??= { ...record };
      copy[key] = MARKER + item.toString();
      marksWritten = (marksWritten + 1) | 0;
    }
  }
  return copy ?? value;
}

// How deep markNestedBigInts() copies. A bigint deeper than this, or a
// structure that is circular within it, is left to the replacer pass
// (which writes the former and throws JSON.stringify's TypeError for the
// latter).
const MARK_DEPTH = 32;

/**
 * After JSON.stringify threw: a copy of `value` with every bigint replaced by
 * its marked string, copying only the objects and arrays on the way to one
 * (the rest is shared), so that the copy goes through JSON.stringify's fast
 * path instead of a replacer (measured ~2x cheaper on a 100-item list).
 * Objects with a toJSON method are kept as they are. `ancestors` is the path
 * from the top: an object met again on it is a cycle, and `undefined` is
 * returned for the whole value, as for too deep a structure.
 */
function markNestedBigInts(value: unknown, ancestors: object[]): unknown {
  if (typeof value === 'bigint') {
    marksWritten = (marksWritten + 1) | 0;
    return MARKER + value.toString();
  }
  if (typeof value !== 'object' || value === null) return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  if (ancestors.length === MARK_DEPTH || ancestors.includes(value)) throw CANNOT_MARK;
  ancestors.push(value);
  let copy: unknown;
  if (Array.isArray(value)) {
    let items: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const marked = markNestedBigInts(item, ancestors);
      if (marked !== item && items === undefined) items = value.slice(0, i);
      if (items !== undefined) items.push(marked);
    }
    copy = items ?? value;
  } else {
    const record = value as Record<string, unknown>;
    let fields: Record<string, unknown> | undefined;
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      const item = record[key];
      const marked = markNestedBigInts(item, ancestors);
      if (marked !== item) {
        fields ??= { ...record };
        fields[key] = marked;
      }
    }
    copy = fields ?? value;
  }
  ancestors.pop();
  return copy;
}

// Thrown by markNestedBigInts() to give up; caught in stringifyJson().
const CANNOT_MARK = Symbol('cannot mark');

/**
 * The second pass after a TypeError: the marked copy through the fast path
 * when it can be built and serialised, else the replacer pass, which also
 * throws again what is not a bigint's TypeError (a circular structure).
 */
function stringifyMarkedCopy(value: unknown): string {
  const marksBefore = marksWritten;
  try {
    return JSON.stringify(markNestedBigInts(value, []));
  } catch (error) {
    if (error !== CANNOT_MARK && !(error instanceof TypeError)) throw error;
    marksWritten = marksBefore;
    return JSON.stringify(value, markBigInts);
  }
}

/**
 * Serializes a value to JSON text following the conventions' output rules.
 * Returns `undefined` for values JSON cannot represent (like JSON.stringify).
 */
export function stringifyJson(value: unknown): string {
  const marksBefore = marksWritten;
  let marked = false;
  let text: string;
  const ahead = markTopLevelBigInts(value);
  try {
    text = JSON.stringify(ahead);
  } catch (error) {
    // A bigint below the top level makes JSON.stringify throw a
    // TypeError; only then is the (slower) replacer pass paid. Any other
    // TypeError, such as a circular structure, is thrown again by the second
    // pass. idPair() ids take the fast path: JsonInteger has its own toJSON.
    if (!(error instanceof TypeError)) throw error;
    text = stringifyMarkedCopy(value);
    marked = true;
  }
  if (text === undefined) return text;
  const marks = (marksWritten - marksBefore) | 0;
  if (marked || marks > FEW_MARKS) text = text.replace(MARKED_INTEGER, '$1');
  else if (marks !== 0) text = unmarkFewIntegers(text);
  return escapeAngleBrackets(text);
}
