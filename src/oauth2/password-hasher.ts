import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { checkInteger, readOptions } from '../config/options.js';

/**
 * bcrypt off the event loop (DESIGN.md principle 6). bcryptjs is pure
 * JavaScript: measured here, 8 concurrent cost-12 compares through its async
 * API stall the event loop 670–810 ms, in a two-thread worker pool under
 * 10 ms. So every hash and compare runs in a small pool of worker threads.
 *
 * The worker's source is a string run with `eval: true`, not a file: the same
 * code then works from the ESM build (dist/esm), the CommonJS build
 * (dist/cjs) and from ts-jest running src/*.ts, with no worker file to find
 * beside the compiled module. The worker loads bcryptjs from the absolute
 * path the main thread resolved from this package's own location.
 */

/** bcrypt cost used when none is given: 2^12 rounds, ~330 ms per hash here (OWASP: at least 10). */
export const DEFAULT_BCRYPT_COST = 12;
/** bcrypt's own bounds for the cost factor. */
export const BCRYPT_COST_RANGE = { min: 4, max: 31 } as const;

const WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcryptPath);
parentPort.on('message', (task) => {
  try {
    const result =
      task.op === 'hash' ? bcrypt.hashSync(task.password, task.cost) : bcrypt.compareSync(task.password, task.hash);
    parentPort.postMessage({ id: task.id, result });
  } catch (error) {
    parentPort.postMessage({ id: task.id, error: String(error && error.message ? error.message : error) });
  }
});
`;

type Task =
  | { readonly id: number; readonly op: 'hash'; readonly password: string; readonly cost: number }
  | { readonly id: number; readonly op: 'compare'; readonly password: string; readonly hash: string };

interface Pending {
  readonly task: Task;
  readonly resolve: (value: string | boolean) => void;
  readonly reject: (error: Error) => void;
}

interface Reply {
  readonly id: number;
  readonly result?: string | boolean;
  readonly error?: string;
}

interface PoolWorker {
  readonly worker: Worker;
  current: Pending | undefined;
}

/**
 * The file this module was loaded from, read from the V8 call-site API, so
 * that one source works as ESM (a file: URL) and as CommonJS (a path). Used
 * only to resolve bcryptjs the way this package itself would.
 */
function ownLocation(): string | undefined {
  const original = Error.prepareStackTrace;
  try {
    Error.prepareStackTrace = (_error, sites) => sites;
    const holder: { stack?: unknown } = {};
    Error.captureStackTrace(holder, ownLocation);
    const sites = holder.stack as NodeJS.CallSite[] | undefined;
    return sites?.[0]?.getFileName() ?? undefined;
  } finally {
    Error.prepareStackTrace = original;
  }
}

let bcryptPath: string | undefined;
function resolveBcrypt(): string {
  if (bcryptPath === undefined) {
    const from = ownLocation() ?? `${process.cwd()}/`;
    bcryptPath = createRequire(from).resolve('bcryptjs');
  }
  return bcryptPath;
}

export interface PasswordHasherOptions {
  /** Worker threads in the pool. Default: 2, or 1 on a one-core machine. */
  threads?: number;
  /** bcrypt cost of new hashes (4–31). Default: 12. */
  cost?: number;
}

const OPTION_NAMES = ['threads', 'cost'] as const;

/**
 * A pool of worker threads that hashes and verifies passwords with bcryptjs.
 * Threads start on first use; they do not keep the process alive while idle.
 */
export class PasswordHasher {
  /** The bcrypt cost of new hashes. */
  readonly cost: number;
  readonly #size: number;
  readonly #workers: PoolWorker[] = [];
  readonly #queue: Pending[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options?: Readonly<PasswordHasherOptions>) {
    const given = readOptions<PasswordHasherOptions>('PasswordHasher', options, OPTION_NAMES);
    this.#size =
      given.threads === undefined
        ? Math.min(2, availableParallelism())
        : checkInteger('PasswordHasher', 'threads', given.threads, { min: 1, max: 64 });
    this.cost =
      given.cost === undefined ? DEFAULT_BCRYPT_COST : checkInteger('PasswordHasher', 'cost', given.cost, BCRYPT_COST_RANGE);
  }

  /** A bcrypt hash of `password` at `cost` (default: the pool's cost). */
  hash(password: string, cost: number = this.cost): Promise<string> {
    checkInteger('PasswordHasher.hash', 'cost', cost, BCRYPT_COST_RANGE);
    return this.#run({ id: this.#nextId++, op: 'hash', password, cost }) as Promise<string>;
  }

  /** Whether `password` matches the bcrypt `hash`; a malformed hash never matches. */
  async verify(password: string, hash: string): Promise<boolean> {
    return (await this.#run({ id: this.#nextId++, op: 'compare', password, hash })) === true;
  }

  /** Stops the threads; pending work is rejected. The pool can not be used afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    const stopped = new Error('The password hasher was closed');
    for (const pending of this.#queue.splice(0)) pending.reject(stopped);
    const workers = this.#workers.splice(0);
    for (const entry of workers) entry.current?.reject(stopped);
    await Promise.all(workers.map((entry) => entry.worker.terminate()));
  }

  #run(task: Task): Promise<string | boolean> {
    if (this.#closed) return Promise.reject(new Error('The password hasher was closed'));
    return new Promise((resolve, reject) => {
      this.#queue.push({ task, resolve, reject });
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      let idle: PoolWorker | undefined;
      try {
        idle = this.#workers.find((entry) => entry.current === undefined) ?? this.#spawn();
      } catch (error) {
        // No thread can start (bcryptjs not found, say): fail what waits, do not hang it.
        for (const pending of this.#queue.splice(0)) pending.reject(error as Error);
        return;
      }
      if (!idle) return;
      const pending = this.#queue.shift() as Pending;
      idle.current = pending;
      // Referenced while busy, so that `await hasher.hash(...)` in a script
      // keeps the process alive until the answer comes back.
      idle.worker.ref();
      idle.worker.postMessage(pending.task);
    }
  }

  #spawn(): PoolWorker | undefined {
    if (this.#workers.length >= this.#size) return undefined;
    // No inherited flags: `--input-type=module` would make the source ESM.
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [], workerData: { bcryptPath: resolveBcrypt() } });
    const entry: PoolWorker = { worker, current: undefined };
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const pending = entry.current;
      entry.current = undefined;
      worker.unref();
      if (pending && pending.task.id === reply.id) {
        if (reply.error === undefined) pending.resolve(reply.result as string | boolean);
        else pending.reject(new Error(`bcrypt failed: ${reply.error}`));
      }
      this.#dispatch();
    });
    const fail = (error: Error) => {
      const index = this.#workers.indexOf(entry);
      if (index !== -1) this.#workers.splice(index, 1);
      entry.current?.reject(error);
      entry.current = undefined;
      if (!this.#closed) this.#dispatch();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`password worker exited with code ${code}`)));
    this.#workers.push(entry);
    return entry;
  }
}

let sharedHasher: PasswordHasher | undefined;

/** The process-wide pool used when no `passwordHasher` is given (created on first use). */
export function defaultPasswordHasher(): PasswordHasher {
  sharedHasher ??= new PasswordHasher();
  return sharedHasher;
}

/**
 * A bcrypt hash for a user store, computed off the event loop:
 * `await hashPassword('s3cret')` (cost 12) or `hashPassword(p, { cost: 10 })`.
 */
export function hashPassword(
  password: string,
  options: Readonly<{ cost?: number; hasher?: PasswordHasher }> = {},
): Promise<string> {
  const hasher = options.hasher ?? defaultPasswordHasher();
  return hasher.hash(password, options.cost ?? hasher.cost);
}

/** Whether `password` matches `hash`, off the event loop (the shared pool unless one is given). */
export function verifyPassword(
  password: string,
  hash: string,
  hasher: PasswordHasher = defaultPasswordHasher(),
): Promise<boolean> {
  return hasher.verify(password, hash);
}
