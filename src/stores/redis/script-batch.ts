import { setImmediate } from 'node:timers';
import { StoreUnavailableError } from '../store-error.js';
import type { RedisConnection } from './connection.js';
import { hashSlot } from './keys.js';
import type { RedisScript } from './script.js';

/**
 * One script run for the calls of many concurrent requests. Calls made in
 * one turn of the event loop (until its check phase, `setImmediate`) whose
 * keys lie in one hash slot are sent as one EVALSHA: its keys are the calls'
 * keys one call after the other, its arguments the ones every call shares;
 * the script answers `width` values per call,
 * in order. Redis runs a script alone, so the calls are taken exactly as one
 * script each, sent in that order, would take them; the batch saves the
 * command, the round trip and the script start per call (docs/performance.md,
 * "The Redis path").
 */
export interface ScriptBatchOptions<T> {
  readonly connection: RedisConnection;
  /** Its ARGV are `args`; the number of calls is its key count over the keys per call. */
  readonly script: RedisScript;
  /** The arguments every call shares. */
  readonly args: readonly string[];
  /** How many values the script answers per call. */
  readonly width: number;
  /** A call's answer from the script's reply and the index of the call's first value in it; throwing fails that call alone. */
  readonly read: (reply: readonly unknown[], offset: number) => T;
  /** The most calls one script takes; a fuller batch is sent at once. */
  readonly maxCalls: number;
}

interface Waiting<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

interface Batch<T> {
  readonly keys: string[];
  readonly waiting: Waiting<T>[];
}

export class ScriptBatch<T> {
  readonly #options: ScriptBatchOptions<T>;
  /** The open batches by hash slot (one, slot 0, on a single Redis). */
  readonly #open = new Map<number, Batch<T>>();
  #scheduled = false;

  constructor(options: ScriptBatchOptions<T>) {
    this.#options = options;
  }

  /** Adds one call over `keys` (they share one hash slot) to the batch of its slot. */
  call(keys: readonly string[]): Promise<T> {
    const { connection, maxCalls } = this.#options;
    const slot = connection.cluster ? hashSlot(keys[0] as string) : 0;
    let batch = this.#open.get(slot);
    if (batch === undefined) {
      batch = { keys: [], waiting: [] };
      this.#open.set(slot, batch);
    }
    for (const key of keys) batch.keys.push(key);
    const open = batch;
    const answer = new Promise<T>((resolve, reject) => open.waiting.push({ resolve, reject }));
    if (open.waiting.length >= maxCalls) {
      this.#open.delete(slot);
      this.#send(open);
    } else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#sendOpen);
    }
    return answer;
  }

  readonly #sendOpen = (): void => {
    this.#scheduled = false;
    for (const batch of this.#open.values()) this.#send(batch);
    this.#open.clear();
  };

  #send({ keys, waiting }: Batch<T>): void {
    const { connection, script, args, width, read } = this.#options;
    script.run(connection, keys as [string, ...string[]], args).then(
      (reply) => {
        if (!Array.isArray(reply) || reply.length !== waiting.length * width) {
          const error = new StoreUnavailableError(
            connection.owner,
            `${connection.owner}: Redis answered a batch of ${waiting.length} with ${Array.isArray(reply) ? `${reply.length} values` : typeof reply}, not ${waiting.length * width} values.`,
          );
          for (const one of waiting) one.reject(error);
          return;
        }
        const values = reply as unknown[];
        for (let i = 0; i < waiting.length; i++) {
          const one = waiting[i] as Waiting<T>;
          try {
            one.resolve(read(values, i * width));
          } catch (error) {
            one.reject(error);
          }
        }
      },
      (error: unknown) => {
        for (const one of waiting) one.reject(error);
      },
    );
  }
}
