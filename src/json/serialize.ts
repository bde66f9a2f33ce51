import { randomBytes } from 'node:crypto';

/**
 * The JSON serializer behind every response body: native JSON.stringify, plus
 * what SPEC.md asks on top of it, in as few passes as possible.
 *
 * - `<` and `>` become `\u003C` and `\u003E` (SPEC.md "JSON output escaping"
 *   rule 2). They can only occur inside strings in JSON text, so replacing
 *   them in the whole text is exact, keys included.
 * - A bigint is written as the exact integer (SPEC.md "Large integers"); Node
 *   20 has no JSON.rawJSON, so the integer first travels as a marked string
 *   and the marks are removed afterwards.
 * - Dates are written by Date#toJSON: RFC 3339 in UTC with the `Z` suffix.
 */

// The marker carries 96 random bits drawn at start-up. It never leaves the
// process (every marked string is rewritten before the text is returned), so
// a client cannot make a string of its own look like a marked integer.
const MARKER = `~eac${randomBytes(12).toString('hex')}~`;
const MARKED_INTEGER = new RegExp(`"${MARKER}(-?[0-9]+)"`, 'g');

/** A value written as an exact JSON integer, whatever its size. */
export class JsonInteger {
  readonly digits: string;

  constructor(value: bigint | number | string) {
    const digits = typeof value === 'string' ? value : BigInt(value).toString();
    if (!/^-?(0|[1-9][0-9]*)$/.test(digits)) {
      throw new TypeError(`JsonInteger: ${JSON.stringify(digits)} is not an integer written in decimal digits`);
    }
    this.digits = digits;
  }

  toJSON(): string {
    return MARKER + this.digits;
  }

  toString(): string {
    return this.digits;
  }
}

function markBigInts(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? MARKER + value.toString() : value;
}

/**
 * Serializes a value to JSON text following SPEC.md's output rules.
 * Returns `undefined` for values JSON cannot represent (like JSON.stringify).
 */
export function stringifyJson(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    // A bigint makes JSON.stringify throw a TypeError; only then is the
    // (slower) replacer pass paid. Any other TypeError, such as a circular
    // structure, is thrown again by the second pass.
    if (!(error instanceof TypeError)) throw error;
    text = JSON.stringify(value, markBigInts);
  }
  if (text === undefined) return text;
  if (text.indexOf(MARKER) !== -1) text = text.replace(MARKED_INTEGER, '$1');
  if (text.indexOf('<') !== -1) text = text.replaceAll('<', '\\u003C');
  if (text.indexOf('>') !== -1) text = text.replaceAll('>', '\\u003E');
  return text;
}
