import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import type { AccessTokenKey } from 'express-api-conventions/oauth2';
import { agreeOn, republish } from './agreed.js';
import type { AccessTokenAlg } from './settings.js';
import type { SharedState } from './state.js';

/**
 * The private key that signs access tokens when ACCESS_TOKEN_ALG names a
 * key pair (ES256, EdDSA, RS256): drawn by the first instance and shared as
 * the secrets are (agreed.ts), so every instance signs with it and the
 * token router publishes one public key at `jwks_uri`. With HS256 there is
 * none: the shared token secret signs.
 */

type PairAlg = Exclude<AccessTokenAlg, 'HS256'>;

const KEY_NAME = (alg: PairAlg) => `secrets:access-token-key:${alg}`;

/** A new private key for `alg`, as PKCS #8 PEM. */
function drawKey(alg: PairAlg): string {
  const pair =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : alg === 'EdDSA'
        ? generateKeyPairSync('ed25519')
        : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
}

/** The signing key every instance uses; undefined with HS256. */
export async function agreeOnSigningKey(state: SharedState, alg: AccessTokenAlg): Promise<string | undefined> {
  return alg === 'HS256' ? undefined : agreeOn(state, KEY_NAME(alg), undefined, () => drawKey(alg));
}

/** After Redis comes back: publishes the key in use again; answers the one now published (see republishSecrets()). */
export async function republishSigningKey(
  state: SharedState,
  alg: AccessTokenAlg,
  inUse: string | undefined,
): Promise<string | undefined> {
  return alg === 'HS256' || inUse === undefined ? inUse : republish(state, KEY_NAME(alg), undefined, inUse);
}

/**
 * The token keys: the HS256 secret, or the private key with a `kid` made
 * from its public key's digest, so that a new key gets a new `kid`.
 */
export function accessTokenKeys(alg: AccessTokenAlg, secret: string, signingKey: string | undefined): AccessTokenKey[] {
  if (alg === 'HS256' || signingKey === undefined) return [{ kid: 'reference-server-1', algorithm: 'HS256', secret }];
  const privateKey = createPrivateKey(signingKey);
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const kid = `reference-server-${createHash('sha256').update(spki).digest('base64url').slice(0, 16)}`;
  return [{ kid, algorithm: alg, privateKey }];
}
