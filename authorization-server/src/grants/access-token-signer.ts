import { sign as cryptoSign, type KeyObject, randomUUID } from 'node:crypto';
import type { ReadyKey } from 'express-api-conventions/extend';
import jwt from 'jsonwebtoken';
import type { TokenKeys } from '../token-keys.js';

/**
 * The access tokens this package issues: JWTs signed with the router's
 * first key, jsonwebtoken underneath (Node's crypto for EdDSA, which it
 * lacks). The library's bearerAuth() verifies them; only the issuer signs.
 */

/** RFC 9068 §2.1: the `typ` header of a JWT access token, so no other JWT of the same key passes as one. */
const ACCESS_TOKEN_TYPE = 'at+jwt';

/** What one access token says besides the router's issuer, audience and lifetime. */
export interface IssueInput {
  readonly subject: string;
  readonly clientId: string | undefined;
  readonly scopes: readonly string[];
  /** The refresh-token family, written as `sid`. */
  readonly familyId?: string;
  /** The DPoP key thumbprint the token is bound to, written as `cnf.jkt`. */
  readonly jkt?: string;
  /**
   * The token's identity, when it is fixed by its rotation (refresh grace):
   * a retry signs the very claims the rotation signed. Absent: now and a
   * random `jti`.
   */
  readonly identity?: { readonly iat: number; readonly jti: string };
}

/**
 * Signs access tokens (RFC 9068 §2.2 claims) with the first key of the list
 * now (token-keys.ts: a rotation moves another key first); built once per
 * token router.
 */
export class AccessTokenSigner {
  readonly #keys: TokenKeys;
  readonly #issuer: string;
  readonly #audience: string | string[];
  readonly #ttlSeconds: number;
  #signing: { readonly key: ReadyKey; readonly header: jwt.JwtHeader } | undefined;

  constructor(keys: TokenKeys, issuer: string, audience: string | readonly string[], ttlSeconds: number) {
    this.#keys = keys;
    this.#issuer = issuer;
    this.#audience = typeof audience === 'string' ? audience : [...audience];
    this.#ttlSeconds = ttlSeconds;
  }

  /** The first key and its header, built again only when another key comes first. */
  #signingKey(): { readonly key: ReadyKey; readonly header: jwt.JwtHeader } {
    const key = this.#keys.current()[0] as ReadyKey;
    if (this.#signing?.key !== key) this.#signing = { key, header: { alg: key.algorithm, typ: ACCESS_TOKEN_TYPE, kid: key.kid } };
    return this.#signing;
  }

  /** A signed access token for `input`, valid for the configured lifetime. */
  sign(input: IssueInput): string {
    const iat = input.identity?.iat ?? Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      iss: this.#issuer,
      sub: input.subject,
      aud: this.#audience,
      exp: iat + this.#ttlSeconds,
      iat,
      jti: input.identity?.jti ?? randomUUID(),
    };
    if (input.scopes.length > 0) claims.scope = input.scopes.join(' ');
    if (input.clientId !== undefined) claims.client_id = input.clientId;
    if (input.familyId !== undefined) claims.sid = input.familyId;
    if (input.jkt !== undefined) claims.cnf = { jkt: input.jkt };
    const { key, header } = this.#signingKey();
    // readKeys() checked the key to be a secret or a private key.
    if (key.algorithm === 'EdDSA') return signEdDsa(header, claims, key.signingKey as KeyObject);
    return jwt.sign(claims, key.signingKey as jwt.Secret, { algorithm: key.algorithm as jwt.Algorithm, header });
  }
}

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An EdDSA (Ed25519) JWS in compact form (RFC 7515 §7.1, RFC 8037 §3.1). */
function signEdDsa(header: jwt.JwtHeader, claims: Record<string, unknown>, key: KeyObject): string {
  const input = `${base64url(header)}.${base64url(claims)}`;
  return `${input}.${cryptoSign(null, Buffer.from(input), key).toString('base64url')}`;
}
