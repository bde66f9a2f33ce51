import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { ReadyKey } from './keys.js';

/**
 * JWT access tokens, signed and verified with jsonwebtoken. The header's
 * `typ` is `at+jwt` (RFC 9068 §2.1), so no other JWT signed with the same key
 * (an ID token, say) passes as an access token; refresh tokens are opaque and
 * never parse as a JWT at all.
 */

/** RFC 9068 §2.1: the `typ` header of a JWT access token. */
export const ACCESS_TOKEN_TYPE = 'at+jwt';

/** RFC 9068 §4: a resource server accepts `at+jwt` and `application/at+jwt`; media types compare without case. */
const isAccessTokenType = (typ: unknown): boolean =>
  typeof typ === 'string' &&
  (typ.toLowerCase() === ACCESS_TOKEN_TYPE || typ.toLowerCase() === `application/${ACCESS_TOKEN_TYPE}`);

/**
 * The longest lifetime (`exp` − `iat`) an access token is accepted with, by
 * default, in seconds: one day, the longest tokenRouter() issues. A token
 * that claims to live longer was not issued by a router with these keys, or
 * its keys leaked; it is refused however far its `exp`.
 */
export const DEFAULT_MAX_TOKEN_LIFETIME = 86_400;

/** The claims of an access token (RFC 9068 §2.2). */
export interface AccessTokenClaims {
  /** Issuer. */
  readonly iss: string;
  /** The user. */
  readonly sub: string;
  /** Audience: the API or APIs the token is for. */
  readonly aud: string | string[];
  /** Expiry, seconds since the epoch. */
  readonly exp: number;
  /** Issued at, seconds since the epoch. */
  readonly iat: number;
  /** Unique token id. */
  readonly jti: string;
  /** Granted scopes, space-separated; absent when none were granted. */
  readonly scope?: string;
  /** The application the token was issued to, when it authenticated. */
  readonly client_id?: string;
  /**
   * The refresh-token family the token was issued with (the `sid`, "session
   * id", claim of the IANA JWT registry): revoking the family (reuse
   * detected, sign-out) revokes its access tokens too (RevokedFamilies).
   */
  readonly sid?: string;
  /** RFC 9449 §6.1: the thumbprint of the key the token is bound to (DPoP). */
  readonly cnf?: { readonly jkt: string };
}

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

/** Signs access tokens with the first key; built once per token router. */
export class AccessTokenSigner {
  readonly #key: ReadyKey;
  readonly #issuer: string;
  readonly #audience: string | string[];
  readonly #ttlSeconds: number;
  readonly #header: jwt.JwtHeader;

  constructor(key: ReadyKey, issuer: string, audience: string | readonly string[], ttlSeconds: number) {
    this.#key = key;
    this.#issuer = issuer;
    this.#audience = typeof audience === 'string' ? audience : [...audience];
    this.#ttlSeconds = ttlSeconds;
    this.#header = { alg: key.algorithm, typ: ACCESS_TOKEN_TYPE, kid: key.kid };
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
    // The key is checked at construction to be a secret or a private key.
    return jwt.sign(claims, this.#key.signingKey as jwt.Secret, { algorithm: this.#key.algorithm, header: this.#header });
  }
}

/** Why a token was refused; the text of `error_description`. */
export class TokenRejected extends Error {}

interface VerifyEntry {
  readonly key: ReadyKey;
  readonly options: jwt.VerifyOptions & { complete: false };
}

const HEADER_END = /^[A-Za-z0-9_-]+$/;

/** How many accepted tokens a verifier remembers (each a few hundred bytes). */
export const ACCEPTED_TOKENS_CACHE_SIZE = 10_000;

/**
 * Verifies access tokens against a key ring: the `kid` picks the key, and
 * the header's `alg` must be that key's one algorithm (so neither `none` nor
 * an HS256 token "signed" with a public RSA key can pass).
 */
export class AccessTokenVerifier {
  readonly #byKid = new Map<string, VerifyEntry>();
  readonly #tolerance: number;
  // Tokens this verifier accepted lately, by their exact text: a client sends
  // the same token with every request for its lifetime, and checking its
  // signature again (an HMAC or RSA operation, plus JSON parsing) costs far
  // more than looking it up. A hit still has exp and nbf checked against the
  // clock. Emptied when full: bounded memory, no per-entry bookkeeping.
  readonly #accepted = new Map<string, AccessTokenClaims>();

