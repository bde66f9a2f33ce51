import { STORE_FAILURE_BRAND, StoreUnavailableError } from '../stores/store-error.js';
import { type ApiError, type ApiErrorInit, apiError } from './api-error.js';

/**
 * Seconds a client is asked to wait when a shared store is down: long
 * enough for a Redis fail-over or restart, short enough not to lose the
 * client (the conventions' Errors: 503 with `Retry-After`).
 */
export const STORE_RETRY_AFTER_SECONDS = 5;

/** The 503 of a shared store that cannot be reached, with `Retry-After`; one shape for every caller. */
export function storeUnavailable(cause: unknown, init: Omit<ApiErrorInit, 'cause'> = {}): ApiError {
  return apiError('stateStoreUnavailable', {
    ...init,
    headers: { 'Retry-After': String(STORE_RETRY_AFTER_SECONDS), ...init.headers },
    cause,
  });
}

/**
 * Whether an error is a shared store's failure (time-out, lost connection,
 * error reply), made by this build or by the package's other one.
 */
export const isStoreFailure = (error: unknown): boolean =>
  error instanceof StoreUnavailableError ||
  (typeof error === 'object' && error !== null && (error as { [STORE_FAILURE_BRAND]?: unknown })[STORE_FAILURE_BRAND] === true);
