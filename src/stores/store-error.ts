/**
 * A shared-state store could not do what was asked: Redis unreachable, not
 * answering within the store's `commandTimeoutMs`, or answering with an
 * error. Every Redis store of the library rejects with this class (the
 * original error is its `cause`), so a caller can tell "the store is down"
 * (answer 503 with `Retry-After`, the conventions' Errors) from a bug of its own
 * (500) with one `instanceof`.
 */
export class StoreUnavailableError extends Error {
  override readonly name: string = 'StoreUnavailableError';
  /** The store that failed, such as `"RedisRefreshTokenStore"`. */
  readonly store: string;

  constructor(store: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.store = store;
  }
}

/**
 * The mark of a StoreUnavailableError under a registry symbol, so that one
 * made by the package's other build (CommonJS or ESM) is recognised too.
 */
export const STORE_FAILURE_BRAND: unique symbol = Symbol.for('express-api-conventions.StoreUnavailableError');
Object.defineProperty(StoreUnavailableError.prototype, STORE_FAILURE_BRAND, { value: true });
