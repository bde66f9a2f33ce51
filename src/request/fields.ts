import type { RequestHandler, Response } from 'express';
import { invalidOption, readOptions } from '../config/options.js';
import { type ApiError, apiError, type ErrorItem } from '../errors/api-error.js';
import { ERROR_CATALOGUE } from '../errors/catalogue.js';
import { sendJson } from '../json/json-responses.js';
import { invalidQueryParameter, parsedQuery } from './query.js';

/**
 * A parsed field selection: each selected name, mapped to the selection
 * inside it, or to `null` for the whole value. Names are in the order the
 * route declared them.
 */
export type FieldSelection = ReadonlyMap<string, FieldSelection | null>;

/** Options of selectFields(). */
export interface SelectFieldsOptions {
  /**
   * The fields the route returns, in the selection syntax, nested fields in
   * parentheses: `'id,id_str,name,address(street,city)'`, or an array of such
   * strings. Required; no default.
   */
  fields: string | readonly string[];
  /**
   * Named, predefined sets of fields (the conventions' "Field selection": "A named
   * predefined set of fields may be offered"), each a selection over
   * `fields`: `{ summary: 'id,id_str,name' }`. A client asks for one by its
   * name in `fields`. Default: none.
   */
  sets?: Readonly<Record<string, string | readonly string[]>>;
  /**
   * Name of the set returned when the client sends no `fields` ("or, if that
   * is too much, the most frequently used set"). Default: none, all fields
   * are returned.
   */
  defaultSet?: string;
}

declare module 'express-serve-static-core' {
  interface Request {
    /**
     * The fields to send, set by selectFields(); `undefined` sends every
     * field. sendItem() and sendList() apply it.
     */
    fieldSelection?: FieldSelection;
  }
}

/** The conventions' "Common query parameters": `fields`, "Fields to return". */
export const FIELDS_PARAMETER = 'fields' as const;
/** In `fields`, every declared field: the way back to all fields when the route has a default set. */
export const ALL_FIELDS = '*' as const;
/**
 * the conventions' "Large integers": the pair is `id` and `id_str`. Selecting a field
 * also selects its declared `<name>_str` sibling, so that a client never gets
 * a 64-bit integer without its exact string.
 */
export const STRING_SIBLING_SUFFIX = '_str' as const;

/** Names that would reach object internals; refused as declared names, unknown to clients. */
const FORBIDDEN_NAMES = new Set(['__proto__', 'constructor', 'prototype']);
const NAME = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;
const CACHE_SIZE = 256;
const MAX_REPORTED_UNKNOWN = 20;
const FACTORY = 'selectFields';

type Declared = Map<string, Declared | null>;
type Selection = Map<string, Selection | null>;

const isNameChar = (code: number): boolean =>
  (code >= 97 && code <= 122) || // a-z
  (code >= 65 && code <= 90) || // A-Z
  (code >= 48 && code <= 57) || // 0-9
  code === 95 || // _
  code === 36 || // $
  code === 45; // -

class SyntaxProblem extends Error {}

/**
 * The selection syntax, one recursive-descent pass:
 *   list := item (',' item)*
 *   item := name ['(' list ')']  |  '*'  |  set name (top level only)
 * Nested names are checked against the declared tree while parsing, so the
 * depth of recursion is bounded by the route's own nesting, whatever the input.
 */
class SelectionParser {
  private pos = 0;
  readonly unknown: string[] = [];

  constructor(
    private readonly text: string,
    private readonly root: Declared,
    private readonly sets: ReadonlyMap<string, Selection> | undefined,
    private readonly collectUnknown: boolean,
  ) {}

  parse(): Selection {
    const selection = this.list(this.root, '', true);
    if (this.pos !== this.text.length) this.fail(`unexpected "${this.text[this.pos]}"`);
    return selection;
  }

  private fail(what: string): never {
    throw new SyntaxProblem(`${what} at character ${this.pos + 1}`);
  }

  private space(): void {
    while (this.text.charCodeAt(this.pos) === 32) this.pos++;
  }

