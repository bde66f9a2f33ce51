import { createHash, randomBytes } from 'node:crypto';
import { sameText } from '../http/same-text.js';

/**
 * Registered clients, as both sides of OAuth 2.0 see them: the authorization
 * server (express-api-conventions-authorization-server) authenticates them at
 * its endpoints, and bearerAuth() in optional mode identifies one by its
 * Basic credentials (`clients`). The record, the store interface and the
 * secret hashing live here, in the library, so that the two agree. Which
 * grants a client may use is the authorization server's own registration.
 */

/** A registered application (the conventions' "Client authentication"). */
export interface ClientRecord {
  readonly id: string;
  /** SHA-256 of the client secret (hashClientSecret()); absent for a public client. */
  readonly secretHash?: string;
  /** Scopes this client may ask for; absent: all known scopes. */
  readonly scopes?: readonly string[];
  /** A blocked client is refused (the conventions: "block applications that are not allowed"). */
  readonly blocked?: boolean;
}

export interface ClientStore {
  findById(clientId: string): Promise<ClientRecord | undefined>;
}

/**
 * Client secrets are high-entropy values issued by the service, so one
 * SHA-256 pass is enough to keep the stored form useless to a reader (unlike
 * passwords, which need bcrypt).
 */
export function hashClientSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}

const DUMMY_SECRET_HASH = hashClientSecret(randomBytes(32).toString('base64url'));

/**
 * Whether `secret` matches the stored hash, in constant time. Compared as two
 * SHA-256 digests of equal length, so the time says nothing about the secret.
 * An absent hash is compared against a dummy, so it costs the same.
 */
export function clientSecretMatches(secret: string, secretHash: string | undefined): boolean {
  const equal = sameText(hashClientSecret(secret), secretHash ?? DUMMY_SECRET_HASH);
  return equal && secretHash !== undefined;
}
