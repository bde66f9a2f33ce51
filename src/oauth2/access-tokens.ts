import { verify as cryptoVerify, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { ReadyKey } from './keys.js';

/**
 * JWT access tokens, verified with jsonwebtoken (the authorization server
 * signs them). The header's `typ` is `at+jwt` (RFC 9068 §2.1), so no other
 * JWT signed with the same key (an ID token, say) passes as an access token;
 * refresh tokens are opaque and never parse as a JWT at all.
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
  /** Unique token id: always in tokenRouter()'s tokens; an issuer may leave it out (Entra ID writes `uti`). */
  readonly jti?: string;
  /** Granted scopes, space-separated; absent when none were granted. */
  readonly scope?: string;
  /** Granted scopes as some issuers write them (Okta, Entra ID): a list, or a space-separated string. */
  readonly scp?: string | readonly string[];
  /** The application the token was issued to, when it authenticated. */
  readonly client_id?: string;
  /** The application, as OpenID Connect issuers write it (Entra ID v2, Keycloak). */
  readonly azp?: string;
  /**
   * The refresh-token family the token was issued with (the `sid`, "session
   * id", claim of the IANA JWT registry): revoking the family (reuse
   * detected, sign-out) revokes its access tokens too (RevokedFamilies).
   */
  readonly sid?: string;
  /** RFC 9449 §6.1: the thumbprint of the key the token is bound to (DPoP). */
  readonly cnf?: { readonly jkt: string };
}

/** Why a token was refused; the text of `error_description`. */
export class TokenRejected extends Error {}

/** The `error_description` of a token past its `exp` (its security event is told apart: docs/observability.md). */
export const TOKEN_EXPIRED = 'The access token expired.';

// jsonwebtoken has no EdDSA (RFC 8037): Node's crypto checks those signatures, over the JWS input.
/** The payload of an EdDSA token whose signature `key` verifies; throws otherwise. */
function verifyEdDsa(token: string, key: KeyObject): unknown {
  const parts = token.split('.');
  if (parts.length !== 3) throw new TokenRejected('The access token is malformed.');
  const [header, payload, signature] = parts as [string, string, string];
  if (!cryptoVerify(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, 'base64url'))) {
    throw new TokenRejected('The access token is not valid.');
  }
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new TokenRejected('The access token is malformed.');
  }
}

/**
 * Where a verifier finds the key of a token: the configured keys, or an
 * issuer's key set (remote-key-set.ts). Answers the key, or the
 * `error_description` of a token no key verifies; an issuer's set may also
 * throw (a fetch to wait for, or a set that cannot be read).
 */
export interface KeySource {
  key(kid: string | undefined, alg: unknown, wait: boolean): ReadyKey | string;
  /**
   * Whether `key`, which verified a token before, still verifies tokens: the
   * verifier asks before it serves a remembered acceptance. Cheap (no I/O),
   * as it runs on every request of a known token.
   */
  holds(key: ReadyKey): boolean;
}

const UNKNOWN_KEY = 'The access token was not signed by a known key.';
const WRONG_ALGORITHM = 'The access token algorithm is not allowed.';

/** The keys given to bearerAuth() or tokenRouter(): the `kid` picks the key, whose one algorithm the token must name. */
class ConfiguredKeys implements KeySource {
  readonly #byKid = new Map<string, ReadyKey>();
  constructor(keys: readonly ReadyKey[]) {
    for (const key of keys) this.#byKid.set(key.kid, key);
  }
  key(kid: string | undefined, alg: unknown): ReadyKey | string {
    const key = kid === undefined ? undefined : this.#byKid.get(kid);
    if (key === undefined) return UNKNOWN_KEY;
    return alg === key.algorithm ? key : WRONG_ALGORITHM;
  }
  /** Configured keys never change while the verifier lives. */
  holds(): boolean {
    return true;
  }
}

/** A source over an issuer's key set: its answer `undefined` is a token no key of the set verifies. */
export function issuerKeys(
  set: Pick<KeySource, 'holds'> & { key(kid: string | undefined, alg: unknown, wait: boolean): ReadyKey | undefined },
): KeySource {
  return { key: (kid, alg, wait) => set.key(kid, alg, wait) ?? UNKNOWN_KEY, holds: (key) => set.holds(key) };
}