  readonly #maxLifetime: number;

  constructor(
    keys: readonly ReadyKey[],
    issuer: string,
    audience: string | readonly string[],
    clockToleranceSeconds: number,
    maxLifetimeSeconds: number = DEFAULT_MAX_TOKEN_LIFETIME,
  ) {
    this.#tolerance = clockToleranceSeconds;
    this.#maxLifetime = maxLifetimeSeconds;
    for (const key of keys) {
      this.#byKid.set(key.kid, {
        key,
        options: {
          algorithms: [key.algorithm],
          issuer,
          audience: (typeof audience === 'string' ? audience : [...audience]) as jwt.VerifyOptions['audience'],
          clockTolerance: clockToleranceSeconds,
          complete: false,
        },
      });
    }
  }

  /** The verified claims of `token` (frozen); throws TokenRejected with the reason otherwise. */
  verify(token: string): AccessTokenClaims {
    const accepted = this.#accepted.get(token);
    if (accepted !== undefined) {
      // The same clock checks jsonwebtoken makes; when one fails, the full
      // verification below rejects the token with the right reason.
      const now = Math.floor(Date.now() / 1000);
      const nbf = (accepted as { nbf?: unknown }).nbf;
      if (now < accepted.exp + this.#tolerance && !(typeof nbf === 'number' && nbf > now + this.#tolerance)) return accepted;
      this.#accepted.delete(token);
    }
    const claims = Object.freeze(this.#verifyFully(token));
    if (this.#accepted.size >= ACCEPTED_TOKENS_CACHE_SIZE) this.#accepted.clear();
    this.#accepted.set(token, claims);
    return claims;
  }

  #verifyFully(token: string): AccessTokenClaims {
    const dot = token.indexOf('.');
    const encodedHeader = dot > 0 ? token.slice(0, dot) : '';
    if (!HEADER_END.test(encodedHeader)) throw new TokenRejected('The access token is malformed.');
    let header: { alg?: unknown; kid?: unknown; typ?: unknown };
    try {
      header = JSON.parse(Buffer.from(encodedHeader, 'base64url').toString('utf8'));
    } catch {
      throw new TokenRejected('The access token is malformed.');
    }
    if (typeof header !== 'object' || header === null) throw new TokenRejected('The access token is malformed.');
    const entry = typeof header.kid === 'string' ? this.#byKid.get(header.kid) : undefined;
    if (!entry) throw new TokenRejected('The access token was not signed by a known key.');
    if (header.alg !== entry.key.algorithm) throw new TokenRejected('The access token algorithm is not allowed.');
    if (!isAccessTokenType(header.typ)) throw new TokenRejected('The token is not an access token.');
    let payload: jwt.JwtPayload | string;
    try {
      payload = jwt.verify(token, entry.key.verifyingKey, entry.options);
    } catch (error) {
      if (error instanceof jwt.TokenExpiredError) throw new TokenRejected('The access token expired.');
      if (error instanceof jwt.NotBeforeError) throw new TokenRejected('The access token is not valid yet.');
      throw new TokenRejected('The access token is not valid.');
    }
    if (
      typeof payload !== 'object' ||
      typeof payload.sub !== 'string' ||
      typeof payload.exp !== 'number' ||
      typeof payload.iat !== 'number'
    ) {
      throw new TokenRejected('The access token lacks required claims.');
    }
    if (payload.exp - payload.iat > this.#maxLifetime) {
      throw new TokenRejected('The access token lives longer than this service accepts.');
    }
    if (payload.scope !== undefined && typeof payload.scope !== 'string')
      throw new TokenRejected('The access token scope is malformed.');
    if (payload.client_id !== undefined && typeof payload.client_id !== 'string') {
      throw new TokenRejected('The access token client_id is malformed.');
    }
    if (payload.sid !== undefined && typeof payload.sid !== 'string')
      throw new TokenRejected('The access token sid is malformed.');
    const cnf = payload.cnf as { jkt?: unknown } | undefined;
    if (cnf !== undefined && (typeof cnf !== 'object' || cnf === null || typeof cnf.jkt !== 'string')) {
      throw new TokenRejected('The access token cnf is malformed.');
    }
    return payload as unknown as AccessTokenClaims;
  }
}
