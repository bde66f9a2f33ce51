import { createSecretKey, KeyObject } from 'node:crypto';
import { checkInteger, invalidOption, type ReadyKey, readKeys } from 'express-api-conventions/extend';
import type { AccessTokenKey } from 'express-api-conventions/oauth2';

/**
 * The token router's keys: a fixed list (the `keys` array), or the list a
 * RotatingKeys reads from state every instance shares, so that a rotation
 * needs no restart. Either way the router asks synchronously: a source
 * answers from memory, and reads the shared state on its own clock.
 */
export interface TokenKeys {
  /** The keys now: the first signs, all verify. The same array until the list changes. */
  current(): readonly ReadyKey[];
  /**
   * What the router derives its other keys from (refresh-grace successors,
   * consent CSRF tokens; derived-key.ts). For a fixed list, the first key;
   * for a source, its `derivationSecret`, which no rotation changes.
   */
  readonly derivationKey: KeyObject;
}

/** A fixed list, checked and built once. */
export function fixedKeys(factory: string, keys: unknown): TokenKeys {
  const ready = readKeys(factory, keys, true);
  return { current: () => ready, derivationKey: (ready[0] as ReadyKey).signingKey as KeyObject };
}

const UNKNOWN_KEY = 'The access token was not signed by a known key.';
const WRONG_ALGORITHM = 'The access token algorithm is not allowed.';

/**
 * The verifier's view of the keys now (the library's KeySource shape): a key
 * withdrawn from the list no longer verifies, and an acceptance remembered
 * with it no longer holds.
 */
export function verifierKeys(keys: TokenKeys): {
  key(kid: string | undefined, alg: unknown): ReadyKey | string;
  holds(key: ReadyKey): boolean;
} {
  return {
    key(kid, alg) {
      const key = keys.current().find((candidate) => candidate.kid === kid);
      if (key === undefined) return UNKNOWN_KEY;
      return alg === key.algorithm ? key : WRONG_ALGORITHM;
    },
    holds: (key) => keys.current().includes(key),
  };
}

/** Options of RotatingKeys.start(). */
export interface RotatingKeysOptions {
  /**
   * Reads the key list from where every instance finds it (your Redis, your
   * database, a secret manager): the first key signs, all verify. Called by
   * start(), then every `refreshSeconds`. Required.
   */
  load: () => Promise<readonly AccessTokenKey[]>;
  /** Seconds between two reads: how long an instance may sign or verify with the list before. 1 to 300. Default: 30. */
  refreshSeconds?: number;
  /**
   * A secret of at least 32 bytes, the same on every instance, that the
   * router derives refresh-grace successors and consent CSRF tokens from.
   * Unlike the keys it never rotates: a refresh retried across a key
   * rotation still gets its answer. Required.
   */
  derivationSecret: string | Buffer | KeyObject;
  /** Told of a read that failed or gave a list that is not valid; the last good list stays in use. Default: none. */
  onError?: (error: unknown) => void;
}

const FACTORY = 'RotatingKeys.start';
const OPTION_NAMES = ['load', 'refreshSeconds', 'derivationSecret', 'onError'];
/** Default seconds between reads of the shared list. */
export const DEFAULT_KEY_REFRESH_SECONDS = 30;
const MIN_DERIVATION_SECRET_BYTES = 32;

function readDerivationSecret(value: unknown): KeyObject {
  const secret =
    value instanceof KeyObject && value.type === 'secret'
      ? value
      : typeof value === 'string' || Buffer.isBuffer(value)
        ? createSecretKey(Buffer.from(value))
        : invalidOption(FACTORY, 'derivationSecret', '(not shown)', 'a string, a Buffer or a secret KeyObject');
  if ((secret.symmetricKeySize ?? 0) < MIN_DERIVATION_SECRET_BYTES) {
    invalidOption(FACTORY, 'derivationSecret', '(secret not shown)', `at least ${MIN_DERIVATION_SECRET_BYTES} bytes long`);
  }
  return secret;
}

