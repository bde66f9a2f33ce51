import { timingSafeEqual } from 'node:crypto';

/**
 * Whether two strings are equal, compared in time that depends on their
 * length only (node:crypto's timingSafeEqual): for secrets, tokens, MACs and
 * nonces, where an early exit would tell an attacker how much was right.
 */
export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
