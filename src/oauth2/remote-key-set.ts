import { warnOnce } from '../config/warnings.js';
import { StoreUnavailableError } from '../stores/store-error.js';
import { type FetchLimits, fetchFailure, fetchJson, noDocument } from './bounded-fetch.js';
import { discoverJwksUri } from './discovery.js';
import { keysFromJwk } from './jwk.js';
import type { ReadyKey, RemoteAlgorithm } from './keys.js';

/**
 * An issuer's key set (RFC 7517), fetched from its `jwks_uri` (given, or
 * discovered from its metadata) and kept while the issuer rotates its keys:
 *
 * - fetched on the first token, or at start-up when asked;
 * - refreshed in the background once older than its cache age (the
 *   configured one, or the answer's `Cache-Control: max-age` when shorter);
 * - refetched when a token names an unknown `kid`, at most once per
 *   cooldown, one fetch in flight that every waiting request shares: a flood
 *   of made-up `kid`s costs the issuer one request per cooldown, and each of
 *   those tokens waits at most one fetch (its time-out), then gets its 401;
 * - when the issuer cannot be reached, the last good set serves for the
 *   grace beyond its cache age; after it, tokens get the store-failure 503
 *   with `Retry-After`, never a 500 and never an unverified pass;
 * - a key the issuer withdrew stops verifying at the fetch that no longer
 *   finds it, also for tokens accepted before (holds()); a key fetched again
 *   unchanged stays the same object, so those tokens stay accepted at no cost.
 */

export interface RemoteKeySetSettings extends FetchLimits {
  readonly issuer: string;
  /** The key set's address; undefined: discovered from the issuer's metadata. */
  readonly jwksUri: string | undefined;
  readonly algorithms: readonly RemoteAlgorithm[];
  readonly cooldownMs: number;
  readonly maxAgeMs: number;
  readonly graceMs: number;
  readonly maxKeys: number;
  /** The clock, in milliseconds (Date.now; a test hands in its own). */
  readonly now: () => number;
}

/** Thrown by key() when the answer needs a fetch: wait for `settled`, then ask again without waiting. */
export class KeysPending {
  constructor(readonly settled: Promise<void>) {}
}

