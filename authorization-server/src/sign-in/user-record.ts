import { warnOnce } from 'express-api-conventions/extend';
import type { UserRecord, UserStore } from '../stores/stores.js';
import { type PasswordHashParts, parsePasswordHash } from './password-hash-format.js';

/**
 * The user store's answer, checked where it enters the package: a record
 * without a usable `subject` would become a token with no `sub`, and one
 * without a usable hash a sign-in that fails for ever without a word. Either
 * is a store's mistake, so it fails loudly (docs/configuration-errors.md
 * #eac_user_record_invalid), never as an unknown user and never as a token.
 */

/** The stable code of a user store's answer that the package cannot use. */
export const USER_RECORD_INVALID = 'EAC_USER_RECORD_INVALID';

/** docs/configuration-errors.md in the repository, as ConfigurationError links it. */
const ERRORS_PAGE = 'https://github.com/express-api-conventions/express-api-conventions/blob/main/docs/configuration-errors.md';

/** A user store answered a record the package cannot use; the sign-in fails with it (500 at the token endpoint). */
export class UserRecordError extends Error {
  override readonly name = 'UserRecordError';
  readonly code = USER_RECORD_INVALID;
  /** The store, as the message names it (its class name). */
  readonly store: string;
  /** The field that is wrong: `subject`, `passwordHash`, `scopes`, or `(record)` for the answer itself. */
  readonly field: string;

  constructor(store: string, field: string, problem: string) {
    super(
      `${store}.findByUsername() answered a user whose ${field === '(record)' ? 'record' : `\`${field}\``} ${problem} ` +
        `No token is issued for it. [${USER_RECORD_INVALID}: see ${ERRORS_PAGE}#${USER_RECORD_INVALID.toLowerCase()}]`,
    );
    this.store = store;
    this.field = field;
  }
}

/** The store's name for messages: its class, or "UserStore" for a plain object. */
function storeName(users: UserStore): string {
  const name = (users as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' && name !== 'Object' ? name : 'UserStore';
}

const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'string' ? 'a string' : typeof value;

/** What is wrong with a found record, as [field, problem], or undefined when it is usable. */
function problemOf(found: unknown): [string, string] | undefined {
  if (typeof found !== 'object' || found === null || Array.isArray(found)) {
    return ['(record)', `is ${describe(found)}: answer { subject, passwordHash, scopes? }, or undefined for no such user.`];
  }
  const { subject, passwordHash, scopes } = found as Record<string, unknown>;
  if (typeof subject !== 'string' || subject === '') {
    const hint = 'id' in found ? " It has `id`: name that field `subject` (the token's `sub`)." : '';
    return [
      'subject',
      `is ${subject === '' ? 'empty' : describe(subject)}: it must be the user's stable id, a non-empty string.${hint}`,
    ];
  }
  if (typeof passwordHash !== 'string') {
    return [
      'passwordHash',
      `is ${describe(passwordHash)}: it must be a bcrypt hash (hashPassword()); answer undefined for a user who may not sign in with a password.`,
    ];
  }
  if (parsePasswordHash(passwordHash) === undefined) {
    return [
      'passwordHash',
      'is no bcrypt hash ($2a$, $2b$, $2y$) nor a version of docs/password-hashes.md, so no password can match it.',
    ];
  }
  if (scopes !== undefined && !(Array.isArray(scopes) && scopes.every((scope) => typeof scope === 'string'))) {
    return ['scopes', `is ${describe(scopes)}: it must be an array of scope strings, or absent.`];
  }
  return undefined;
}

/**
 * The user a store found, checked, with its hash read; undefined for no user
 * (undefined or null). Throws UserRecordError for a record the package
 * cannot use, said once per store on stderr, in production too.
 */
export function checkUserRecord(users: UserStore, found: unknown): { user: UserRecord; hash: PasswordHashParts } | undefined {
  if (found === undefined || found === null) return undefined;
  const problem = problemOf(found);
  if (problem !== undefined) {
    const error = new UserRecordError(storeName(users), ...problem);
    warnOnce(users, USER_RECORD_INVALID, error.message, { evenInProduction: true });
    throw error;
  }
  const user = found as UserRecord;
  return { user, hash: parsePasswordHash(user.passwordHash) as PasswordHashParts };
}
