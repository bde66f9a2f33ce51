import { type CatalogueEntry, ERROR_CATALOGUE, type ErrorName } from './catalogue.js';

/** One element of the `errors` array of an error body (the conventions' Errors rule 7). */
export interface ErrorItem {
  readonly message: string;
  readonly code: number;
  /** Where the problem is (a field, a parameter), when it helps the client to act. */
  readonly field?: string;
}

export interface ApiErrorInit {
  /** Overrides the catalogue message; shown to clients, in production too. */
  message?: string;
  /** Extra facts for developers; rendered as `detail` outside production only. */
  detail?: unknown;
  /** Response headers that belong to the error (`Retry-After`, `Allow`, `WWW-Authenticate`). */
  headers?: Readonly<Record<string, string>>;
  /** Several problems at once (validation): each becomes one element of `errors`. */
  items?: readonly ErrorItem[];
  /**
   * A body of another published shape, used instead of `{ errors: [...] }`.
   * Only for protocols that fix their own shape: RFC 6749 §5.2 token errors
   * and RFC 6750 bearer errors (`{ "error": "invalid_token" }`).
   */
  body?: Readonly<Record<string, unknown>>;
  /** The error that caused this one; logged, never sent. */
  cause?: unknown;
}

/**
 * The library's one error type: everything that goes wrong becomes an
 * ApiError and is rendered once, by errorHandler() (docs/design.md principle 4).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly code: number;
  readonly detail: unknown;
  readonly headers: Readonly<Record<string, string>>;
  readonly items: readonly ErrorItem[];
  readonly body: Readonly<Record<string, unknown>> | undefined;

  constructor(entry: CatalogueEntry, init: ApiErrorInit = {}) {
    super(init.message ?? entry.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = entry.status;
    this.code = entry.code;
    this.detail = init.detail;
    this.headers = init.headers ?? {};
    this.items = init.items ?? [{ message: this.message, code: this.code }];
    this.body = init.body;
  }

  /** The status under http-errors' other name: an error handler written to that convention keeps it. */
  get statusCode(): number {
    return this.status;
  }

  /** Whether the message is meant for the client, as http-errors says it: every 4xx. */
  get expose(): boolean {
    return this.status < 500;
  }
}

/** Creates the ApiError of a catalogue entry: `apiError('resourceNotFound')`. */
export function apiError(name: ErrorName, init?: ApiErrorInit): ApiError {
  return new ApiError(ERROR_CATALOGUE[name], init);
}

/**
 * The mark every ApiError carries, under a registry symbol (`Symbol.for`):
 * `import` and `require` share the one build's class, but two copies of
 * the package in one tree (two versions installed side by side) have two
 * ApiError classes; `instanceof` fails across them, the mark does not.
 */
export const API_ERROR_BRAND: unique symbol = Symbol.for('express-api-conventions.ApiError');
Object.defineProperty(ApiError.prototype, API_ERROR_BRAND, { value: true });

/** Whether a value is an ApiError of this build or of the package's other build (CommonJS or ESM). */
export const isApiError = (value: unknown): value is ApiError =>
  value instanceof ApiError ||
  (typeof value === 'object' && value !== null && (value as { [API_ERROR_BRAND]?: unknown })[API_ERROR_BRAND] === true);