/** A key set that could not be read, so no token can be verified: the 503 of a store that is down. */
class KeySetUnavailable extends StoreUnavailableError {
  /** Seconds until the next fetch may be tried. */
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number, cause: unknown) {
    super('issuer', message, { cause });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class RemoteKeySet {
  readonly #settings: RemoteKeySetSettings;
  #byKid: Map<string, ReadyKey[]> | undefined;
  /** Every key of #byKid, for holds(). */
  #current: ReadonlySet<ReadyKey> = new Set();
  /** Until when the set is fresh; it still serves for the grace after, while it cannot be refreshed. */
  #freshUntil = Number.NEGATIVE_INFINITY;
  #attemptAt = Number.NEGATIVE_INFINITY;
  #inFlight: Promise<void> | undefined;
  #jwksUri: string | undefined;
  #lastError: unknown;

  constructor(settings: RemoteKeySetSettings) {
    this.#settings = settings;
    this.#jwksUri = settings.jwksUri;
  }

  /** Starts a fetch now (start-up) unless the set was fetched or is being fetched; its failure only makes the first token's wait. */
  prefetch(): void {
    if (this.#byKid === undefined && this.#inFlight === undefined) void this.#refresh(this.#settings.now());
  }

  /**
   * Whether `key` is still in the set, for a token it verified before: false
   * once a fetch no longer found it, or once the set is past its grace (the
   * token then goes through key(), and its answer). A set past its cache age
   * starts its background refresh here too, so a withdrawn key is noticed
   * when only known tokens arrive. No I/O of its own: this runs on every
   * request of a known token.
   */
  holds(key: ReadyKey): boolean {
    const now = this.#settings.now();
    if (now > this.#freshUntil + this.#settings.graceMs) return false;
    if (now >= this.#freshUntil && this.#mayFetch(now)) void this.#refresh(now);
    return this.#current.has(key);
  }

  /** No fetch in flight, and the cooldown since the last one over. */
  #mayFetch(now: number): boolean {
    return this.#inFlight === undefined && now - this.#attemptAt >= this.#settings.cooldownMs;
  }

  /**
   * The one key that verifies a token with this header, or undefined (401).
   * Throws KeysPending when `wait` and a fetch may find it, and a
   * StoreUnavailableError when no set can be used.
   */
  key(kid: string | undefined, alg: unknown, wait: boolean): ReadyKey | undefined {
    const now = this.#settings.now();
    const sinceAttempt = now - this.#attemptAt;
    const canFetch = this.#mayFetch(now);
    const byKid = this.#byKid;
    if (byKid === undefined || now > this.#freshUntil + this.#settings.graceMs) {
      if (wait && (this.#inFlight !== undefined || canFetch)) throw new KeysPending(this.#refresh(now));
      const retryAfter = Math.max(1, Math.ceil((this.#settings.cooldownMs - sinceAttempt) / 1000));
      throw new KeySetUnavailable("The token issuer's keys cannot be fetched.", retryAfter, this.#lastError);
    }
    if (now >= this.#freshUntil && canFetch) this.#refresh(now);
    const candidates = kid === undefined ? [...byKid.values()].flat() : byKid.get(kid);
    const fitting = candidates?.filter((key) => key.algorithm === alg) ?? [];
    if (fitting.length === 1) return fitting[0];
    // An unknown kid may be a key the issuer just added: look once per cooldown, sharing the fetch in flight.
    if (fitting.length === 0 && kid !== undefined && !byKid.has(kid) && wait && (canFetch || this.#inFlight !== undefined)) {
      throw new KeysPending(this.#refresh(now));
    }
    return undefined;
  }

  /** The fetch in flight, or a new one; resolves (never rejects) once it settled. */
  #refresh(now: number): Promise<void> {
    if (this.#inFlight !== undefined) return this.#inFlight;
    this.#attemptAt = now;
    this.#inFlight = this.#load().then(
      () => {
        this.#inFlight = undefined;
      },
      (error: unknown) => {
        this.#lastError = error;
        this.#inFlight = undefined;
      },
    );
    return this.#inFlight;
  }

  async #load(): Promise<void> {
    const settings = this.#settings;
    this.#jwksUri ??= await discoverJwksUri(settings.issuer, settings);
    const uri = this.#jwksUri;
    const { status, body, maxAgeSeconds } = await fetchJson(uri, settings);
    if (body === undefined) throw fetchFailure(noDocument(uri, status));
    const keys = (body as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw fetchFailure(`${uri} is not a JWK Set (no "keys" array).`);
    if (keys.length > settings.maxKeys) throw fetchFailure(`${uri} holds ${keys.length} keys, more than ${settings.maxKeys}.`);
    const byKid = new Map<string, ReadyKey[]>();
    for (const jwk of keys) {
      for (const fetched of keysFromJwk(jwk, settings.algorithms)) {
        const key = this.#known(fetched);
        const same = byKid.get(key.kid);
        if (same === undefined) byKid.set(key.kid, [key]);
        else same.push(key);
      }
    }
    if (byKid.size === 0) {
      warnOnce(
        `jwks:${uri}`,
        'EAC_JWKS_NO_USABLE_KEY',
        `${uri} holds no key bearerAuth() can use (algorithms: ${settings.algorithms.join(', ')}): every token will be refused.`,
        { evenInProduction: true },
      );
    }
    const maxAge = maxAgeSeconds === undefined ? settings.maxAgeMs : Math.min(settings.maxAgeMs, maxAgeSeconds * 1000);
    this.#byKid = byKid;
    this.#current = new Set([...byKid.values()].flat());
    this.#freshUntil = settings.now() + maxAge;
  }

  /** The key of the current set that is `fetched` (same kid, algorithm and public key), or `fetched` when it is new. */
  #known(fetched: ReadyKey): ReadyKey {
    const same = this.#byKid
      ?.get(fetched.kid)
      ?.find((key) => key.algorithm === fetched.algorithm && key.verifyingKey.equals(fetched.verifyingKey));
    return same ?? fetched;
  }
}
