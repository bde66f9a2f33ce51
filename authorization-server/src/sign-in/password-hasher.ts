import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ApiError } from 'express-api-conventions/errors';
import { checkInteger, readOptions } from 'express-api-conventions/extend';
import { packageError } from '../error-entries.js';
import {
  bcryptInput,
  formatPasswordHash,
  needsRehash,
  PASSWORD_HASH_VERSION,
  PLAIN_BCRYPT_VERSION,
  parsePasswordHash,
} from './password-hash-format.js';
import { deadlineReached } from './request-deadline.js';

/**
 * bcrypt off the event loop (docs/design.md principle 6). bcryptjs is pure
 * JavaScript: measured here, 8 concurrent cost-12 compares through its async
 * API stall the event loop 670–810 ms, in a two-thread worker pool under
 * 10 ms. So every hash and compare runs in a small pool of worker threads.
 *
 * The threads run password-worker.cjs, found beside this module: the build
 * copies it next to dist/cjs's password-hasher.js (which dist/esm's wrappers
 * re-export), and under ts-jest it sits next to this source. What a stored
 * hash holds is password-hash-format.ts's concern; this module only runs bcrypt.
 */

/** bcrypt cost used when none is given: 2^12 rounds, ~330 ms per hash here (OWASP: at least 10). */
export const DEFAULT_BCRYPT_COST = 12;
/** Default bound on the expected wait for a thread: a sign-in answered later than this is worse than a quick "retry later". */
export const DEFAULT_MAX_HASH_WAIT_MS = 5000;

/** bcrypt's own bounds for the cost factor. */
export const BCRYPT_COST_RANGE = { min: 4, max: 31 } as const;

/**
 * bcrypt reads at most this many bytes of its input: two passwords that share
 * their first 72 UTF-8 bytes are one password to it.
 */
export const BCRYPT_MAX_INPUT_BYTES = 72;

type Task =
  | { readonly id: number; readonly op: 'hash'; readonly password: string; readonly cost: number }
  | { readonly id: number; readonly op: 'compare'; readonly password: string; readonly hash: string };

interface Pending {
  readonly task: Task;
  readonly key: string;
  readonly resolve: (value: string | boolean) => void;
  readonly reject: (error: Error) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
  /** Drops the task when its deadline comes while it still waits. */
  timer?: NodeJS.Timeout;
  readonly onStarted: (() => void) | undefined;
}

/** Whose work a hash or a comparison is, and whether it is still wanted. */
export interface PasswordTaskOptions {
  /**
   * Whose work this is, such as the client address of a sign-in: waiting
   * work is served one task per key in turn, keys whose last comparison
   * failed within FAILED_KEY_MEMORY_MS after the others, so a flood under
   * other keys delays this key's task by a few tasks, not by the flood.
   * Default: `''` (one key for all).
   */
  key?: string;
  /** When it aborts while the task still waits (the client went away), the task is dropped unrun and rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * When the task must be done by (performance.now() milliseconds), such as
   * a sign-in's deadline counted from its request's arrival: refused at once
   * (429 `signInQueueFull` or 503 `signInBusy`, with `Retry-After`) when its
   * expected wait plus one and a half task times would end later (a pool
   * with an idle thread and nothing waiting runs it unless the deadline has
   * passed), and
   * dropped unrun with a 503 if it still waits when only that much is left.
   * Default: none (only `maxWaitMs` bounds the wait).
   */
  deadline?: number;
  /**
   * Called when a thread starts the task, so that the caller can measure
   * its wait for the pool (a sign-in's `poolWaitMs`, docs/observability.md)
   * only when it wants it. Default: none.
   */
  onStarted?: () => void;
}

/** What the pool has done and holds now (counts since it was made). */
export interface PasswordHasherStats {
  /** Tasks waiting for a thread. */
  readonly queued: number;
  /** Tasks on a thread now. */
  readonly running: number;
  /** Tasks a thread finished. */
  readonly completed: number;
  /** Tasks dropped unrun because their signal aborted (the client went away). */
  readonly dropped: number;
  /** Tasks refused at once because their expected wait exceeded `maxWaitMs`. */
  readonly refused: number;
  /** The recent average time of one task on a thread, in ms (undefined before the first). */
  readonly averageTaskMs: number | undefined;
}

