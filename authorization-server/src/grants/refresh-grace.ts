import { createHmac, type KeyObject } from 'node:crypto';
import { derivedKey } from '../derived-key.js';

/**
 * Rotation that survives a lost response. With a grace period, the refresh
 * token that replaces a presented one is not drawn at random but derived
 * from it: HMAC-SHA256 under a key only the service holds. A client whose
 * network dropped the answer of its last refresh presents the same old
 * token again, and the router derives the very token it had issued; the
 * store, which holds only hashes, recognises it as the family's current one
 * (never used since) and answers `retried` instead of revoking the family.
 * Nothing but hashes is stored, and whoever holds an old token cannot
 * compute the next one without the key.
 *
 * A grace must not be a ride for a thief: it is given only to
 * clients that prove themselves (a client secret, or a DPoP-bound family),
 * once per rotation, never to two rotations in a row (the store's rules),
 * and the retry answers the access token the rotation issued, the same
 * claims (`iat`, `jti`, hence `exp`), not another live one.
 */

/** HKDF `info`: the derivation key serves this purpose only, apart from signing. */
const DERIVATION_INFO = 'express-api-conventions refresh-token rotation v1';

/** The key refresh tokens are derived under, from the signing key every instance shares (RFC 5869 HKDF). */
export function refreshDerivationKey(signingKey: KeyObject): Buffer {
  return derivedKey(signingKey, DERIVATION_INFO);
}

/** The refresh token that replaces `presented`: 256 bits, base64url (43 characters), like a random one. */
export function deriveRefreshToken(key: Buffer, presented: string): string {
  return createHmac('sha256', key).update(presented, 'utf8').digest('base64url');
}

/** The `jti` of the access token issued with `refreshToken` under a grace: a retry signs the same one. */
export function deriveAccessTokenId(key: Buffer, refreshToken: string): string {
  return createHmac('sha256', key).update(`access-token-id ${refreshToken}`, 'utf8').digest('base64url').slice(0, 22);
}

/** What a rotation issued, as the store keeps it for a retry: `<iat> <scope...>`. */
export function describeIssued(iat: number, scopes: readonly string[]): string {
  return [String(iat), ...scopes].join(' ');
}

/** The `iat` and scopes a rotation issued, read back from describeIssued(); undefined when unreadable. */
export function readIssued(issued: string | undefined): { iat: number; scopes: readonly string[] } | undefined {
  if (!issued) return undefined;
  const [iat, ...scopes] = issued.split(' ');
  const seconds = Number(iat);
  return Number.isSafeInteger(seconds) && seconds > 0 ? { iat: seconds, scopes } : undefined;
}
