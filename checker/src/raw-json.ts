/**
 * A JSON reader that keeps every number as the text it was written in.
 * JSON.parse turns `7530173704672641025` into 7530173704672641024 (the
 * nearest double) and prints it back as `7530173704672641000`: a check of
 * the conventions' large integers must compare the digits the server wrote, so it
 * reads the body text itself.
 */

export type RawValue =
  | { readonly kind: 'object'; readonly entries: readonly (readonly [string, RawValue])[] }
  | { readonly kind: 'array'; readonly items: readonly RawValue[] }
  | { readonly kind: 'number'; readonly text: string }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'literal'; readonly value: boolean | null };

/** Nesting deeper than this is not read (a checker reads untrusted bodies). */
const MAX_DEPTH = 64;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// A string token, up to its closing quote; JSON.parse then decodes it (and refuses raw control characters).
const STRING = /"(?:[^"\\]|\\.)*"/y;
const SPACE = /[ \t\n\r]*/y;

class Reader {
  private at = 0;
  constructor(private readonly text: string) {}

  private space(): void {
    SPACE.lastIndex = this.at;
    SPACE.exec(this.text);
    this.at = SPACE.lastIndex;
  }

  private match(pattern: RegExp): string {
    pattern.lastIndex = this.at;
    const found = pattern.exec(this.text);
    if (!found) throw new SyntaxError(`unexpected text at ${this.at}`);
    this.at = pattern.lastIndex;
    return found[0];
  }

  private expect(char: string): void {
    if (this.text[this.at] !== char) throw new SyntaxError(`expected ${char} at ${this.at}`);
    this.at += 1;
  }

  value(depth: number): RawValue {
    if (depth > MAX_DEPTH) throw new SyntaxError('too deep');
    this.space();
    const char = this.text[this.at];
    if (char === '{') {
      this.at += 1;
      const entries: [string, RawValue][] = [];
      this.space();
      if (this.text[this.at] === '}') {
        this.at += 1;
        return { kind: 'object', entries };
      }
      for (;;) {
        this.space();
        const key = JSON.parse(this.match(STRING)) as string;
        this.space();
        this.expect(':');
        entries.push([key, this.value(depth + 1)]);
        this.space();
        if (this.text[this.at] === ',') {
          this.at += 1;
          continue;
        }
        this.expect('}');
        return { kind: 'object', entries };
      }
    }
    if (char === '[') {
      this.at += 1;
      const items: RawValue[] = [];
      this.space();
      if (this.text[this.at] === ']') {
        this.at += 1;
        return { kind: 'array', items };
      }
      for (;;) {
        items.push(this.value(depth + 1));
        this.space();
        if (this.text[this.at] === ',') {
          this.at += 1;
          continue;
        }
        this.expect(']');
        return { kind: 'array', items };
      }
    }
    if (char === '"') return { kind: 'string', value: JSON.parse(this.match(STRING)) as string };
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return { kind: 'literal', value };
      }
    }
    return { kind: 'number', text: this.match(NUMBER) };
  }

  end(): void {
    this.space();
    if (this.at !== this.text.length) throw new SyntaxError(`text after the value at ${this.at}`);
  }
}

/** The body read with its numbers as written, or undefined when it is not JSON. */
export function readRawJson(text: string): RawValue | undefined {
  const reader = new Reader(text);
  try {
    const value = reader.value(0);
    reader.end();
    return value;
  } catch {
    return undefined;
  }
}

/** A `<key>` number whose digits break the conventions' large-integer pair, described for evidence. */
export interface LargeIntegerFinding {
  readonly path: string;
  readonly seen: string;
}

/** The largest integer a double holds exactly: 2^53 - 1. */
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INTEGER = /^-?(?:0|[1-9]\d*)$/;
const STRING_SIBLING = /^(.+)_str$/;

/**
 * the conventions' "Large integers": an integer beyond 2^53 has a `<key>_str` sibling
 * (for `id`: `id_str`), and every `<key>_str` holds exactly the digits of
 * its `<key>`, as the body text writes them. Also reports whether any pair
 * or large integer was seen at all.
 */
export function largeIntegerFindings(value: RawValue): { findings: LargeIntegerFinding[]; seen: boolean } {
  const findings: LargeIntegerFinding[] = [];
  let seen = false;
  const walk = (node: RawValue, path: string): void => {
    if (node.kind === 'array') {
      for (const item of node.items) walk(item, `${path}[]`);
      return;
    }
    if (node.kind !== 'object') return;
    const byKey = new Map(node.entries);
    for (const [key, field] of node.entries) {
      const at = path === '' ? key : `${path}.${key}`;
      const sibling = STRING_SIBLING.exec(key)?.[1];
      const number = sibling === undefined ? undefined : byKey.get(sibling);
      if (sibling !== undefined && number?.kind === 'number') {
        seen = true;
        const digits = field.kind === 'string' ? field.value : undefined;
        if (!INTEGER.test(number.text) || digits !== number.text) {
          findings.push({
            path: `${path === '' ? '' : `${path}.`}${sibling}`,
            seen: `"${sibling}": ${number.text} beside "${key}": ${field.kind === 'string' ? JSON.stringify(field.value) : '(not a string)'}`,
          });
        }
      }
      if (field.kind === 'number' && INTEGER.test(field.text)) {
        const big = BigInt(field.text);
        if (big > SAFE || big < -SAFE) {
          seen = true;
          if (!byKey.has(`${key}_str`)) findings.push({ path: at, seen: `"${key}": ${field.text} without "${key}_str"` });
        }
      }
      walk(field, at);
    }
  };
  walk(value, '');
  return { findings, seen };
}