interface Reply {
  readonly id: number;
  readonly result?: string | boolean;
  readonly error?: string;
}

interface PoolWorker {
  readonly worker: Worker;
  current: Pending | undefined;
  startedAt: number;
}

/**
 * The file this module was loaded from, read from the V8 call-site API, so
 * that one source works as ESM (a file: URL) and as CommonJS (a path).
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

let workerFile: URL | undefined;
/** password-worker.cjs, beside this module. */
function workerLocation(): URL {
  if (workerFile === undefined) {
    const from = ownLocation() ?? `${process.cwd()}/`;
    workerFile = new URL('./password-worker.cjs', from.startsWith('file:') ? from : pathToFileURL(from));
  }
  return workerFile;
}

export interface PasswordHasherOptions {
  /** Worker threads in the pool. Default: 2, or 1 on a one-core machine. */
  threads?: number;
  /** bcrypt cost of new hashes (4–31). Default: 12. */
  cost?: number;
  /**
   * Longest expected wait for a thread, in ms (100 to 600000). A task whose
   * expected wait (the tasks served before it, from the recent time per task)
   * is longer is refused at once with a `Retry-After`: 429 `signInQueueFull`
   * when the wait is its key's own excess (a task of a new key would be served
   * in time), else 503 `signInBusy`. Default: 5000.
   */
  maxWaitMs?: number;
}

const OPTION_NAMES = ['threads', 'cost', 'maxWaitMs'] as const;

/** Weight of the newest task in the average time per task. */
const AVERAGE_WEIGHT = 0.2;
/** How long a key whose comparison failed waits behind keys without failures (a success clears it at once). */
export const FAILED_KEY_MEMORY_MS = 60_000;
/** Keys remembered for failures before the ended ones are swept. */
const FAILED_KEYS_SWEEP_AT = 10_000;

/**
 * A pool of worker threads that hashes and verifies passwords with bcryptjs.
 * Threads start on first use; they do not keep the process alive while idle.
 */
export class PasswordHasher {
  /** The bcrypt cost of new hashes. */
  readonly cost: number;
  /** The bound on the expected wait for a thread, in ms. */
  readonly maxWaitMs: number;
  readonly #size: number;
  readonly #workers: PoolWorker[] = [];
  // Waiting tasks, one FIFO per key, and the keys in the order they are served (round robin):
  // keys without a recent failed comparison first, then the others.
  readonly #queues = new Map<string, Pending[]>();
  readonly #cleanTurns: string[] = [];
  readonly #failedTurns: string[] = [];
  // Key → when its last comparison failed.
  readonly #failedAt = new Map<string, number>();
  #queued = 0;
  #nextId = 1;
  #closed = false;
  #completed = 0;
  #dropped = 0;
  #refused = 0;
  #averageMs: number | undefined;

  constructor(options?: Readonly<PasswordHasherOptions>) {
    const given = readOptions<PasswordHasherOptions>('PasswordHasher', options, OPTION_NAMES);
    this.#size =
      given.threads === undefined
        ? Math.min(2, availableParallelism())
        : checkInteger('PasswordHasher', 'threads', given.threads, { min: 1, max: 64 });
    this.cost =
      given.cost === undefined ? DEFAULT_BCRYPT_COST : checkInteger('PasswordHasher', 'cost', given.cost, BCRYPT_COST_RANGE);
    this.maxWaitMs =
      given.maxWaitMs === undefined
        ? DEFAULT_MAX_HASH_WAIT_MS
        : checkInteger('PasswordHasher', 'maxWaitMs', given.maxWaitMs, { min: 100, max: 600_000 });
  }

  /** What the pool has done and holds now. */
  get stats(): PasswordHasherStats {
    return {
      queued: this.#queued,
      running: this.#workers.filter((entry) => entry.current !== undefined).length,
      completed: this.#completed,
      dropped: this.#dropped,
      refused: this.#refused,
      averageTaskMs: this.#averageMs,
    };
  }

