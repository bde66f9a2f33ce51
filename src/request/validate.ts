import type { Ajv, Options as AjvOptions, AnySchema, ErrorObject, ValidateFunction } from 'ajv';
import type { Request, RequestHandler } from 'express';
import { ConfigurationError } from '../config/configuration-error.js';
import { invalidOption, readOptions } from '../config/options.js';
import { apiError, type ErrorItem } from '../errors/api-error.js';
import { ERROR_CATALOGUE } from '../errors/catalogue.js';
import { parsedQuery } from './query.js';

/**
 * A JSON Schema (draft-07, as ajv's default build reads it), or `true`/`false`.
 * Declared here, not taken from ajv: ajv is an optional peer dependency, and
 * the package's types must compile in an app that does not install it.
 */
export type JsonSchema = boolean | { readonly [keyword: string]: unknown };

/** The schemas of validate(): one per part of the request, each optional. */
export interface ValidateSchemas {
  /**
   * Schema of `req.body`, parsed from JSON or from a form. Form values are
   * strings; they are coerced to the schema's types (`"42"` to `42`,
   * `"true"` to `true`, a lone value to a one-item array). JSON bodies are
   * not coerced: `"42"` for an integer is an error there. Default: not checked.
   */
  body?: JsonSchema;
  /** Schema of the query parameters (strings, coerced like form values). Default: not checked. */
  query?: JsonSchema;
  /** Schema of the path parameters (strings, coerced like form values). Default: not checked. */
  params?: JsonSchema;
}

type Part = keyof ValidateSchemas;

const PARTS = ['body', 'query', 'params'] as const;
/** How each part is named in a message, so a person knows where to look. */
const PART_NAMES: Readonly<Record<Part, string>> = { body: 'Body field', query: 'Query parameter', params: 'Path parameter' };
const PART_WHOLE: Readonly<Record<Part, string>> = { body: 'The request body', query: 'The query', params: 'The path' };

/** Keys that reach object internals when code later copies the object with `Object.assign` or a merge. */
export const FORBIDDEN_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'] as const;
const FORBIDDEN = new Set(FORBIDDEN_KEYS);

/** Media types whose bodies are validated; any other body is refused with 415. */
const BODY_TYPES = ['application/json', '+json', 'application/x-www-form-urlencoded'];
const FORM_TYPE = 'application/x-www-form-urlencoded';
/** Most elements in one answer's `errors`. */
const MAX_ITEMS = 20;

interface SchemaCompiler {
  readonly Ajv: typeof Ajv;
  readonly addFormats: (ajv: Ajv) => Ajv;
}
let schemaCompiler: SchemaCompiler | undefined;

/**
 * ajv and ajv-formats, loaded when validate() is first called, not when the
 * package loads: an app without validate() never loads them (docs/design.md
 * principle 9). They are optional peer dependencies; a missing one is a
 * configuration error at start-up that says what to install.
 */
function loadSchemaCompiler(): SchemaCompiler {
  if (schemaCompiler) return schemaCompiler;
  try {
    const ajv = require('ajv') as typeof import('ajv');
    // ajv-formats is CommonJS with `exports.default`.
    const formats = require('ajv-formats') as { default?: unknown };
    schemaCompiler = { Ajv: ajv.Ajv, addFormats: (formats.default ?? formats) as SchemaCompiler['addFormats'] };
    return schemaCompiler;
  } catch (error) {
    const missing = /Cannot find module '(ajv|ajv-formats)'/.exec((error as Error).message)?.[1];
    if (!missing) throw error;
    throw new ConfigurationError(
      'EAC_PEER_MISSING',
      `validate(schemas): compiling JSON Schemas needs the \`ajv\` and \`ajv-formats\` packages (optional peer dependencies), and \`${missing}\` is not installed: \`npm install ajv ajv-formats\`.`,
    );
  }
}

/** Words for the formats of ajv-formats, so that a message says what to send. */
const FORMAT_WORDS: Readonly<Record<string, string>> = {
  email: 'an email address',
  'date-time': 'an RFC 3339 date-time such as 2026-01-31T09:30:00Z',
  date: 'a date such as 2026-01-31',
  time: 'a time such as 09:30:00Z',
  uri: 'an absolute URI',
  'uri-reference': 'a URI reference',
  uuid: 'a UUID',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  hostname: 'a host name',
};