/** RFC 9068 checks beyond signature, issuer, audience and time, for tokens of other issuers as for the library's own. */
export interface TokenRules {
  /** Whether the header's `typ` must be `at+jwt` (RFC 9068 §2.1). Default: true (the library's own tokens always carry it). */
  readonly requireType?: boolean;
  /** A last check of the verified claims (a tenant, say): false refuses the token. Default: none. */
  readonly checkClaims?: (claims: Readonly<Record<string, unknown>>) => boolean;
}

const HEADER_END = /^[A-Za-z0-9_-]+$/;

/** The `error_description` of a token whose header lists critical extensions (`crit`). */
const CRITICAL_EXTENSION = 'The access token requires a header extension this service does not support.';

/** A token accepted: its verified claims (frozen), and the key that verified it. */
interface Accepted {
  readonly claims: AccessTokenClaims;
  readonly key: ReadyKey;
}

/** How many accepted tokens a verifier remembers (each a few hundred bytes). */
export const ACCEPTED_TOKENS_CACHE_SIZE = 10_000;

const isStringList = (value: unknown): boolean =>
  typeof value === 'string' || (Array.isArray(value) && value.every((item) => typeof item === 'string'));

/**
 * Verifies access tokens against a key source: the `kid` picks the key, and
 * the header's `alg` must be that key's one algorithm (so neither `none` nor
 * an HS256 token "signed" with a public RSA key can pass). jsonwebtoken
 * checks the signature (Node's crypto for EdDSA, which it lacks); the claims
 * are checked here, the same for every algorithm (RFC 9068 §4).
 */
export class AccessTokenVerifier {
  readonly #keys: KeySource;
  readonly #issuer: string;
  readonly #audiences: readonly string[];
  readonly #tolerance: number;
  readonly #maxLifetime: number;
  readonly #requireType: boolean;
  readonly #checkClaims: TokenRules['checkClaims'];
  // Tokens this verifier accepted lately, by their exact text, with the key
  // that verified each: a client sends the same token with every request for
  // its lifetime, and checking its signature again (an HMAC or RSA operation,
  // plus JSON parsing) costs far more than looking it up. A hit still has exp
  // and nbf checked against the clock, and its key asked of the key source
  // (an issuer that withdrew the key withdraws the acceptance). Emptied when
  // full: bounded memory, no per-entry bookkeeping.
  readonly #accepted = new Map<string, Accepted>();

  constructor(
    keys: readonly ReadyKey[] | KeySource,
    issuer: string,
    audience: string | readonly string[],
    clockToleranceSeconds: number,
    maxLifetimeSeconds: number = DEFAULT_MAX_TOKEN_LIFETIME,
    rules: TokenRules = {},
  ) {
    this.#keys = Array.isArray(keys) ? new ConfiguredKeys(keys) : (keys as KeySource);
    this.#issuer = issuer;
    this.#audiences = typeof audience === 'string' ? [audience] : [...audience];
    this.#tolerance = clockToleranceSeconds;
    this.#maxLifetime = maxLifetimeSeconds;
    this.#requireType = rules.requireType ?? true;
    this.#checkClaims = rules.checkClaims;
  }