  private list(declared: Declared, prefix: string, top: boolean): Selection {
    const selection: Selection = new Map();
    for (;;) {
      this.space();
      const start = this.pos;
      if (top && this.text[this.pos] === ALL_FIELDS) this.pos++;
      else while (this.pos < this.text.length && isNameChar(this.text.charCodeAt(this.pos))) this.pos++;
      const name = this.text.slice(start, this.pos);
      if (name === '')
        this.fail(this.pos === this.text.length ? 'a field name is missing' : `unexpected "${this.text[this.pos]}"`);
      this.space();
      const opens = this.text[this.pos] === '(';
      if (opens) this.pos++;
      const inner = declared.get(name);
      if (declared.has(name) && !FORBIDDEN_NAMES.has(name)) {
        if (opens && inner === null) this.fail(`"${prefix}${name}" has no fields inside it to select`);
        merge(selection, name, opens && inner ? this.list(inner, `${prefix}${name}.`, false) : null);
      } else if (top && name === ALL_FIELDS && !opens) {
        for (const field of declared.keys()) merge(selection, field, null);
      } else if (top && !opens && this.sets?.has(name)) {
        for (const [field, sub] of this.sets.get(name) as Selection) merge(selection, field, sub);
      } else {
        if (!this.collectUnknown) this.fail(`"${prefix}${name}" is not a declared field`);
        this.unknown.push(`${prefix}${name}`);
        if (opens) this.skipGroup();
      }
      if (opens) {
        this.space();
        if (this.text[this.pos] !== ')') this.fail('a ")" is missing');
        this.pos++;
      }
      this.space();
      if (this.text[this.pos] !== ',') return selection;
      this.pos++;
    }
  }

  /** Skips the inside of an unknown field's parentheses, checking only that they balance. */
  private skipGroup(): void {
    let depth = 1;
    while (this.pos < this.text.length) {
      const c = this.text[this.pos];
      if (c === '(') depth++;
      else if (c === ')' && --depth === 0) return;
      this.pos++;
    }
    this.fail('a ")" is missing');
  }
}

// A deep copy: merging into a selection must never change a named set's own.
const copy = (selection: Selection | null): Selection | null =>
  selection === null ? null : new Map([...selection].map(([name, inner]) => [name, copy(inner)]));

function merge(target: Selection, name: string, sub: Selection | null): void {
  if (!target.has(name)) {
    target.set(name, copy(sub));
    return;
  }
  const existing = target.get(name) as Selection | null;
  if (existing === null) return;
  if (sub === null) {
    target.set(name, null);
    return;
  }
  for (const [field, inner] of sub) merge(existing, field, inner);
}

/** The selection in the declared order, with each selected field's `_str` sibling. */
function ordered(selection: Selection, declared: Declared): Selection {
  const result: Selection = new Map();
  for (const [name, inner] of declared) {
    const wanted =
      selection.has(name) ||
      (name.endsWith(STRING_SIBLING_SUFFIX) && selection.has(name.slice(0, -STRING_SIBLING_SUFFIX.length)));
    if (!wanted) continue;
    const sub = selection.get(name) ?? null;
    result.set(name, sub !== null && inner ? ordered(sub, inner) : null);
  }
  return result;
}

const joinExpression = (value: string | readonly string[]): string => (typeof value === 'string' ? value : value.join(','));

/** Parses a declaration (`'id,name,address(street,city)'`) into the declared tree. */
function declare(option: string, text: string): Declared {
  const declared: Declared = new Map();
  let pos = 0;
  const stack: Declared[] = [declared];
  let last: string | undefined;
  const fail = (why: string): never =>
    invalidOption(
      FACTORY,
      option,
      text,
      `a list of field names in the selection syntax, such as 'id,name,address(city)' (${why})`,
    );
  for (const token of text.split(/([(),])/)) {
    pos += token.length;
    const name = token.trim();
    const current = stack[stack.length - 1] as Declared;
    if (token === '(') {
      if (last === undefined) fail(`a "(" follows no field at character ${pos}`);
      const inner: Declared = new Map();
      current.set(last as string, inner);
      stack.push(inner);
      last = undefined;
    } else if (token === ')') {
      if (stack.length === 1) fail(`an unmatched ")" at character ${pos}`);
      stack.pop();
      last = undefined;
    } else if (token !== ',' && name !== '') {
      if (!NAME.test(name)) fail(`${JSON.stringify(name)} is not a field name`);
      if (FORBIDDEN_NAMES.has(name)) fail(`${JSON.stringify(name)} would reach object internals`);
      if (current.has(name)) fail(`${JSON.stringify(name)} is declared twice`);
      current.set(name, null);
      last = name;
    }
  }
  if (stack.length !== 1) fail('a ")" is missing');
  if (declared.size === 0) fail('no field is declared');
  return declared;
}

