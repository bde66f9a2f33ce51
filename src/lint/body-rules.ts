import { singularOf, wordsOf } from './words.js';

/*
 * The body rules of the conventions' "Conventions for every resource", pure: shared by
 * responseLinter() (in the app) and the conformance checker (from outside),
 * which must give a body the same verdict: the checker reads it through
 * the library's entry points (see path-rules.ts).
 */

/**
 * The key and value conventions of the conventions ("Conventions for every
 * resource") that a response body can be checked against, by the name a
 * finding carries. Each value quotes the rule.
 */
export const RESPONSE_RULES = {
  /** "Every JSON response body is an object. A top-level array is never returned." */
  topLevelObject: 'Top-level value: every JSON response body is an object.',
  /** "camelCase, the same in the whole API." */
  camelCase: 'Key case: camelCase, the same in the whole API.',
  /** "Timestamp keys use the `At` suffix (for example `createdAt`, `updatedAt`)." */
  timestampSuffix: 'Key naming: timestamp keys use the `At` suffix.',
  /** "String in RFC 3339 format; UTC may be written with the `Z` suffix, other offsets as `+hh:mm`." */
  dateTime: 'Date-time: a string in RFC 3339 format.',
  /** "A key does not repeat the name of its resource (for a users collection, no `user` prefix)." */
  resourcePrefix: 'Key naming: a key does not repeat the name of its resource.',
  /** "When a field is named `gender`, its value is the string `male` or `female`." */
  gender: 'Gender: the value is the string `male` or `female`.',
  /** "A list result includes a boolean `hasNext` telling whether more results follow." */
  pagingFlag: 'Paging flag: a list result includes a boolean `hasNext`.',
  /** "The pair is `id` (number) and `id_str` (string of the same value)." */
  largeInteger: 'Large integers: an integer beyond 2^53 has a `<key>_str` sibling with the same digits.',
} as const;

export type ResponseRule = keyof typeof RESPONSE_RULES;

/**
 * Keys the conventions themselves write in snake_case: the token response
 * (RFC 6749 §5.1) and the token error body (RFC 6749 §5.2, RFC 6750 §3).
 * The RFC 8414 metadata is a well-known document the checker does not hold
 * to the resource rules; every other body keeps camelCase.
 */
export const PROTOCOL_KEYS = [
  'access_token',
  'token_type',
  'expires_in',
  'refresh_token',
  'error',
  'error_description',
  'error_uri',
  'scope',
] as const;

/** One broken convention in one response body. */
export interface ResponseFinding {
  /** Where in the body: `users[].createdDate` (list items are reported once, as `[]`). */
  readonly path: string;
  readonly rule: ResponseRule;
  readonly message: string;
}

const CAMEL_CASE = /^[a-z][a-zA-Z0-9]*$/;
const STRING_SIBLING = /^([a-z][a-zA-Z0-9]*)_str$/;
const LOOKS_LIKE_DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}/;
// RFC 3339 §5.6 date-time, with upper-case `T` and `Z` (docs/conventions.md rule 2.7).
const RFC_3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;
const VERSION = /^v[0-9]+$/;
const GENDERS = new Set(['male', 'female']);

/** Words joined in camelCase: `['user', 'profile']` gives `userProfile`. */
const camelCaseOf = (words: readonly string[]): string =>
  words.map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');

/** An integer a JavaScript number cannot hold exactly (beyond 2^53). */
const isUnsafeInteger = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value);

/** What the path of a request says about its body. */
export interface ResourceContext {
  /** The resource, singular and camelCased: `/v1/user-profiles/7` gives `userProfile`. */
  readonly resource?: string;
  /** Whether the path is a list: it ends at a collection, or at a `search` segment. */
  readonly list: boolean;
}

/** Reads the resource from a path (no query): the last collection segment after the version. Shared with the conformance checker. */
export function resourceContextOf(path: string): ResourceContext {
  const segments = path.split('/').filter((s) => s !== '');
  const version = segments.findIndex((s) => VERSION.test(s));
  if (version === -1) return { list: false };
  let collection: string | undefined;
  for (let i = version + 1; i < segments.length; i += 2) collection = segments[i];
  const after = segments.length - version - 1;
  const list = after > 0 && (after % 2 === 1 || segments[segments.length - 1] === 'search');
  const words = collection ? wordsOf(collection) : [];
  const last = words.pop();
  if (!last) return { list };
  return { resource: camelCaseOf([...words, singularOf(last)]), list };
}

/** Records a finding, once per rule and key path (so the items of a list report it once). */
type AddFinding = (path: string, rule: ResponseRule, message: string) => void;

/** What the keys of one body are checked against. */
interface KeyRules {
  /** The resource, singular, and its plural: prefixes a key must not repeat. */
  readonly resource: string | undefined;
  readonly resourcePlural: string | undefined;
  /** snake_case keys accepted as they are (protocol keys). */
  readonly allowKeys: ReadonlySet<string>;
}

/** A body that is not an object: the one finding it gets. */
function topLevelMessage(body: unknown): string {
  return `The body is ${Array.isArray(body) ? 'an array' : body === null ? 'null' : `a ${typeof body}`}; send an object.`;
}

/** The items of a list at `path`: objects wait for their keys, unsafe integers reported. */
function checkListItems(list: readonly unknown[], path: string, add: AddFinding, pending: [unknown, string][]): void {
  for (const item of list) {
    if (isUnsafeInteger(item)) {
      add(
        `${path}[]`,
        'largeInteger',
        `"${path}" holds an integer beyond 2^53 (${item}) that cannot have a string sibling; send it as an object with id and id_str.`,
      );
    } else if (typeof item === 'object' && item !== null) {
      pending.push([item, `${path}[]`]);
    }
  }
}

