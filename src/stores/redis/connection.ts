import { ConfigurationError } from '../../config/configuration-error.js';
import { checkInteger, checkString, invalidOption, readOptions } from '../../config/options.js';
import { StoreUnavailableError } from '../store-error.js';

/**
 * The one way every Redis store of the library talks to Redis: through a
 * node-redis v6 client the application creates, connects and closes, either a
 * single Redis (`createClient()`) or a Redis Cluster (`createCluster()`). Only
 * its raw `sendCommand` is used, which the two expose with different
 * signatures; `RedisConnection` hides the difference and bounds every command
 * in time.
 */

/** Per-command options node-redis accepts; the layer sets `timeout`. */
export interface RedisCommandOptions {
  timeout?: number;
}

/** What a single-Redis node-redis client (`createClient()`) offers the stores. */
export interface RedisSingleClient {
  sendCommand(args: string[], options?: RedisCommandOptions): Promise<unknown>;
}

/**
 * What a node-redis cluster client (`createCluster()`) offers the stores: its
 * `sendCommand` takes the key that routes the command to its slot first.
 */
export interface RedisClusterClient {
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
    options?: RedisCommandOptions,
  ): Promise<unknown>;
  /** Present on a cluster client only: how the layer tells the two apart. */
  readonly masters: readonly unknown[];
}

/** A connected node-redis v6 client: `createClient()` or `createCluster()` of the `redis` package. */
export type RedisClient = RedisSingleClient | RedisClusterClient;

/** Options every Redis store accepts. */
export interface RedisStoreOptions {
  /** A connected node-redis v6 client, `createClient()` or `createCluster()`. Required. */
  client: RedisClient;
  /** Prepended to every key, so several stores (and other data) share one Redis without meeting. */
  prefix?: string;
  /**
   * The longest a command may take, in milliseconds, before its promise
   * rejects: an unreachable or unresponsive Redis then fails a request
   * quickly (callers answer 503) instead of hanging it. Default: `500`.
   */
  commandTimeoutMs?: number;
}

/** The default command time-out of every Redis store, in milliseconds. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 500;

const MAX_COMMAND_TIMEOUT_MS = 60_000;

/** A command that got no answer within the store's `commandTimeoutMs`. */
export class RedisTimeoutError extends StoreUnavailableError {
  override readonly name = 'RedisTimeoutError';
}

// `redis` is an optional peer dependency: the message says how to get a client.
const CLIENT_EXPECTED =
  'a connected node-redis v6 client: install the `redis` package (`npm install redis`), create one with its createClient() or createCluster(), call connect() and pass it as `client`';

const isCluster = (client: RedisClient): client is RedisClusterClient =>
  Array.isArray((client as Partial<RedisClusterClient>).masters);

/**
 * Sends commands for one store: each one with node-redis's own `timeout`
 * (which also drops a command still queued while the client reconnects) and
 * a deadline of the same length of our own, so no code path of the client
 * (cluster slot discovery, a black-holed socket) can hold a request longer.
 */
export class RedisConnection {
  readonly owner: string;
  readonly prefix: string;
  readonly commandTimeoutMs: number;
  readonly cluster: boolean;
  readonly #client: RedisClient;
  readonly #options: RedisCommandOptions;

  constructor(owner: string, client: RedisClient, prefix: string, commandTimeoutMs: number) {
    this.owner = owner;
    this.#client = client;
    this.prefix = prefix;
    this.commandTimeoutMs = commandTimeoutMs;
    this.cluster = isCluster(client);
    this.#options = { timeout: commandTimeoutMs };
  }

