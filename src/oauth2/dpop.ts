import { createHash, createHmac, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { checkInteger, invalidOption, readOptions } from '../config/options.js';
import { sameText } from '../http/same-text.js';
import { StoreUnavailableError } from '../stores/store-error.js';

/**
 * DPoP proofs (RFC 9449): a client proves, with each request, that it holds
 * the private key its tokens are bound to. A proof is a JWT signed with that
 * key, its public JWK in the header; it names the request's method and URL,
 * when it was made, a unique id (refused a second time), and at a resource
 * the hash of the access token it goes with. Signatures are checked by
 * jsonwebtoken over a key node:crypto imports from the JWK.
 */

/** RFC 9449 §4.2: the `typ` of a proof. */
export const DPOP_PROOF_TYPE = 'dpop+jwt';
/** The token_type of a token bound to a key (RFC 9449 §5). */
export const DPOP_TOKEN_TYPE = 'DPoP';
/** Proof algorithms accepted by default: asymmetric only (RFC 9449 §4.2: no MAC, no `none`). */
export const DPOP_ALGORITHMS = ['ES256', 'RS256', 'PS256'] as const;
export type DpopAlgorithm = (typeof DPOP_ALGORITHMS)[number];
/** How far from now a proof's `iat` may be, in seconds, by default. */
export const DEFAULT_DPOP_PROOF_WINDOW = 60;
/** The longest proof read: a proof with an RSA-4096 JWK is under 2 KB. */
const MAX_PROOF_LENGTH = 4096;
const MAX_JTI_LENGTH = 256;
/** How many imported proof keys a verifier keeps. */
const IMPORTED_KEYS_CACHE_SIZE = 1000;

/**
 * Where the `jti` of each accepted proof is remembered until it could no
 * longer be accepted anyway (RFC 9449 §11.1): shared by every instance, or a
 * proof replayed on another instance would pass there.
 */
export interface DpopReplayStore {
  /** Records `key` until `expiresAtMs`; false when it was recorded already (a replay). Atomic. */
  remember(key: string, expiresAtMs: number): Promise<boolean>;
  /**
   * Gives back a key recorded for a request that then had no effect (a
   * refused grant), so that the client may send that proof again. Optional:
   * without it the proof stays spent.
   */
  forget?(key: string): Promise<void>;
}

/** How many proofs a MemoryDpopReplayStore remembers at most, by default: 44 MB measured with 256-character `jti`s, the longest accepted. */
export const DEFAULT_DPOP_REPLAY_ENTRIES = 100_000;

/** Options of a MemoryDpopReplayStore. */
export interface MemoryDpopReplayStoreOptions {
  /**
   * The most proofs remembered at once. A proof is remembered for its
   * window (two minutes by default), so the default holds about 800 proofs
   * a second; when it is full of proofs not yet expired, a new proof is
   * refused with StoreUnavailableError (503 with `Retry-After`) rather than
   * a remembered one forgotten, which would let it be replayed. Default:
   * 100,000.
   */
  maxEntries?: number;
}

/** The longest pause between two sweeps of a full store: a store full of live proofs is not swept on every request. */
const FULL_SWEEP_INTERVAL_MS = 1000;

/**
 * Remembered proofs of one process, at most `maxEntries`; expired ones are
 * dropped on a sweep every 1,024 additions, and when the store is full.
 */
export class MemoryDpopReplayStore implements DpopReplayStore {
  readonly #seen = new Map<string, number>();
  readonly #maxEntries: number;
  #added = 0;
  #sweptAt = 0;

  constructor(options: Readonly<MemoryDpopReplayStoreOptions> = {}) {
    const given = readOptions<MemoryDpopReplayStoreOptions>('MemoryDpopReplayStore', options, ['maxEntries']);
    this.#maxEntries =
      given.maxEntries === undefined
        ? DEFAULT_DPOP_REPLAY_ENTRIES
        : checkInteger('MemoryDpopReplayStore', 'maxEntries', given.maxEntries, { min: 1 });
  }

  async remember(key: string, expiresAtMs: number): Promise<boolean> {
    const now = Date.now();
    if (++this.#added % 1024 === 0) this.#sweep(now);
    const until = this.#seen.get(key);
    if (until !== undefined && until > now) return false;
    if (until === undefined && this.#seen.size >= this.#maxEntries) {
      if (now - this.#sweptAt >= FULL_SWEEP_INTERVAL_MS) this.#sweep(now);
      if (this.#seen.size >= this.#maxEntries) {
        throw new StoreUnavailableError('MemoryDpopReplayStore', `Full: ${this.#maxEntries} proofs not yet expired.`);
      }
    }
    this.#seen.set(key, expiresAtMs);
    return true;
  }

  async forget(key: string): Promise<void> {
    this.#seen.delete(key);
  }

  #sweep(now: number): void {
    this.#sweptAt = now;
    for (const [k, until] of this.#seen) if (until <= now) this.#seen.delete(k);
  }

  /** How many proofs are remembered, expired ones not yet swept included. */
  get size(): number {
    return this.#seen.size;
  }
}

/** Options of DPoP, shared by tokenRouter({ dpop }) and dpopAuth(). */
export interface DpopOptions {
  /**
   * Where proof ids are remembered; give a RedisDpopReplayStore to several
   * instances. Default: a MemoryDpopReplayStore of DEFAULT_DPOP_REPLAY_ENTRIES.
   */
  replay?: DpopReplayStore;
  /** Proof algorithms accepted. Default: `['ES256', 'RS256', 'PS256']`. */
  algorithms?: readonly DpopAlgorithm[];
  /** How far a proof's `iat` may be from now, in seconds (1 to 600). Default: `60`. */
  proofWindowSeconds?: number;
  /**
   * Require server-provided nonces (RFC 9449 §8, §9): a proof without a
   * current nonce is refused with `use_dpop_nonce` and a `DPoP-Nonce` header
   * holding one. Nonces are made from `secret` (at least 32 bytes, the same
   * on every instance and at the token endpoint and resources) and the time,
   * so no instance stores them; each is good for `lifetimeSeconds` to twice
   * that. Default: none (no nonce asked for).
   */
  nonce?: { readonly secret: string | Buffer; readonly lifetimeSeconds?: number };
}

const OPTION_NAMES = ['replay', 'algorithms', 'proofWindowSeconds', 'nonce'] as const;

/** The checked DPoP options. */
export interface DpopConfiguration {
  readonly replay: DpopReplayStore;
  readonly algorithms: readonly DpopAlgorithm[];
  readonly windowSeconds: number;
  readonly nonces: DpopNonces | undefined;
}

/** The default lifetime of a DPoP nonce, in seconds: a nonce is accepted for one to two of them. */
export const DEFAULT_DPOP_NONCE_LIFETIME = 300;

/**
 * Stateless nonces: the index of the current time slot and an HMAC of it,
 * base64url. The current slot's nonce and the one before are accepted, so
 * every instance that shares the secret agrees without storing anything.
 */
export class DpopNonces {
  readonly #secret: Buffer;
  readonly #lifetimeMs: number;

  constructor(secret: Buffer, lifetimeSeconds: number) {
    this.#secret = secret;
    this.#lifetimeMs = lifetimeSeconds * 1000;
  }

  /** The nonce to hand out now. */
  current(): string {
    return this.#nonceOf(Math.floor(Date.now() / this.#lifetimeMs));
  }

  /** Whether `nonce` is this slot's or the previous one's. */
  accepts(nonce: unknown): boolean {
    if (typeof nonce !== 'string' || nonce.length > 64) return false;
    const slot = Math.floor(Date.now() / this.#lifetimeMs);
    return sameText(nonce, this.#nonceOf(slot)) || sameText(nonce, this.#nonceOf(slot - 1));
  }

  // A slot's nonce changes once per lifetime: kept for the slots asked lately, not computed per proof.
  readonly #recent = new Map<number, string>();

  #nonceOf(slot: number): string {
    let nonce = this.#recent.get(slot);
    if (nonce === undefined) {
      nonce = this.#computeNonce(slot);
      if (this.#recent.size >= 3) this.#recent.delete(this.#recent.keys().next().value as number);
      this.#recent.set(slot, nonce);
    }
    return nonce;
  }

  #computeNonce(slot: number): string {
    const index = Buffer.alloc(6);
    index.writeUIntBE(slot, 0, 6);
    const mac = createHmac('sha256', this.#secret).update(index).digest().subarray(0, 18);
    return Buffer.concat([index, mac]).toString('base64url');
  }
}

/** A proof without the current nonce (RFC 9449 §8): answered with `use_dpop_nonce` and a fresh nonce. */
export class DpopNonceRequired extends Error {}

export function readDpopOptions(factory: string, options: unknown): DpopConfiguration {
  const given = readOptions<DpopOptions>(`${factory} dpop`, options, OPTION_NAMES);
  const replay = given.replay ?? new MemoryDpopReplayStore();
  if (typeof (replay as Partial<DpopReplayStore>).remember !== 'function') {
    invalidOption(factory, 'dpop.replay', replay, 'a DpopReplayStore (remember)');
  }
  const algorithms = given.algorithms ?? DPOP_ALGORITHMS;
  if (
    !Array.isArray(algorithms) ||
    algorithms.length === 0 ||
    !algorithms.every((a) => (DPOP_ALGORITHMS as readonly string[]).includes(a))
  ) {
    invalidOption(factory, 'dpop.algorithms', algorithms, `a non-empty list of ${DPOP_ALGORITHMS.join(', ')}`);
  }
  const windowSeconds =
    given.proofWindowSeconds === undefined
      ? DEFAULT_DPOP_PROOF_WINDOW
      : checkInteger(factory, 'dpop.proofWindowSeconds', given.proofWindowSeconds, { min: 1, max: 600 });
  let nonces: DpopNonces | undefined;
  if (given.nonce !== undefined) {
    const { secret, lifetimeSeconds } = given.nonce as { secret?: unknown; lifetimeSeconds?: unknown };
    if (!(typeof secret === 'string' || Buffer.isBuffer(secret)) || Buffer.byteLength(secret) < 32) {
      invalidOption(factory, 'dpop.nonce.secret', '(hidden)', 'a string or Buffer of at least 32 bytes');
    }
    const lifetime =
      lifetimeSeconds === undefined
        ? DEFAULT_DPOP_NONCE_LIFETIME
        : checkInteger(factory, 'dpop.nonce.lifetimeSeconds', lifetimeSeconds, { min: 10, max: 3600 });
    nonces = new DpopNonces(Buffer.from(secret as string | Buffer), lifetime);
  }
  return { replay, algorithms, windowSeconds, nonces };
}

/** Why a proof was refused: the `error_description` of `invalid_dpop_proof`. */
export class DpopProofRejected extends Error {}

/** A proof refused because its `jti` was seen before: a request captured and sent again (its own security event). */
export class DpopProofReplayed extends DpopProofRejected {}

// RFC 7638 §3.2: the required members of each key type, in lexicographic order.
const THUMBPRINT_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  EC: ['crv', 'kty', 'x', 'y'],
  RSA: ['e', 'kty', 'n'],
};

/** The RFC 7638 SHA-256 thumbprint of a public JWK, base64url: the `jkt` a token is bound to. */
export function jwkThumbprint(jwk: Readonly<Record<string, unknown>>): string {
  // Own members only, on both sides: a `kty` of "constructor" or "__proto__" names no key type.
  const kty = ownMember(jwk, 'kty');
  const members = typeof kty === 'string' && Object.hasOwn(THUMBPRINT_MEMBERS, kty) ? THUMBPRINT_MEMBERS[kty] : undefined;
  if (members === undefined) throw new DpopProofRejected('The proof key type is not supported.');
  const canonical: Record<string, unknown> = {};
  for (const name of members) {
    const value = ownMember(jwk, name);
    if (typeof value !== 'string') throw new DpopProofRejected('The proof key is incomplete.');
    canonical[name] = value;
  }
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url');
}

/** A JWK member, read only when the object holds it itself (never one inherited from Object.prototype). */
const ownMember = (jwk: Readonly<Record<string, unknown>>, name: string): unknown =>
  Object.hasOwn(jwk, name) ? jwk[name] : undefined;

/** RFC 7518 §3.3 and §3.5: RSA keys of at least 2048 bits for RS256 and PS256. */
const MIN_RSA_BITS = 2048;

/** RFC 9449 §4.2 `ath`: the base64url SHA-256 of the access token. */
export const accessTokenHash = (accessToken: string): string => createHash('sha256').update(accessToken).digest('base64url');

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** What a request must match. */
export interface ProofExpectation {
  /** The request method (RFC 9449 §4.3 check 8). */
  readonly method: string;
  /** The request URL without query and fragment (check 9). */
  readonly url: string;
  /** At a resource: the access token the proof must name in `ath` (check 11). */
  readonly accessToken?: string;
}

/** The thumbprint of the key a valid proof was signed with. */
export interface VerifiedProof {
  readonly jkt: string;
}

/** A proof that passed every check but the replay one, with what spend() records. */
export interface CheckedProof extends VerifiedProof {
  /** The proof's `jti`, which names it in a security event. */
  readonly jti: string;
  readonly replayKey: string;
  readonly expiresAtMs: number;
}

/**
 * Checks a proof as RFC 9449 §4.3 lists: one compact JWS, `typ` dpop+jwt,
 * an allowed asymmetric `alg`, a public `jwk` that verifies the signature,
 * `htm` and `htu` of this request, `iat` within the window, a `jti` never
 * seen (remembered in the replay store), and `ath` at a resource.
 */
export class DpopVerifier {
  readonly #config: DpopConfiguration;
  // Public keys imported lately, by thumbprint: a client proves with one key
  // for the life of its tokens, and importing a JWK costs about as much as
  // verifying the signature. The thumbprint covers every member that makes
  // the key, so one thumbprint is one key. Emptied when full.
  readonly #keys = new Map<string, KeyObject>();

  constructor(config: DpopConfiguration) {
    this.#config = config;
  }

  get algorithms(): readonly DpopAlgorithm[] {
    return this.#config.algorithms;
  }

  /** A nonce to send in `DPoP-Nonce`, when nonces are required. */
  nonce(): string | undefined {
    return this.#config.nonces?.current();
  }

  /** check() then spend(): a proof accepted and its `jti` recorded. */
  async verify(proof: string | string[] | undefined, expected: ProofExpectation): Promise<VerifiedProof> {
    const checked = this.check(proof, expected);
    await this.spend(checked);
    return { jkt: checked.jkt };
  }

  /** Every check of RFC 9449 §4.3 but the replay: the store is not written (see spend()). */
  check(proof: string | string[] | undefined, expected: ProofExpectation): CheckedProof {
    // RFC 9449 §4.3 check 1: exactly one DPoP header.
    if (typeof proof !== 'string') throw new DpopProofRejected('Exactly one DPoP proof is required.');
    const { header, claims } = decodeProof(proof);
    if (header.typ !== DPOP_PROOF_TYPE) throw new DpopProofRejected('The DPoP proof typ is not dpop+jwt.');
    // RFC 7515 §4.1.11: no extension is understood here, so a proof that lists one as critical is refused.
    if ((header as { crit?: unknown }).crit !== undefined) {
      throw new DpopProofRejected('The DPoP proof requires a header extension this service does not support.');
    }
    const alg = header.alg as DpopAlgorithm;
    if (!this.#config.algorithms.includes(alg)) throw new DpopProofRejected('The DPoP proof algorithm is not allowed.');
    const jwk = (header as { jwk?: unknown }).jwk;
    if (typeof jwk !== 'object' || jwk === null) throw new DpopProofRejected('The DPoP proof has no jwk.');
    const members = jwk as Record<string, unknown>;
    if (PRIVATE_MEMBERS.some((name) => Object.hasOwn(members, name)))
      throw new DpopProofRejected('The DPoP proof jwk holds a private key.');
    // The claims that cost nothing to check go before the signature: a stale or misdirected proof is
    // refused without a public-key operation, however often it is sent.
    if (typeof claims.jti !== 'string' || claims.jti.length === 0 || claims.jti.length > MAX_JTI_LENGTH) {
      throw new DpopProofRejected('The DPoP proof has no valid jti.');
    }
    if (claims.htm !== expected.method) throw new DpopProofRejected('The DPoP proof htm does not match the request method.');
    if (typeof claims.htu !== 'string' || !sameTarget(claims.htu, expected.url)) {
      throw new DpopProofRejected('The DPoP proof htu does not match the request URL.');
    }
    const now = Date.now() / 1000;
    if (typeof claims.iat !== 'number' || Math.abs(now - claims.iat) > this.#config.windowSeconds) {
      throw new DpopProofRejected('The DPoP proof iat is outside the accepted window.');
    }
    const jkt = jwkThumbprint(members);
    const key = this.#publicKey(jkt, members);
    try {
      // No clock claims but iat, checked above against the window.
      jwt.verify(proof, key, { algorithms: [alg], ignoreExpiration: true, ignoreNotBefore: true });
    } catch {
      throw new DpopProofRejected('The DPoP proof signature is not valid.');
    }
    if (expected.accessToken !== undefined && claims.ath !== accessTokenHash(expected.accessToken)) {
      throw new DpopProofRejected('The DPoP proof ath does not match the access token.');
    }
    // RFC 9449 §8: checked after the signature, so only the key holder learns a nonce is needed.
    if (this.#config.nonces !== undefined && !this.#config.nonces.accepts((claims as { nonce?: unknown }).nonce)) {
      throw new DpopNonceRequired('The DPoP proof must carry the nonce in the DPoP-Nonce header.');
    }
    return {
      jkt,
      jti: claims.jti,
      replayKey: `${jkt}:${claims.jti}`,
      expiresAtMs: (claims.iat + this.#config.windowSeconds + 1) * 1000,
    };
  }

  /**
   * Records a checked proof's `jti`, or refuses a proof used before: called
   * last, once the proof and what it comes with (the grant, the token) are
   * accepted, so a refused request never writes to the replay store.
   */
  async spend(proof: CheckedProof): Promise<void> {
    if (!(await this.#config.replay.remember(proof.replayKey, proof.expiresAtMs))) {
      throw new DpopProofReplayed('The DPoP proof was used before.');
    }
  }

  /** Gives back a spent proof whose request then had no effect (the store's forget(), when it has one). */
  async release(proof: CheckedProof): Promise<void> {
    await this.#config.replay.forget?.(proof.replayKey);
  }

  /** The public key of a proof's `jwk`, imported once per thumbprint. */
  #publicKey(jkt: string, members: Record<string, unknown>): KeyObject {
    let key = this.#keys.get(jkt);
    if (key === undefined) {
      try {
        key = createPublicKey({ key: members as JsonWebKey, format: 'jwk' });
      } catch {
        throw new DpopProofRejected('The DPoP proof jwk is not a valid public key.');
      }
      const bits = key.asymmetricKeyDetails?.modulusLength;
      if (key.asymmetricKeyType === 'rsa' && (bits === undefined || bits < MIN_RSA_BITS)) {
        throw new DpopProofRejected(`The DPoP proof key is shorter than ${MIN_RSA_BITS} bits.`);
      }
      // A large exponent makes each check cost like a private-key operation; every real key uses 65537.
      if (key.asymmetricKeyType === 'rsa' && key.asymmetricKeyDetails?.publicExponent !== RSA_EXPONENT) {
        throw new DpopProofRejected('The DPoP proof RSA key exponent must be 65537.');
      }
      if (this.#keys.size >= IMPORTED_KEYS_CACHE_SIZE) this.#keys.clear();
      this.#keys.set(jkt, key);
    }
    return key;
  }
}

/** The only RSA public exponent accepted in a proof key (F4, what every library generates). */
const RSA_EXPONENT = 65537n;

/** A proof's header and claims, not yet verified; a proof that is no compact JWS of a JSON object is malformed. */
function decodeProof(proof: string): {
  readonly header: jwt.JwtHeader;
  readonly claims: jwt.JwtPayload & { htm?: unknown; htu?: unknown; ath?: unknown };
} {
  if (proof.length > MAX_PROOF_LENGTH || !COMPACT_JWS.test(proof)) throw new DpopProofRejected('The DPoP proof is malformed.');
  let decoded: jwt.Jwt | null;
  try {
    decoded = jwt.decode(proof, { complete: true });
  } catch {
    decoded = null;
  }
  if (decoded === null || typeof decoded.payload !== 'object') throw new DpopProofRejected('The DPoP proof is malformed.');
  return { header: decoded.header, claims: decoded.payload };
}

/**
 * RFC 9449 §4.3 check 9: `htu` is compared without its query and fragment,
 * after RFC 3986 §6.2.2 and §6.2.3 normalization (case of scheme and host,
 * default port, dot segments), which WHATWG URL parsing performs.
 */
/** Whether two URLs name one target (origin and path; query and fragment aside); a URL that does not parse matches nothing. */
function sameTarget(htu: string, expected: string): boolean {
  const origins = [htu, expected].map((url) => {
    try {
      const parsed = new URL(url);
      return `${parsed.origin}${parsed.pathname}`;
    } catch {
      return undefined;
    }
  });
  return origins[0] !== undefined && origins[0] === origins[1];
}
