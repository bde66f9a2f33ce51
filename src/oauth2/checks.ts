import { invalidOption } from '../config/options.js';
import type { AccessTokenClaims } from './access-tokens.js';

// RFC 9110 §11.2 quoted-string content, without the quote and backslash that would need escaping.
const REALM_SAFE = /^[\x20\x21\x23-\x5B\x5D-\x7E]+$/;

/** Checks the `audience` option shared by tokenRouter() and bearerAuth(). */
export function checkAudience(factory: string, value: unknown): string | readonly string[] {
  if (typeof value === 'string' && value.length > 0) return value;
  if (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string' && item.length > 0))
    return value;
  return invalidOption(factory, 'audience', value, 'a non-empty string or a non-empty array of them');
}

/** Checks a `realm` option: it is written inside a quoted string of `WWW-Authenticate`. */
export function checkRealm(factory: string, value: unknown): string {
  if (typeof value !== 'string' || !REALM_SAFE.test(value))
    invalidOption(factory, 'realm', value, 'printable ASCII without quotes or backslashes');
  return value;
}

/**
 * Whether a token's subject (its `sub`: the user) may still use the API: it
 * exists and is not disabled. Shared by bearerAuth() and tokenRouter() as
 * `isSubjectActive`; it rejects, or throws, when it cannot tell (a store down).
 *
 * Where an access token is checked (bearerAuth(), dpopAuth(), introspection)
 * its verified claims come second: a client credentials token's `sub` is
 * the client's id, not a user's (RFC 9068 §2.2, `sub` equal to `client_id`),
 * so the check can look the client up instead. Where no token is at hand (a
 * grant, a session) only the subject is given, and it is always a user.
 */
export type SubjectActiveCheck = (subject: string, claims?: Readonly<AccessTokenClaims>) => boolean | Promise<boolean>;

/** Checks an `isSubjectActive` option. */
export function checkSubjectActive(factory: string, value: unknown): SubjectActiveCheck | undefined {
  if (value !== undefined && typeof value !== 'function')
    invalidOption(factory, 'isSubjectActive', value, 'a function (subject) => boolean | Promise<boolean>');
  return value as SubjectActiveCheck | undefined;
}