  /**
   * Sends one command. `key` is the key that decides the hash slot (on a
   * cluster the command goes to the node that holds it): every key the
   * command touches must share that slot. Rejects with a
   * StoreUnavailableError (a RedisTimeoutError when the deadline passed),
   * the client's error as its `cause`.
   */
  send(key: string, args: string[]): Promise<unknown> {
    const client = this.#client;
    let reply: Promise<unknown>;
    try {
      reply = this.cluster
        ? (client as RedisClusterClient).sendCommand(key, false, args, this.#options)
        : (client as RedisSingleClient).sendCommand(args, this.#options);
    } catch (cause) {
      reply = Promise.reject(cause);
    }
    // One promise and one timer per command: the client's answer or the
    // deadline, whichever comes first (no race of promises, docs/performance.md).
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(this.#timedOut(args)), this.commandTimeoutMs);
      reply.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (cause: unknown) => {
          clearTimeout(timer);
          reject(this.failed(args[0], cause));
        },
      );
    });
  }

  /** The error of a `command` Redis failed (an error reply, a lost connection), the client's error as its `cause`. */
  failed(command: string | undefined, cause: unknown): StoreUnavailableError {
    const why = cause instanceof Error ? cause.message : String(cause);
    return new StoreUnavailableError(this.owner, `${this.owner}: Redis failed ${command ?? ''}: ${why}`, { cause });
  }

  #timedOut(args: readonly string[]): RedisTimeoutError {
    const message = `${this.owner}: Redis did not answer ${args[0] ?? ''} within ${this.commandTimeoutMs} ms.`;
    return new RedisTimeoutError(this.owner, message);
  }
}

/** What node-redis says of a client's connection (both getters exist on `createClient()` and `createCluster()`). */
interface ClientState {
  readonly isOpen?: unknown;
  readonly isReady?: unknown;
  readonly options?: { readonly disableOfflineQueue?: unknown };
}

/**
 * A client that can never answer is refused at start-up, not at the first
 * request: one whose connect() was never called (or that was closed) fails
 * every command with "The client is closed", and one still connecting
 * without its offline queue fails every command until it is ready. A client
 * still connecting with its queue (node-redis's default) is taken: its
 * commands wait for the connection, each bounded by `commandTimeoutMs`.
 */
function checkClientOpen(factory: string, client: RedisClient): void {
  const state = client as ClientState;
  const closed = state.isOpen === false;
  if (!closed && !(state.isReady === false && state.options?.disableOfflineQueue === true)) return;
  const problem = closed
    ? 'must be a connected node-redis client; received one that is not connected (connect() was never called, or it was closed). Call `await client.connect()` before building the store and the routers given it, and keep the client open while they serve.'
    : 'must be a ready node-redis client; received one still connecting, with `disableOfflineQueue`, so every command fails until it is ready. Build the store after `await client.connect()` resolves, or keep the offline queue on.';
  throw new ConfigurationError('EAC_OPTION_INVALID', `${factory}(options): \`client\` ${problem}`, { option: 'client', problem });
}

/**
 * Reads a Redis store's options at construction (a wrong one throws
 * ConfigurationError): `client`, `prefix` (default `defaultPrefix`),
 * `commandTimeoutMs` (default 500), and the store's own `extraNames`.
 */
export function readRedisOptions<T extends RedisStoreOptions>(
  factory: string,
  options: unknown,
  defaultPrefix: string,
  extraNames: readonly string[] = [],
): { connection: RedisConnection; given: Partial<T> } {
  const given = readOptions<T>(
    factory,
    options as Readonly<T> | undefined,
    ['client', 'prefix', 'commandTimeoutMs', ...extraNames] as readonly (keyof T & string)[],
  );
  const client = given.client as Partial<RedisSingleClient> | undefined;
  if (typeof client !== 'object' || client === null || typeof client.sendCommand !== 'function') {
    invalidOption(factory, 'client', client, CLIENT_EXPECTED);
  }
  checkClientOpen(factory, client as RedisClient);
  const prefix = given.prefix === undefined ? defaultPrefix : checkString(factory, 'prefix', given.prefix);
  const timeout = checkInteger(factory, 'commandTimeoutMs', given.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS, {
    min: 1,
    max: MAX_COMMAND_TIMEOUT_MS,
  });
  return { connection: new RedisConnection(factory, client as RedisClient, prefix, timeout), given };
}
