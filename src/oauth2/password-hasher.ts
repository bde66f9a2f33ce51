import { createHmac } from 'node:crypto';
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

/**
 * bcrypt reads at most this many bytes of its input: two passwords that share
 * their first 72 UTF-8 bytes are one password to it.
 */
export const BCRYPT_MAX_INPUT_BYTES = 72;

/**
 * The start of every hash made by hashPassword(): the version of the scheme,
 * then an ordinary bcrypt hash (`$2b$12$…`) of the password's pre-hash. A
 * stored hash without it is a plain bcrypt hash of the password itself
 * (made before this scheme, or by another tool) and is still verified.
 */
export const PREHASHED_BCRYPT_PREFIX = '$eac-bcrypt-sha384$v=1';

// A fixed key, not a secret: it only makes the pre-hash differ from a plain
// SHA-384 of the password, so a leaked unsalted SHA-384 list elsewhere cannot
// be tried against these bcrypt hashes directly.
const PREHASH_KEY = 'express-api-conventions password pre-hash v1';

/**
 * What bcrypt is given for a password: HMAC-SHA-384 of all its UTF-8 bytes,
 * base64 (64 ASCII characters). Every byte of a password of any length counts,
 * the input fits bcrypt's 72 bytes, and it holds no NUL byte (which some
 * bcrypt implementations stop at); the 384 bits exceed what bcrypt keeps.
 */
function prehash(password: string): string {
  return createHmac('sha384', PREHASH_KEY).update(password, 'utf8').digest('base64');
}

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

  /**
   * A hash of `password` at `cost` (default: the pool's cost): PREHASHED_BCRYPT_PREFIX
   * followed by the bcrypt hash of the password's pre-hash, so every byte of a
   * password of any length counts (bcrypt alone reads 72).
   */
  hash(password: string, cost: number = this.cost): Promise<string> {
    // Thrown now, not as a rejection: a wrong cost is a programming error.
    checkInteger('PasswordHasher.hash', 'cost', cost, BCRYPT_COST_RANGE);
    return this.#run({ id: this.#nextId++, op: 'hash', password: prehash(password), cost }).then(
      (bcryptHash) => `${PREHASHED_BCRYPT_PREFIX}${bcryptHash as string}`,
    );
  }

  /**
   * Whether `password` matches `hash` (one of hash(), or a plain bcrypt hash);
   * a malformed hash never matches. A plain bcrypt hash never matches a
   * password over 72 bytes: bcrypt would compare only its first 72, and two
   * different passwords must never be taken for one. That refusal costs the
   * same comparison as any other, so the time does not tell the kind of hash.
   */
  async verify(password: string, hash: string): Promise<boolean> {
    const prehashed = hash.startsWith(PREHASHED_BCRYPT_PREFIX);
    const task: Task = prehashed
      ? { id: this.#nextId++, op: 'compare', password: prehash(password), hash: hash.slice(PREHASHED_BCRYPT_PREFIX.length) }
      : { id: this.#nextId++, op: 'compare', password, hash };
    const matches = (await this.#run(task)) === true;
    return matches && (prehashed || Buffer.byteLength(password, 'utf8') <= BCRYPT_MAX_INPUT_BYTES);
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
 * A password hash for a user store, computed off the event loop (bcrypt of the
 * password's pre-hash, see PasswordHasher.hash()):
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