/** Key case; a `<key>_str` sibling of a key is its own exception. */
function checkKeyCase(object: Record<string, unknown>, key: string, at: string, rules: KeyRules, add: AddFinding): void {
  const sibling = STRING_SIBLING.exec(key);
  if (!CAMEL_CASE.test(key) && !rules.allowKeys.has(key) && !(sibling && Object.hasOwn(object, sibling[1] as string))) {
    add(at, 'camelCase', `"${key}" is not camelCase; write "${camelCaseOf(wordsOf(key))}".`);
  }
}

/** A key does not repeat the name of its resource, singular or plural. */
function checkResourcePrefix(key: string, at: string, rules: KeyRules, add: AddFinding): void {
  const { resource, resourcePlural } = rules;
  if (!resource || !CAMEL_CASE.test(key)) return;
  for (const prefix of [resourcePlural, resource] as string[]) {
    if (key.length > prefix.length && key.startsWith(prefix) && /[A-Z]/.test(key.charAt(prefix.length))) {
      const rest = key.slice(prefix.length);
      add(
        at,
        'resourcePrefix',
        `"${key}" repeats the resource name "${resource}"; write "${rest.charAt(0).toLowerCase()}${rest.slice(1)}".`,
      );
      return;
    }
  }
}

/** A timestamp's key ends in `At`, and its value is an RFC 3339 string. */
function checkTimestamp(key: string, field: unknown, at: string, add: AddFinding): void {
  if (typeof field === 'string' && LOOKS_LIKE_DATE_TIME.test(field)) {
    if (!key.endsWith('At'))
      add(
        at,
        'timestampSuffix',
        `"${key}" holds a timestamp; timestamp keys end in "At", such as "${key.replace(/(?:_?(?:date|time|timestamp|on))$/i, '')}At".`,
      );
    if (!RFC_3339.test(field))
      add(at, 'dateTime', `"${key}" is ${JSON.stringify(field)}; write an RFC 3339 date-time such as 2026-01-31T09:30:00Z.`);
  } else if (key.endsWith('At') && CAMEL_CASE.test(key) && typeof field === 'number') {
    add(at, 'dateTime', `"${key}" is the number ${field}; write the time as an RFC 3339 string such as 2026-01-31T09:30:00Z.`);
  }
}

/** An integer beyond 2^53 has a `<key>_str` sibling with the same digits. */
function checkLargeInteger(object: Record<string, unknown>, key: string, field: unknown, at: string, add: AddFinding): void {
  if (!isUnsafeInteger(field)) return;
  const digits = object[`${key}_str`];
  if (typeof digits !== 'string' || !/^-?[0-9]+$/.test(digits) || Number(digits) !== field) {
    add(at, 'largeInteger', `"${key}" is an integer beyond 2^53; add "${key}_str" with the same digits as a string.`);
  }
}

/** Every key rule on one key of an object at `path`; an object value waits for its own keys. */
function checkKey(
  object: Record<string, unknown>,
  key: string,
  path: string,
  rules: KeyRules,
  add: AddFinding,
  pending: [unknown, string][],
): void {
  const at = path === '' ? key : `${path}.${key}`;
  const field = object[key];
  checkKeyCase(object, key, at, rules, add);
  checkResourcePrefix(key, at, rules, add);
  checkTimestamp(key, field, at, add);
  if (key === 'gender' && !(typeof field === 'string' && GENDERS.has(field))) {
    add(at, 'gender', `"gender" is ${JSON.stringify(field)}; its value is "male" or "female".`);
  }
  checkLargeInteger(object, key, field, at, add);
  if (typeof field === 'object' && field !== null) pending.push([field, at]);
}

/** Checks a parsed body; findings of list items are reported once per key path. */
export function lintBody(
  body: unknown,
  context: ResourceContext,
  allowKeys: ReadonlySet<string> = new Set(PROTOCOL_KEYS),
): ResponseFinding[] {
  const { resource } = context;
  const findings: ResponseFinding[] = [];
  const seen = new Set<string>();
  const add: AddFinding = (path, rule, message) => {
    const key = `${rule} ${path}`;
    if (seen.has(key)) return;
    seen.add(key);
    findings.push({ path, rule, message });
  };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    add('', 'topLevelObject', topLevelMessage(body));
    return findings;
  }
  const top = body as Record<string, unknown>;
  if (context.list && typeof top.hasNext !== 'boolean' && Object.values(top).some(Array.isArray)) {
    add('hasNext', 'pagingFlag', 'This list result has no boolean "hasNext"; say whether more results follow.');
  }
  const rules: KeyRules = { resource, resourcePlural: resource ? `${resource}s` : undefined, allowKeys };
  // Depth-first with a stack, not recursion: a deeply nested body cannot overflow the call stack.
  const pending: [unknown, string][] = [[body, '']];
  while (pending.length > 0) {
    const [value, path] = pending.pop() as [unknown, string];
    if (Array.isArray(value)) checkListItems(value, path, add, pending);
    else if (typeof value === 'object' && value !== null) {
      const object = value as Record<string, unknown>;
      for (const key of Object.keys(object)) checkKey(object, key, path, rules, add, pending);
    }
  }
  return findings.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
