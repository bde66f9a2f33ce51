import { invalidOption, isProductionEnvironment } from './options.js';

/**
 * The library's one channel for what a developer must hear once (a set-up
 * that cannot work as meant, a neighbour's decision): a Node `Warning` with
 * an `EAC_*` code (docs/configuration-errors.md#development-warnings), said
 * once per key and process, outside production unless the fact matters
 * there most (a proxy header nobody trusts). `process.on('warning')` sees
 * each with its code, unless setWarningHandler() sends them elsewhere;
 * answers never change. Nothing else in the library calls
 * `process.emitWarning()` (biome.json forbids it outside src/config/).
 */

// Bounded: keys made from request data (a header name) stop being remembered, and said, past this.
export const WARNING_KEYS_LIMIT = 256;

/** One warning of the library: its `EAC_*` code and its message. */
export interface LibraryWarning {
  readonly code: string;
  readonly message: string;
}

/** Where the library's warnings go (setWarningHandler()). */
export type WarningHandler = (warning: LibraryWarning) => void;

const asNodeWarning: WarningHandler = ({ code, message }) => {
  process.emitWarning(message, { code });
};

let sayWarning: WarningHandler = asNodeWarning;

/**
 * Sends the library's warnings to `handler` (a logger, so that they are
 * lines of the same stream as the security events) instead of
 * `process.emitWarning()`, the default; no argument restores the default.
 * Each warning is still said once (warnOnce()).
 */
export function setWarningHandler(handler?: WarningHandler): void {
  if (handler !== undefined && typeof handler !== 'function') {
    invalidOption('setWarningHandler', 'handler', handler, 'a function (warning) => void, or nothing for process.emitWarning');
  }
  sayWarning = handler ?? asNodeWarning;
}

const saidKeys = new Set<string>();
const saidFor = new WeakSet<object>();

export interface WarningOptions {
  /** Said in production too (default: only outside production). */
  readonly evenInProduction?: boolean;
}

/**
 * Emits `message` as a Warning with `code` the first time `key` is seen (a
 * string, or an object such as one middleware's configuration); returns
 * whether it was said.
 */
export function warnOnce(key: string | object, code: string, message: string, options?: WarningOptions): boolean {
  if (options?.evenInProduction !== true && isProductionEnvironment()) return false;
  if (typeof key === 'string') {
    if (saidKeys.has(key) || saidKeys.size >= WARNING_KEYS_LIMIT) return false;
    saidKeys.add(key);
  } else {
    if (saidFor.has(key)) return false;
    saidFor.add(key);
  }
  sayWarning({ code, message });
  return true;
}