const TYPE_WORDS: Readonly<Record<string, string>> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** What is wrong, in words a person can act on. */
function describe(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not accepted here';
    case 'type':
      return `must be ${String(p.type)
        .split(',')
        .map((t) => TYPE_WORDS[t] ?? t)
        .join(' or ')}`;
    case 'format':
      return `must be ${FORMAT_WORDS[String(p.format)] ?? `in the format "${String(p.format)}"`}`;
    case 'minLength':
      return `must be at least ${plural(Number(p.limit), 'character')} long`;
    case 'maxLength':
      return `must be at most ${plural(Number(p.limit), 'character')} long`;
    case 'minimum':
      return `must be ${String(p.limit)} or more`;
    case 'maximum':
      return `must be ${String(p.limit)} or less`;
    case 'exclusiveMinimum':
      return `must be more than ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(p.limit)}`;
    case 'multipleOf':
      return `must be a multiple of ${String(p.multipleOf)}`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'pattern':
      return `must match the pattern ${String(p.pattern)}`;
    case 'minItems':
      return `must hold at least ${plural(Number(p.limit), 'item')}`;
    case 'maxItems':
      return `must hold at most ${plural(Number(p.limit), 'item')}`;
    case 'uniqueItems':
      return 'must not hold the same item twice';
    case 'minProperties':
      return `must hold at least ${plural(Number(p.limit), 'field')}`;
    case 'maxProperties':
      return `must hold at most ${plural(Number(p.limit), 'field')}`;
    default:
      return error.message ?? 'is not valid';
  }
}

/** `/address/city` to `address.city`, `/tags/0` to `tags[0]` (RFC 6901 escapes undone). */
function fieldPath(pointer: string, extra: unknown): string {
  const parts = pointer === '' ? [] : pointer.slice(1).split('/');
  if (typeof extra === 'string') parts.push(extra.replaceAll('~', '~0').replaceAll('/', '~1'));
  let path = '';
  for (const raw of parts) {
    const part = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    path += /^[0-9]+$/.test(part) && path !== '' ? `[${part}]` : path === '' ? part : `.${part}`;
  }
  return path;
}

/** One error item per failing field: the first problem ajv found for it. */
function itemsOf(part: Part, errors: readonly ErrorObject[]): ErrorItem[] {
  const byField = new Map<string, ErrorItem>();
  for (const error of errors) {
    const p = error.params as Record<string, unknown>;
    const field = fieldPath(error.instancePath, p.missingProperty ?? p.additionalProperty);
    if (byField.has(field)) continue;
    const message =
      field === '' ? `${PART_WHOLE[part]} ${describe(error)}.` : `${PART_NAMES[part]} "${field}" ${describe(error)}.`;
    byField.set(field, { message, code: ERROR_CATALOGUE.validationFailed.code, field: field === '' ? part : field });
  }
  return [...byField.values()];
}

/** Finds keys that would reach object internals, at any depth, without recursion. */
function forbiddenKeys(part: Part, value: unknown): ErrorItem[] {
  const found: ErrorItem[] = [];
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [current, path] = stack.pop() as [unknown, string];
    if (typeof current !== 'object' || current === null) continue;
    if (Array.isArray(current)) {
      current.forEach((item, i) => {
        stack.push([item, `${path}[${i}]`]);
      });
      continue;
    }
    for (const key of Object.keys(current)) {
      const at = path === '' ? key : `${path}.${key}`;
      if (FORBIDDEN.has(key)) {
        found.push({
          message: `${PART_NAMES[part]} "${at}" is not accepted.`,
          code: ERROR_CATALOGUE.validationFailed.code,
          field: at,
        });
      } else {
        stack.push([(current as Record<string, unknown>)[key], at]);
      }
    }
  }
  return found;
}

const AJV_BASE: AjvOptions = { allErrors: true, useDefaults: true, strict: true, strictTypes: false, strictTuples: false };