  /**
   * A hash of `password` at `cost` (default: the pool's cost), in today's
   * version of the stored format (docs/password-hashes.md): bcrypt of the
   * password's pre-hash, so every byte of a password of any length counts
   * (bcrypt alone reads 72).
   */
  hash(password: string, cost: number = this.cost, options: Readonly<PasswordTaskOptions> = {}): Promise<string> {
    // Thrown now, not as a rejection: a wrong cost is a programming error.
    checkInteger('PasswordHasher.hash', 'cost', cost, BCRYPT_COST_RANGE);
    const task: Task = { id: this.#nextId++, op: 'hash', password: bcryptInput(password, PASSWORD_HASH_VERSION), cost };
    return this.#run(task, options).then((bcryptHash) => formatPasswordHash(bcryptHash as string));
  }

  /**
   * Whether `password` matches `hash` (any version of hash(), or a plain
   * bcrypt hash `$2a$`, `$2b$`, `$2y$`); a malformed hash never matches. A
   * plain bcrypt hash never matches a password over 72 bytes: bcrypt would
   * compare only its first 72, and two different passwords must never be
   * taken for one. That refusal costs the same comparison as any other, so
   * the time does not tell the kind of hash.
   */
  async verify(password: string, hash: string, options: Readonly<PasswordTaskOptions> = {}): Promise<boolean> {
    const parts = parsePasswordHash(hash);
    if (parts === undefined) {
      // Unreadable: it waits its turn like any other, then bcryptjs answers false for an empty hash (it never throws).
      await this.#run({ id: this.#nextId++, op: 'compare', password, hash: '' }, options);
      return false;
    }
    const task: Task = { id: this.#nextId++, op: 'compare', password: bcryptInput(password, parts.version), hash: parts.bcrypt };
    const matches = (await this.#run(task, options)) === true;
    return matches && (parts.version !== PLAIN_BCRYPT_VERSION || Buffer.byteLength(password, 'utf8') <= BCRYPT_MAX_INPUT_BYTES);
  }

  /**
   * Whether `hash` should be replaced at the next successful sign-in: an
   * older format version, a plain bcrypt hash, or a cost below `cost`
   * (default: the pool's cost). A malformed hash is not: it never matches.
   */
  needsRehash(hash: string, cost: number = this.cost): boolean {
    return needsRehash(hash, cost);
  }

  /** Stops the threads; pending work is rejected. The pool can not be used afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    const stopped = new Error('The password hasher was closed');
    for (const pending of this.#takeAll()) pending.reject(stopped);
    const workers = this.#workers.splice(0);
    for (const entry of workers) entry.current?.reject(stopped);
    await Promise.all(workers.map((entry) => entry.worker.terminate()));
  }

  #run(task: Task, options: Readonly<PasswordTaskOptions>): Promise<string | boolean> {
    if (this.#closed) return Promise.reject(new Error('The password hasher was closed'));
    const { key = '', signal } = options;
    if (signal?.aborted) {
      this.#dropped++;
      return Promise.reject(signal.reason);
    }
    const refusal = this.#refusal(key, options.deadline);
    if (refusal) {
      this.#refused++;
      return Promise.reject(refusal);
    }
    return new Promise((resolve, reject) => {
      const onAbort = signal
        ? () => {
            clearTimeout(pending.timer);
            if (this.#remove(pending)) {
              this.#dropped++;
              reject(signal.reason);
            }
          }
        : undefined;
      const pending: Pending = { task, key, resolve, reject, signal, onAbort, onStarted: options.onStarted };
      if (onAbort) signal?.addEventListener('abort', onAbort, { once: true });
      if (options.deadline !== undefined) pending.timer = this.#dropAtDeadline(pending, options.deadline);
      let queue = this.#queues.get(key);
      if (!queue) {
        queue = [];
        this.#queues.set(key, queue);
        this.#turnsOf(key).push(key);
      }
      queue.push(pending);
      this.#queued++;
      this.#dispatch();
    });
  }

  /** Whether `key`'s last comparison failed within FAILED_KEY_MEMORY_MS. */
  #hasFailed(key: string): boolean {
    const at = this.#failedAt.get(key);
    if (at === undefined) return false;
    if (performance.now() - at < FAILED_KEY_MEMORY_MS) return true;
    this.#failedAt.delete(key);
    return false;
  }

  #turnsOf(key: string): string[] {
    return this.#hasFailed(key) ? this.#failedTurns : this.#cleanTurns;
  }

  #remember(key: string, matched: boolean): void {
    if (matched) {
      this.#failedAt.delete(key);
      return;
    }
    if (this.#failedAt.size >= FAILED_KEYS_SWEEP_AT) {
      const now = performance.now();
      for (const [known, at] of this.#failedAt) if (now - at >= FAILED_KEY_MEMORY_MS) this.#failedAt.delete(known);
    }
    this.#failedAt.set(key, performance.now());
  }

  /**
   * The refusal of a new task of `key` when its expected wait exceeds the
   * bound, else undefined. Served in turn, it waits for its key's own queue
   * and, of every other key in its lane, for as many tasks as one more than
   * that; a key with a recent failure also waits for every task of the keys
   * without one.
   */
  #refusal(key: string, deadline?: number): ApiError | undefined {
    // The bound: maxWaitMs, or less when the task's deadline leaves less time for the wait and the task itself.
    const now = performance.now();
    // An idle pool runs the task whatever the average says (docs/oauth2-token.md#sign-in-under-load): a refusal
    // measures nothing, so an estimate that refused while the pool sat idle would never come down.
    if (this.#queued === 0 && this.#hasIdleThread())
      return deadline === undefined || deadline > now ? undefined : deadlineReached();
    const bound = deadline === undefined ? this.maxWaitMs : Math.min(this.maxWaitMs, deadline - now - this.#taskReserveMs());
    // Before the first task is measured, the oldest running task's time so far is a lower bound.
    const perTask = this.#averageMs ?? this.#longestRunningMs();
    const failed = this.#hasFailed(key);
    const own = this.#queues.get(key)?.length ?? 0;
    let ahead = own;
    let aheadOfAFreshKey = 0;
    // A key still in the clean lane that has failed since is moved at its turn (#next): it counts as failed.
    for (const other of [...this.#cleanTurns, ...this.#failedTurns]) {
      if (other === key) continue;
      const tasks = this.#queues.get(other)?.length ?? 0;
      const otherFailed = this.#hasFailed(other);
      if (failed && !otherFailed) {
        ahead += tasks;
        aheadOfAFreshKey += tasks;
      } else if (failed === otherFailed) {
        ahead += Math.min(tasks, own + 1);
        aheadOfAFreshKey += Math.min(tasks, 1);
      }
    }
    const waitFor = (tasks: number) => (tasks / this.#size + 0.5) * perTask;
    const wait = waitFor(ahead);
    if (wait <= bound) return undefined;
    const freshWait = waitFor(aheadOfAFreshKey);
    // A task of a key like this one with nothing queued would be served in time: the wait is this key's own excess.
    if (freshWait <= bound) {
      return packageError('signInQueueFull', { headers: { 'Retry-After': String(Math.max(1, Math.ceil(wait / 1000))) } });
    }
    return packageError('signInBusy', { headers: { 'Retry-After': String(Math.max(1, Math.ceil(freshWait / 1000))) } });
  }

  /** The time kept before a deadline for the task itself: one and a half recent task times (a loaded machine runs slower). */
  #taskReserveMs(): number {
    return 1.5 * (this.#averageMs ?? 0);
  }

  /** A timer that drops `pending`, still waiting, when only one task's time is left before `deadline`. */
  #dropAtDeadline(pending: Pending, deadline: number): NodeJS.Timeout {
    const timer = setTimeout(
      () => {
        if (!this.#remove(pending)) return;
        if (pending.onAbort) pending.signal?.removeEventListener('abort', pending.onAbort);
        this.#dropped++;
        pending.reject(deadlineReached(((this.#averageMs ?? 0) * (this.#queued / this.#size + 1)) / 1000));
      },
      Math.max(0, deadline - performance.now() - this.#taskReserveMs()),
    );
    timer.unref();
    return timer;
  }

  #hasIdleThread(): boolean {
    return this.#workers.length < this.#size || this.#workers.some((entry) => entry.current === undefined);
  }

  #longestRunningMs(): number {
    const now = performance.now();
    let longest = 0;
    for (const entry of this.#workers) if (entry.current) longest = Math.max(longest, now - entry.startedAt);
    return longest;
  }

  /** Takes a waiting task out of its queue; false when it is no longer waiting. */
  #remove(pending: Pending): boolean {
    const queue = this.#queues.get(pending.key);
    const index = queue ? queue.indexOf(pending) : -1;
    if (!queue || index === -1) return false;
    queue.splice(index, 1);
    this.#queued--;
    if (queue.length === 0) {
      this.#queues.delete(pending.key);
      for (const turns of [this.#cleanTurns, this.#failedTurns]) {
        const at = turns.indexOf(pending.key);
        if (at !== -1) turns.splice(at, 1);
      }
    }
    return true;
  }

  /** The next waiting task, one key after the other, keys without a recent failure first. */
  #next(): Pending | undefined {
    let key = this.#cleanTurns.shift();
    // A key that failed while it waited in the clean lane goes behind the clean keys now.
    while (key !== undefined && this.#hasFailed(key)) {
      this.#failedTurns.push(key);
      key = this.#cleanTurns.shift();
    }
    key ??= this.#failedTurns.shift();
    if (key === undefined) return undefined;
    const queue = this.#queues.get(key) as Pending[];
    const pending = queue.shift() as Pending;
    this.#queued--;
    // Back in line, in the lane its latest result puts it in.
    if (queue.length > 0) this.#turnsOf(key).push(key);
    else this.#queues.delete(key);
    if (pending.onAbort) pending.signal?.removeEventListener('abort', pending.onAbort);
    clearTimeout(pending.timer);
    return pending;
  }

  #takeAll(): Pending[] {
    const all: Pending[] = [];
    for (let pending = this.#next(); pending; pending = this.#next()) all.push(pending);
    return all;
  }

  #dispatch(): void {
    while (this.#queued > 0) {
      let idle: PoolWorker | undefined;
      try {
        idle = this.#workers.find((entry) => entry.current === undefined) ?? this.#spawn();
      } catch (error) {
        // No thread can start (bcryptjs not found, say): fail what waits, do not hang it.
        for (const pending of this.#takeAll()) pending.reject(error as Error);
        return;
      }
      if (!idle) return;
      const pending = this.#next() as Pending;
      idle.current = pending;
      idle.startedAt = performance.now();
      pending.onStarted?.();
      // Referenced while busy, so that `await hasher.hash(...)` in a script
      // keeps the process alive until the answer comes back.
      idle.worker.ref();
      idle.worker.postMessage(pending.task);
    }
  }

  #spawn(): PoolWorker | undefined {
    if (this.#workers.length >= this.#size) return undefined;
    // No inherited flags: the thread needs none, and a parent's `--require` or `--import` would run in every thread.
    const worker = new Worker(workerLocation(), { execArgv: [] });
    const entry: PoolWorker = { worker, current: undefined, startedAt: 0 };
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const pending = entry.current;
      entry.current = undefined;
      worker.unref();
      if (pending && pending.task.id === reply.id) {
        const took = performance.now() - entry.startedAt;
        this.#averageMs = this.#averageMs === undefined ? took : this.#averageMs + AVERAGE_WEIGHT * (took - this.#averageMs);
        this.#completed++;
        if (pending.task.op === 'compare' && reply.error === undefined) this.#remember(pending.key, reply.result === true);
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
  options: Readonly<{ cost?: number; hasher?: PasswordHasher } & PasswordTaskOptions> = {},
): Promise<string> {
  const hasher = options.hasher ?? defaultPasswordHasher();
  return hasher.hash(password, options.cost ?? hasher.cost, options);
}

/** Whether `password` matches `hash`, off the event loop (the shared pool unless one is given). */
export function verifyPassword(
  password: string,
  hash: string,
  hasher: PasswordHasher = defaultPasswordHasher(),
  options: Readonly<PasswordTaskOptions> = {},
): Promise<boolean> {
  return hasher.verify(password, hash, options);
}
