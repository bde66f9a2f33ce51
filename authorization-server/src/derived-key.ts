import { hkdfSync, type KeyObject } from 'node:crypto';

/**
 * A key for one purpose, derived from the access-token signing key every
 * instance shares (RFC 5869 HKDF, `info` naming the purpose): the instances
 * agree on it with no secret more to configure, and it signs nothing but
 * what `info` names.
 */
export function derivedKey(signingKey: KeyObject, info: string): Buffer {
  const material = signingKey.type === 'secret' ? signingKey.export() : signingKey.export({ type: 'pkcs8', format: 'der' });
  return Buffer.from(hkdfSync('sha256', material, Buffer.alloc(0), info, 32));
}
