/**
 * Passwords of an exact UTF-8 length, made of multi-byte characters, with a
 * "twin": another password that bcrypt alone would take for the same one.
 * Over 72 bytes the twin shares the first 72 bytes and differs after them
 * (in the last character); at 72 bytes or less it differs in its last
 * character, which bcrypt reads.
 */

/** 24 × '€' (3 bytes each): exactly bcrypt's 72 bytes. */
export const FIRST_72_BYTES = '€'.repeat(24);

const TAIL = [...'üñ😀ß✓']; // 2, 2, 4, 2 and 3 bytes

export interface PasswordPair {
  readonly bytes: number;
  readonly password: string;
  readonly twin: string;
}

/** A password of exactly `bytes` UTF-8 bytes (at least 3) and its twin. */
export function passwordPair(bytes: number): PasswordPair {
  if (bytes <= 72) {
    const body = '€'.repeat(Math.floor((bytes - 1) / 3));
    const pad = 'a'.repeat(bytes - 1 - Buffer.byteLength(body));
    return { bytes, password: `${body}${pad}x`, twin: `${body}${pad}y` };
  }
  const after = bytes - 72;
  if (after < 4) {
    const pad = 'a'.repeat(after - 1);
    return { bytes, password: `${FIRST_72_BYTES}${pad}x`, twin: `${FIRST_72_BYTES}${pad}y` };
  }
  // Multi-byte characters while they fit, ASCII up to the exact length, then one last 4-byte character.
  const room = after - 4;
  let tail = '';
  for (let next = 0; ; next++) {
    const char = TAIL[next % TAIL.length] as string;
    if (Buffer.byteLength(tail + char) > room) break;
    tail += char;
  }
  tail += 'a'.repeat(room - Buffer.byteLength(tail));
  return { bytes, password: `${FIRST_72_BYTES}${tail}😀`, twin: `${FIRST_72_BYTES}${tail}😁` };
}
