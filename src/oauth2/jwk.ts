import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { MIN_RSA_MODULUS_BITS, REMOTE_ALGORITHMS, type ReadyKey, type RemoteAlgorithm } from './keys.js';

/**
 * Keys read from an issuer's JSON Web Key Set (RFC 7517). Node's crypto
 * builds each public key (`createPublicKey({ format: 'jwk' })`) from the
 * public members only, so a JWK that also carries private ones never yields
 * a private key. A key that breaks a rule below is skipped, not fatal: a
 * provider's set often holds encryption keys or keys for other algorithms.
 */

/** The algorithms accepted from an issuer's set by default: what the providers of docs/bearer-auth.md sign with. */
export const DEFAULT_REMOTE_ALGORITHMS: readonly RemoteAlgorithm[] = ['RS256', 'ES256', 'EdDSA'];

/** RFC 7518 §6.3.1.2: the exponent every provider uses; a small or odd one is refused. */
const RSA_EXPONENT = 65537n;

/** The public members of each key type (RFC 7518 §6.2.1, §6.3.1; RFC 8037 §2). */
const PUBLIC_MEMBERS = { RSA: ['n', 'e'], EC: ['crv', 'x', 'y'], OKP: ['crv', 'x'] } as const;

const isRemoteAlgorithm = (value: unknown): value is RemoteAlgorithm =>
  typeof value === 'string' && Object.hasOwn(REMOTE_ALGORITHMS, value);

/** The public KeyObject of a JWK of type `kty`, built from its public members only; undefined when they do not make a key. */
function publicKeyOf(jwk: Record<string, unknown>, kty: keyof typeof PUBLIC_MEMBERS): KeyObject | undefined {
  const members: Record<string, unknown> = { kty };
  for (const name of PUBLIC_MEMBERS[kty]) {
    if (typeof jwk[name] !== 'string') return undefined;
    members[name] = jwk[name];
  }
  try {
    return createPublicKey({ key: members as JsonWebKey, format: 'jwk' });
  } catch {
    return undefined;
  }
}

/** RSA keys of at least 2048 bits with e = 65537 (RFC 7518 §3.3); other types are checked by their curve. */
function strongEnough(key: KeyObject): boolean {
  if (key.asymmetricKeyType !== 'rsa') return true;
  const details = key.asymmetricKeyDetails;
  return (details?.modulusLength ?? 0) >= MIN_RSA_MODULUS_BITS && details?.publicExponent === RSA_EXPONENT;
}

/**
 * The keys one JWK verifies with, one per algorithm: its own `alg` when it
 * names one (and `allowed` lists it), else each allowed algorithm its type
 * and curve fit. Empty when the key is skipped: `use` other than `sig`,
 * `key_ops` without `verify`, an unknown or mismatched type or curve, an
 * RSA key below 2048 bits or with another exponent. A key without `kid`
 * gets the empty one: it is picked only by a token that names no key
 * (RFC 7515 §4.1.4, RFC 7517 §4.5).
 */
export function keysFromJwk(jwk: unknown, allowed: readonly RemoteAlgorithm[]): ReadyKey[] {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return [];
  const fields = jwk as Record<string, unknown>;
  if (fields.use !== undefined && fields.use !== 'sig') return [];
  if (fields.key_ops !== undefined && !(Array.isArray(fields.key_ops) && fields.key_ops.includes('verify'))) return [];
  const kty = fields.kty;
  if (kty !== 'RSA' && kty !== 'EC' && kty !== 'OKP') return [];
  if (fields.kid !== undefined && typeof fields.kid !== 'string') return [];
  let algorithms: readonly RemoteAlgorithm[];
  if (fields.alg === undefined) algorithms = allowed;
  else if (isRemoteAlgorithm(fields.alg) && allowed.includes(fields.alg)) algorithms = [fields.alg];
  else return [];
  const fitting = algorithms.filter((alg) => {
    const needs: { kty: string; crv?: string } = REMOTE_ALGORITHMS[alg];
    return needs.kty === kty && (needs.crv === undefined || needs.crv === fields.crv);
  });
  if (fitting.length === 0) return [];
  const key = publicKeyOf(fields, kty);
  if (key === undefined || !strongEnough(key)) return [];
  const kid = (fields.kid as string | undefined) ?? '';
  return fitting.map((algorithm) => ({ kid, algorithm, signingKey: undefined, verifyingKey: key }));
}

/** Checks an `algorithms` option: a non-empty list of REMOTE_ALGORITHMS. */
export function isRemoteAlgorithmList(value: unknown): value is readonly RemoteAlgorithm[] {
  return Array.isArray(value) && value.length > 0 && value.every(isRemoteAlgorithm);
}
