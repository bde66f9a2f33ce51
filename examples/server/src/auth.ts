import type { RequestHandler } from 'express';
import { type AccessTokenKey, bearerAuth, type RevokedFamilies, type SubjectActiveCheck } from 'express-api-conventions/oauth2';
import type { UserRepository } from './users/repository.js';

/** The public client (no secret) the browser page signs in as. */
export const BROWSER_PAGE_CLIENT_ID = 'browser-page';

/** Every scope the service knows: writing users, and asking for exports. */
export const SCOPES = ['users:write', 'exports'] as const;

/**
 * Audience of the access tokens: the API they are for, one name the same on
 * every instance whatever its address. The issuer is the service's URL
 * (issuer.ts), as RFC 8414 requires of the metadata clients discover.
 */
export const TOKEN_AUDIENCE = 'urn:express-api-conventions:reference-server';

/**
 * What tokenRouter() and bearerAuth() share: the keys, the issuer, the
 * audience, the revoked refresh-token families, whose access tokens stop
 * working on every instance within a second (reuse detected at the token
 * endpoint), and the check that a token's user was not deleted.
 */
export interface TokenSettings {
  readonly keys: readonly AccessTokenKey[];
  readonly issuer: string;
  readonly audience: string;
  readonly revokedFamilies: RevokedFamilies;
  /** Whether a token's user still exists: read from the users every instance shares, so a deletion holds everywhere at once. */
  readonly isSubjectActive: SubjectActiveCheck;
}

const USER_ID = /^[1-9][0-9]{0,19}$/;

export const tokenSettings = (
  keys: readonly AccessTokenKey[],
  issuer: string,
  revokedFamilies: RevokedFamilies,
  users: UserRepository,
): TokenSettings => ({
  keys,
  issuer,
  audience: TOKEN_AUDIENCE,
  revokedFamilies,
  isSubjectActive: async (subject) => USER_ID.test(subject) && (await users.get(BigInt(subject))) !== undefined,
});

/** Realm of the `WWW-Authenticate: Bearer` challenges. */
export const REALM = 'reference-server';

/** A bearer token is required (`/v1/me`): a session cookie is not enough. */
export const requireBearer = (tokens: TokenSettings): RequestHandler => bearerAuth({ ...tokens, realm: REALM });
