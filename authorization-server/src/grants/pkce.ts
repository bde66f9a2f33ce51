import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Proof Key for Code Exchange (RFC 7636), S256 only: RFC 9700 §2.1.1 has
 * clients use it, and `plain` proves nothing to anyone who saw the request.
 */

/** The one method accepted (RFC 7636 §4.2); `plain` is refused. */
export const PKCE_METHOD = 'S256';

// RFC 7636 §4.2: BASE64URL(SHA256(verifier)), 32 bytes, is 43 characters without padding.
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
// RFC 7636 §4.1: 43 to 128 unreserved characters.
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** Whether `challenge` has the form of an S256 code challenge. */
export const isCodeChallenge = (challenge: string): boolean => CHALLENGE.test(challenge);

/** Whether `verifier` answers `challenge` (RFC 7636 §4.6), compared in constant time. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier) || !CHALLENGE.test(challenge)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'), 'ascii');
  return timingSafeEqual(computed, Buffer.from(challenge, 'ascii'));
}
