import type { RequestHandler } from 'express';
import type { ClientStore } from 'express-api-conventions/oauth2';
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
  /**
   * Whether a token's subject may still use the API: its user still exists, or, for a client
   * credentials token, its client is still registered and not blocked. Read from the stores every
   * instance shares, so a deletion or a block holds everywhere at once.
   */
  readonly isSubjectActive: SubjectActiveCheck;
}

const USER_ID = /^[1-9][0-9]{0,19}$/;

/** Whether a token names no user but the client itself: a client credentials token (RFC 9068 §2.2, `sub` is `client_id`). */
export const namesOnlyClient = (auth: { readonly subject: string; readonly clientId?: string } | undefined): boolean =>
  auth !== undefined && auth.clientId !== undefined && auth.subject === auth.clientId;

export const tokenSettings = (
  keys: readonly AccessTokenKey[],
  issuer: string,
  revokedFamilies: RevokedFamilies,
  users: UserRepository,
  clients: ClientStore,
): TokenSettings => ({
  keys,
  issuer,
  audience: TOKEN_AUDIENCE,
  revokedFamilies,
  isSubjectActive: async (subject, claims) => {
    if (claims !== undefined && namesOnlyClient({ subject, clientId: claims.client_id })) {
      const client = await clients.findById(subject);
      return client !== undefined && client.blocked !== true;
    }
    return USER_ID.test(subject) && (await users.get(BigInt(subject))) !== undefined;
  },
});

/** Realm of the `WWW-Authenticate: Bearer` challenges. */
export const REALM = 'reference-server';

/** A bearer token is required (`/v1/me`): a session cookie is not enough. */
export const requireBearer = (tokens: TokenSettings): RequestHandler => bearerAuth({ ...tokens, realm: REALM });
