/**
 * A shared-state store could not do what was asked: Redis unreachable, not
 * answering within the store's `commandTimeoutMs`, or answering with an
 * error. Every Redis store of the library rejects with this class (the
 * original error is its `cause`), so a caller can tell "the store is down"
 * (answer 503 with `Retry-After`, SPEC.md Errors) from a bug of its own
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
