import type { Server } from 'node:http';
import { checkInteger, invalidOption, readOptions } from '../config/options.js';

/** Options of serverTimeouts(). */
export interface ServerTimeoutsOptions {
  /**
   * Longest time, in milliseconds, a client may take to send the request
   * line and headers (Node's `server.headersTimeout`). Default: `10000`.
   */
  headersTimeoutMs?: number;
  /**
   * Longest time, in milliseconds, a client may take to send the whole
   * request, body included (Node's `server.requestTimeout`); at least
   * `headersTimeoutMs`. Default: `30000`.
   */
  requestTimeoutMs?: number;
}

/** serverTimeouts()'s defaults: a request line and headers arrive within 10 s, a whole request within 30 s. */
export const SERVER_TIMEOUTS = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 } as const;

const FACTORY = 'serverTimeouts';
// setTimeout's largest delay.
const MAX_DELAY_MS = 2_147_483_647;

/**
 * Bounds how long a slow or half-open client holds a connection of the
 * `http.Server` (or `https.Server`) that serves the app: Node's defaults
 * give a client 60 s for the headers and 300 s for the whole request.
 * Node checks both every `connectionsCheckingInterval` (30 s unless given
 * to `http.createServer()`), so a late client is cut at most that much
 * after its deadline; parseBodies()' `bodyTimeoutMs` answers a slow body
 * to the millisecond. Node answers these timeouts with 408, in JSON when
 * answerParserErrors() is attached too. Returns the server.
 */
export function serverTimeouts<S extends Server>(server: S, options?: Readonly<ServerTimeoutsOptions>): S {
  const given = readOptions<ServerTimeoutsOptions>(FACTORY, options, ['headersTimeoutMs', 'requestTimeoutMs']);
  const headersTimeoutMs = checkInteger(FACTORY, 'headersTimeoutMs', given.headersTimeoutMs ?? SERVER_TIMEOUTS.headersTimeoutMs, {
    min: 1,
    max: MAX_DELAY_MS,
  });
  const requestTimeoutMs = checkInteger(FACTORY, 'requestTimeoutMs', given.requestTimeoutMs ?? SERVER_TIMEOUTS.requestTimeoutMs, {
    min: 1,
    max: MAX_DELAY_MS,
  });
  // Node refuses to start a server whose headers may take longer than the whole request.
  if (headersTimeoutMs > requestTimeoutMs) {
    invalidOption(FACTORY, 'headersTimeoutMs', headersTimeoutMs, `at most requestTimeoutMs (${requestTimeoutMs})`);
  }
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = requestTimeoutMs;
  return server;
}