/**
 * A key list read from shared state, for tokenRouter({ keys }): rotate by
 * changing the stored list, in three steps (docs/oauth2-token.md, "Key
 * rotation without restarts"), and every instance follows within
 * `refreshSeconds`. Start it before building the router:
 * `const keys = await RotatingKeys.start({ load, derivationSecret })`.
 */
export class RotatingKeys implements TokenKeys {
  readonly derivationKey: KeyObject;
  readonly #load: () => Promise<readonly AccessTokenKey[]>;
  readonly #onError: ((error: unknown) => void) | undefined;
  #keys: readonly ReadyKey[] = [];
  #timer: NodeJS.Timeout | undefined;

  private constructor(options: RotatingKeysOptions) {
    this.#load = options.load;
    this.#onError = options.onError;
    this.derivationKey = readDerivationSecret(options.derivationSecret);
  }

  /** Reads the list once (a failure or a list that is not valid throws: no router without keys), then every `refreshSeconds`. */
  static async start(options: Readonly<RotatingKeysOptions>): Promise<RotatingKeys> {
    if (typeof options !== 'object' || options === null) invalidOption(FACTORY, 'options', options, 'an object');
    const unknown = Object.keys(options).find((name) => !OPTION_NAMES.includes(name));
    if (unknown !== undefined) invalidOption(FACTORY, unknown, '(given)', `one of ${OPTION_NAMES.join(', ')}`);
    if (typeof options.load !== 'function') invalidOption(FACTORY, 'load', options.load, 'a function answering the key list');
    if (options.onError !== undefined && typeof options.onError !== 'function') {
      invalidOption(FACTORY, 'onError', options.onError, 'a function');
    }
    const refreshSeconds =
      options.refreshSeconds === undefined
        ? DEFAULT_KEY_REFRESH_SECONDS
        : checkInteger(FACTORY, 'refreshSeconds', options.refreshSeconds, { min: 1, max: 300 });
    const source = new RotatingKeys(options);
    source.#keys = await source.#read();
    source.#timer = setInterval(() => void source.refresh(), refreshSeconds * 1000);
    // The timer alone never keeps the process alive.
    source.#timer.unref();
    return source;
  }

  current(): readonly ReadyKey[] {
    return this.#keys;
  }

  /** Reads the list now (the timer calls it; call it yourself when told of a change); a bad read keeps the last list. */
  async refresh(): Promise<void> {
    try {
      this.#keys = await this.#read();
    } catch (error) {
      this.#onError?.(error);
    }
  }

  /** Stops the reads (at shutdown); the last list stays in use. */
  stop(): void {
    clearInterval(this.#timer);
  }

  async #read(): Promise<readonly ReadyKey[]> {
    const list = await this.#load();
    const ready = readKeys(FACTORY, list, true);
    // The same list again keeps the same array, so the router's caches (JWKS text, signer header) stay.
    return sameKeys(this.#keys, ready) ? this.#keys : ready;
  }
}

const sameKey = (a: ReadyKey, b: ReadyKey): boolean =>
  a.kid === b.kid &&
  a.algorithm === b.algorithm &&
  a.verifyingKey.equals(b.verifyingKey) &&
  (a.signingKey === undefined ? b.signingKey === undefined : b.signingKey !== undefined && a.signingKey.equals(b.signingKey));

function sameKeys(before: readonly ReadyKey[], after: readonly ReadyKey[]): boolean {
  return before.length === after.length && before.every((key, index) => sameKey(key, after[index] as ReadyKey));
}

/** The `keys` option: a list, or a RotatingKeys (anything with `current()` and a `derivationKey`). */
export function readTokenKeys(factory: string, value: unknown): TokenKeys {
  if (value instanceof RotatingKeys) return value;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    invalidOption(
      factory,
      'keys',
      value,
      'an array of keys, or a RotatingKeys (await RotatingKeys.start({ load, derivationSecret }))',
    );
  }
  return fixedKeys(factory, value);
}