  /**
   * The verified claims of `token` (frozen); throws TokenRejected with the
   * reason otherwise. `wait`: an issuer's key set may throw KeysPending, a
   * fetch to wait for before asking again with `wait` false.
   */
  verify(token: string, wait = false): AccessTokenClaims {
    const accepted = this.#accepted.get(token);
    if (accepted !== undefined) {
      // The same clock checks as a full verification, and the key still in its source; when one fails, the full
      // verification below rejects the token with the reason.
      const { claims, key } = accepted;
      const now = Math.floor(Date.now() / 1000);
      const nbf = (claims as { nbf?: unknown }).nbf;
      const inTime = now < claims.exp + this.#tolerance && !(typeof nbf === 'number' && nbf > now + this.#tolerance);
      if (inTime && this.#keys.holds(key)) return claims;
      this.#accepted.delete(token);
    }
    const verified = this.#verifyFully(token, wait);
    if (this.#accepted.size >= ACCEPTED_TOKENS_CACHE_SIZE) this.#accepted.clear();
    this.#accepted.set(token, verified);
    return verified.claims;
  }

  #verifyFully(token: string, wait: boolean): Accepted {
    const dot = token.indexOf('.');
    const encodedHeader = dot > 0 ? token.slice(0, dot) : '';
    if (!HEADER_END.test(encodedHeader)) throw new TokenRejected('The access token is malformed.');
    let header: { alg?: unknown; kid?: unknown; typ?: unknown; crit?: unknown };
    try {
      header = JSON.parse(Buffer.from(encodedHeader, 'base64url').toString('utf8'));
    } catch {
      throw new TokenRejected('The access token is malformed.');
    }
    if (typeof header !== 'object' || header === null) throw new TokenRejected('The access token is malformed.');
    if (header.kid !== undefined && typeof header.kid !== 'string') throw new TokenRejected('The access token is malformed.');
    // RFC 7515 §4.1.11: extensions listed in `crit` must be understood, and this verifier understands none. Refused
    // before the key lookup, so such a token never costs an issuer fetch.
    if (header.crit !== undefined) throw new TokenRejected(CRITICAL_EXTENSION);
    const key = this.#keys.key(header.kid, header.alg, wait);
    if (typeof key === 'string') throw new TokenRejected(key);
    if (this.#requireType && !isAccessTokenType(header.typ)) throw new TokenRejected('The token is not an access token.');
    return { claims: Object.freeze(this.#checkClaimsOf(this.#signedPayload(token, key))), key };
  }

  /** The payload, once the signature verifies with `key` under its one algorithm. */
  #signedPayload(token: string, key: ReadyKey): unknown {
    if (key.algorithm === 'EdDSA') return verifyEdDsa(token, key.verifyingKey);
    try {
      return jwt.verify(token, key.verifyingKey, {
        algorithms: [key.algorithm as jwt.Algorithm],
        ignoreExpiration: true,
        ignoreNotBefore: true,
        complete: false,
      });
    } catch {
      throw new TokenRejected('The access token is not valid.');
    }
  }

  /** RFC 9068 §4 and RFC 7519 §4.1: issuer, audience, times with the tolerance, lifetime, then the claims' types. */
  #checkClaimsOf(payload: unknown): AccessTokenClaims {
    if (typeof payload !== 'object' || payload === null) throw new TokenRejected('The access token is malformed.');
    const claims = payload as Record<string, unknown>;
    if (claims.iss !== this.#issuer) throw new TokenRejected('The access token was issued by another issuer.');
    const aud = claims.aud;
    const audiences = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
    if (!audiences.some((item) => this.#audiences.includes(item as string))) {
      throw new TokenRejected('The access token is meant for another audience.');
    }
    const { exp, iat, nbf } = claims;
    if (typeof claims.sub !== 'string' || typeof exp !== 'number' || typeof iat !== 'number') {
      throw new TokenRejected('The access token lacks required claims.');
    }
    const now = Math.floor(Date.now() / 1000);
    if (now >= exp + this.#tolerance) throw new TokenRejected(TOKEN_EXPIRED);
    if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now + this.#tolerance)) {
      throw new TokenRejected('The access token is not valid yet.');
    }
    if (iat > now + this.#tolerance) throw new TokenRejected('The access token is not valid yet.');
    if (exp - iat > this.#maxLifetime) throw new TokenRejected('The access token lives longer than this service accepts.');
    for (const name of ['scope', 'client_id', 'azp', 'sid'] as const) {
      if (claims[name] !== undefined && typeof claims[name] !== 'string') {
        throw new TokenRejected(`The access token ${name} is malformed.`);
      }
    }
    if (claims.scp !== undefined && !isStringList(claims.scp)) throw new TokenRejected('The access token scp is malformed.');
    const cnf = claims.cnf as { jkt?: unknown } | undefined;
    if (cnf !== undefined && (typeof cnf !== 'object' || cnf === null || typeof cnf.jkt !== 'string')) {
      throw new TokenRejected('The access token cnf is malformed.');
    }
    if (this.#checkClaims !== undefined && !this.#checkClaims(claims)) {
      throw new TokenRejected('The access token claims are not accepted here.');
    }
    return claims as unknown as AccessTokenClaims;
  }
}