const listNames = (declared: Declared): string => [...declared.keys()].join(', ');

/** The declared fields at the level of a dotted path such as `address.`. */
function levelOf(root: Declared, dotted: string): Declared {
  let level = root;
  const parts = dotted.split('.');
  parts.pop();
  for (const part of parts) level = (level.get(part) as Declared | undefined) ?? level;
  return level;
}

// ---------------------------------------------------------------------------
// Options

const OPTION_NAMES = ['fields', 'sets', 'defaultSet'] as const;

/** selectFields()'s options, checked: the declared fields, the named sets and the default selection. */
interface SelectFieldsConfiguration {
  readonly root: Declared;
  /** Each named set, already a selection in the declared order. */
  readonly sets: ReadonlyMap<string, Selection>;
  /** The selection when the client sends no `fields`; undefined sends every field. */
  readonly defaultSelection: Selection | undefined;
}

/** A selection expression option: a string, or an array of strings joined with commas. */
function checkExpression(option: string, value: unknown): string {
  if (typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'))) {
    return joinExpression(value as string | string[]);
  }
  return invalidOption(FACTORY, option, value, 'a string or an array of strings in the selection syntax');
}

/** `sets`: each named set parsed against the declared fields. */
function readSets(given: unknown, root: Declared): Map<string, Selection> {
  const sets = new Map<string, Selection>();
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    invalidOption(FACTORY, 'sets', given, "an object of named sets, such as { summary: 'id,name' }");
  }
  for (const [name, expression] of Object.entries(given as object)) {
    const option = `sets.${name}`;
    if (!NAME.test(name) || FORBIDDEN_NAMES.has(name) || name === ALL_FIELDS) {
      invalidOption(FACTORY, 'sets', name, 'an object whose keys are set names made of letters, digits, "_" and "-"');
    }
    if (root.has(name)) invalidOption(FACTORY, option, name, 'a name that is not also a field name');
    const text = checkExpression(option, expression);
    try {
      sets.set(name, ordered(new SelectionParser(text, root, undefined, false).parse(), root));
    } catch (error) {
      if (!(error instanceof SyntaxProblem)) throw error;
      invalidOption(FACTORY, option, text, `a selection of the declared fields (${error.message})`);
    }
  }
  return sets;
}

/** Turns selectFields()'s options into its configuration, or throws a ConfigurationError at start-up. */
function readSelectFieldsOptions(options: unknown): SelectFieldsConfiguration {
  const given = readOptions<SelectFieldsOptions>(FACTORY, options, OPTION_NAMES);
  if (given.fields === undefined) {
    invalidOption(FACTORY, 'fields', undefined, "the route's fields, such as 'id,name,address(city)'");
  }
  const root = declare('fields', checkExpression('fields', given.fields));
  const sets = readSets(given.sets ?? {}, root);
  let defaultSelection: Selection | undefined;
  if (given.defaultSet !== undefined) {
    defaultSelection = sets.get(given.defaultSet);
    if (!defaultSelection) {
      invalidOption(
        FACTORY,
        'defaultSet',
        given.defaultSet,
        `the name of one of the sets (${[...sets.keys()].join(', ') || 'none declared'})`,
      );
    }
  }
  return { root, sets, defaultSelection };
}

// ---------------------------------------------------------------------------
// At request time

