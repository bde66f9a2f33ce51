import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The consent form's CSRF token (OWASP CSRF Prevention, HMAC-based token
 * pattern): an HMAC of the session's public id and of the very
 * authorization request the page shows, under a key derived from the
 * signing key (derived-key.ts). A forged post lacks it; a token taken from
 * another user's page, or from another request's, does not verify. It
 * needs no state, so any instance checks what another issued.
 */

/** HKDF `info` of the key the tokens are made under. */
export const CONSENT_CSRF_INFO = 'express-api-conventions consent form csrf v1';

export function consentCsrfToken(key: Buffer, sessionId: string, request: string): string {
  return createHmac('sha256', key).update(`consent\0${sessionId}\0${request}`, 'utf8').digest('base64url');
}

/** Whether `token` is the one for this session and request, compared in constant time. */
export function consentCsrfTokenValid(key: Buffer, sessionId: string, request: string, token: unknown): boolean {
  if (typeof token !== 'string') return false;
  const expected = Buffer.from(consentCsrfToken(key, sessionId, request), 'utf8');
  const given = Buffer.from(token, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
