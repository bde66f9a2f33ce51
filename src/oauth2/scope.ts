import { invalidOption } from '../config/options.js';

/**
 * RFC 6749 §3.3: `scope = scope-token *( SP scope-token )`,
 * `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.
 */
export const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*$/;

/** The scope tokens of a `scope` value, duplicates dropped, or undefined when malformed. */
export function parseScope(value: string): readonly string[] | undefined {
  if (!SCOPE.test(value)) return undefined;
  return [...new Set(value.split(' '))];
}

/** A scope list as one `scope` value, in a stable order so that two lists compare as strings. */
export function formatScope(scopes: readonly string[]): string {
  return [...scopes].sort().join(' ');
}

/** Checks an option holding scope tokens. */
export function checkScopeList(factory: string, name: string, value: unknown): readonly string[] {
  if (!Array.isArray(value) || !value.every((scope) => typeof scope === 'string' && SCOPE_TOKEN.test(scope))) {
    invalidOption(factory, name, value, 'an array of RFC 6749 §3.3 scope tokens (printable ASCII, no space, quote or backslash)');
  }
  return value;
}