/** 400 `unknownField`: one item per unknown name, naming the valid fields at its level. */
function unknownFields(unknown: readonly string[], config: SelectFieldsConfiguration): ApiError {
  const { root, sets } = config;
  const validSummary = (level: Declared, top: boolean): string => {
    const named = top && sets.size > 0 ? `; the named sets are: ${[...sets.keys()].join(', ')}` : '';
    return `${listNames(level)}${named}`;
  };
  // Bounded: a long query string of made-up names gets a bounded answer.
  const items: ErrorItem[] = unknown.slice(0, MAX_REPORTED_UNKNOWN).map((name) => {
    const dot = name.lastIndexOf('.');
    const where = dot === -1 ? 'the fields are' : `the fields inside "${name.slice(0, dot)}" are`;
    return {
      message: `The fields parameter names an unknown field "${name}"; ${where}: ${validSummary(levelOf(root, name), dot === -1)}.`,
      code: ERROR_CATALOGUE.unknownField.code,
      field: FIELDS_PARAMETER,
    };
  });
  return apiError('unknownField', { items, detail: { unknown } });
}

/** Parses a `fields` value into its selection, in the declared order; the last selections parsed are kept. */
function selectionCompiler(config: SelectFieldsConfiguration): (text: string) => Selection {
  const { root, sets } = config;
  const cache = new Map<string, Selection>();
  return function compile(text: string): Selection {
    const cached = cache.get(text);
    if (cached) return cached;
    const parser = new SelectionParser(text, root, sets, true);
    let selection: Selection;
    try {
      selection = parser.parse();
    } catch (error) {
      if (!(error instanceof SyntaxProblem)) throw error;
      throw invalidQueryParameter(
        FIELDS_PARAMETER,
        `The query parameter "${FIELDS_PARAMETER}" is not valid: ${error.message}. Write field names separated by commas, nested fields in parentheses, such as id,name,address(city).`,
      );
    }
    if (parser.unknown.length > 0) throw unknownFields(parser.unknown, config);
    const result = ordered(selection, root);
    if (cache.size >= CACHE_SIZE) cache.clear();
    cache.set(text, result);
    return result;
  };
}

/**
 * Field selection for one route (the conventions' "Field selection"): the route
 * declares its fields, named sets and default set; the client's `fields`
 * query parameter is parsed once and kept in `req.fieldSelection`, which
 * sendItem() and sendList() apply to the object or to every item of a list.
 *
 * Unknown names are refused with 400 (code 40004), one error per name, each
 * naming the valid fields; a malformed parameter with 400 (code 40003).
 */
export function selectFields(options: Readonly<SelectFieldsOptions>): RequestHandler {
  const config = readSelectFieldsOptions(options);
  const compile = selectionCompiler(config);

  return function selectFieldsMiddleware(req, _res, next) {
    const raw = parsedQuery(req)[FIELDS_PARAMETER];
    if (raw === undefined) {
      req.fieldSelection = config.defaultSelection;
    } else if (typeof raw !== 'string') {
      throw invalidQueryParameter(
        FIELDS_PARAMETER,
        `The query parameter "${FIELDS_PARAMETER}" must be given once; separate the field names with commas.`,
      );
    } else {
      req.fieldSelection = compile(raw);
    }
    next();
  };
}

/**
 * Applies a selection to an object, or to every object of an array. Only
 * own properties are read, and only declared names are written, so neither
 * the prototype chain nor `__proto__` is ever reached. A value with a
 * `toJSON()` (a Date, a model instance) is selected from what it serializes to.
 */
export function applySelection(value: unknown, selection: FieldSelection): unknown {
  if (Array.isArray(value)) return value.map((item) => applySelection(item, selection));
  if (typeof value !== 'object' || value === null) return value;
  let source = value as Record<string, unknown>;
  if (typeof source.toJSON === 'function') {
    const serialized: unknown = (source.toJSON as () => unknown)();
    if (typeof serialized !== 'object' || serialized === null) return serialized;
    if (Array.isArray(serialized)) return serialized.map((item) => applySelection(item, selection));
    source = serialized as Record<string, unknown>;
  }
  const result: Record<string, unknown> = {};
  for (const [name, inner] of selection) {
    if (!Object.hasOwn(source, name)) continue;
    const field = source[name];
    result[name] = inner === null ? field : applySelection(field, inner);
  }
  return result;
}

/**
 * Sends one resource through sendJson() (escaping, exact bigints), with the
 * route's field selection applied.
 */
export function sendItem(res: Response, item: object): Response {
  const selection = res.req.fieldSelection;
  return sendJson(res, selection ? applySelection(item, selection) : item);
}