function compile(schema: unknown, part: string, coerce: boolean): ValidateFunction {
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
    invalidOption('validate', part, schema, 'a JSON Schema (an object or a boolean)');
  }
  const { Ajv, addFormats } = loadSchemaCompiler();
  const ajv = addFormats(new Ajv({ ...AJV_BASE, coerceTypes: coerce ? 'array' : false }));
  try {
    return ajv.compile(schema as AnySchema);
  } catch (error) {
    return invalidOption('validate', part, schema, `a JSON Schema ajv can compile (${(error as Error).message})`);
  }
}

/** A copy of a parameter object with its own keys only (already checked), on a plain prototype. */
const ownCopy = (value: unknown): Record<string, unknown> => {
  const copy: Record<string, unknown> = {};
  if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) copy[key] = (value as Record<string, unknown>)[key];
  }
  return copy;
};

/**
 * Validates the body, query and path parameters of a request against JSON
 * Schemas, compiled by ajv once, when validate() is called. A request that
 * fails is refused with 400 (code 40005) and one element in `errors` per
 * failing field, each with a message saying what to send and the `field`.
 *
 * On success the request holds the validated values: form, query and path
 * values coerced to the schema's types, schema defaults filled in. `req.query`
 * is replaced by the validated object (Express 5 otherwise parses the query
 * string again on every read, which would lose the coercion).
 *
 * Keys `__proto__`, `constructor` and `prototype` are refused at any depth,
 * so no later copy or merge of the body can change a prototype.
 */
export function validate(schemas: Readonly<ValidateSchemas>): RequestHandler {
  const given = readOptions<ValidateSchemas>('validate', schemas, PARTS);
  if (Object.keys(given).length === 0) {
    invalidOption('validate', 'body', undefined, 'a schema: give at least one of body, query, params');
  }
  const bodyJson = given.body === undefined ? undefined : compile(given.body, 'body', false);
  const bodyForm = given.body === undefined ? undefined : compile(given.body, 'body', true);
  const query = given.query === undefined ? undefined : compile(given.query, 'query', true);
  const params = given.params === undefined ? undefined : compile(given.params, 'params', true);

  /** Checks one part; returns the validated value, or undefined when it failed. */
  const check = (part: Part, validator: ValidateFunction, raw: unknown, items: ErrorItem[]): unknown => {
    const forbidden = forbiddenKeys(part, raw);
    if (forbidden.length > 0) {
      items.push(...forbidden);
      return undefined;
    }
    // Query and path parameters are copied (own keys, plain prototype) so
    // that coercion and defaults never write into Express's own objects.
    const value = part === 'body' ? raw : ownCopy(raw);
    if (validator(value)) return value;
    items.push(...itemsOf(part, validator.errors ?? []));
    return undefined;
  };

  return function validateMiddleware(req: Request, _res, next) {
    const items: ErrorItem[] = [];
    if (params) {
      const values = check('params', params, req.params, items);
      if (values !== undefined) req.params = values as Request['params'];
    }
    if (query) {
      const values = check('query', query, parsedQuery(req), items);
      if (values !== undefined) {
        Object.defineProperty(req, 'query', { value: values, writable: true, enumerable: true, configurable: true });
      }
    }
    if (bodyJson && bodyForm) {
      // A POST without a body still says `Content-Length: 0`: no body, not a wrong type.
      const empty = req.headers['content-length'] === '0' && req.headers['content-type'] === undefined;
      const type = empty ? null : req.is(BODY_TYPES);
      if (type === false) {
        throw apiError('unsupportedMediaType', {
          message: 'The request body must be sent as application/json or application/x-www-form-urlencoded.',
        });
      }
      // No body at all is validated as an empty object: the schema's
      // `required` then names what is missing.
      const body = type === null || req.body === undefined ? {} : req.body;
      check('body', type === FORM_TYPE ? bodyForm : bodyJson, body, items);
      req.body = body;
    }
    // Bounded: a body of thousands of wrong keys gets a bounded answer.
    if (items.length > 0) throw apiError('validationFailed', { items: items.slice(0, MAX_ITEMS) });
    next();
  };
}
