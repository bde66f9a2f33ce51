import { randomBytes } from 'node:crypto';
import type { SharedState } from './state.js';

/**
 * A secret every instance of the service must share (the access-token
 * signing key, the CSRF key, the rate-limit partition key). In memory it is
 * drawn at start-up; in Redis the first instance draws it and the others
 * read the same one, so a token issued by one instance is accepted by all.
 *
 * Whoever can read that Redis can read the secrets: in production, keep
 * Redis private (rediss://, AUTH) or give TOKEN_SECRET explicitly.
 */
export async function sharedSecret(state: SharedState, name: string): Promise<string> {
  const key = `secrets:${name}`;
  await state.setIfAbsent(key, randomBytes(32).toString('base64url'));
  const secret = await state.get(key);
  if (!secret) throw new Error(`the shared secret ${name} could not be read back`);
  return secret;
}
