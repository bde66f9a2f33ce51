import type { AdmitRefusal, Bound, RecordWrite, RecordWriteOutcome, SharedState } from './state.js';

interface Entry {
  value: string;
  expiresAt: number;
}

/** How often the memory state forgets what has expired, whether or not it is read again. */
export const SWEEP_INTERVAL_MS = 60_000;

/**
 * The shared state of a single instance, in this process's memory. Its
 * writes are atomic as RedisState's scripts are: each checks and writes with
 * no await in between, so nothing else runs meanwhile.
 */
export class MemoryState implements SharedState {
  private readonly values = new Map<string, Entry>();
  private readonly hashes = new Map<string, Map<string, string>>();
  private readonly bounded = new Map<string, Map<string, number>>();

  /**
   * Starts the sweep: expired entries (sessions, exports) are removed every
   * `intervalMs`, not only when read, so memory does not grow with entries
   * nobody asks for again. The timer does not keep the process alive.
   */
  constructor(intervalMs: number = SWEEP_INTERVAL_MS) {
    setInterval(() => this.sweep(), intervalMs).unref();
  }

  /** Removes every expired entry now; tells how many. */
  sweep(now = Date.now()): number {
    let removed = 0;
    for (const [key, entry] of this.values) {
      if (entry.expiresAt <= now) {
        this.values.delete(key);
        removed++;
      }
    }
    for (const [key, members] of this.bounded) {
      for (const [member, expiresAt] of members) {
        if (expiresAt <= now) {
          members.delete(member);
          removed++;
        }
      }
      // A caller's set goes with its last member: callers come and go.
      if (members.size === 0) this.bounded.delete(key);
    }
    return removed;
  }

  /** How many keys are held (expired ones not yet swept included). */
  get size(): number {
    return this.values.size;
  }

  async get(key: string): Promise<string | undefined> {
    const entry = this.values.get(key);
    if (entry && entry.expiresAt <= Date.now()) this.values.delete(key);
    return entry && entry.expiresAt > Date.now() ? entry.value : undefined;
  }

  async set(key: string, value: string, ttlSeconds?: number): Promise<void> {
    this.values.set(key, { value, expiresAt: ttlSeconds ? Date.now() + ttlSeconds * 1000 : Number.POSITIVE_INFINITY });
  }

  async setIfAbsent(key: string, value: string, ttlSeconds?: number): Promise<boolean> {
    if ((await this.get(key)) !== undefined) return false;
    await this.set(key, value, ttlSeconds);
    return true;
  }

  async delete(key: string): Promise<void> {
    this.values.delete(key);
  }

  private hash(key: string): Map<string, string> {
    let hash = this.hashes.get(key);
    if (!hash) {
      hash = new Map();
      this.hashes.set(key, hash);
    }
    return hash;
  }

  async hashGet(key: string, field: string): Promise<string | undefined> {
    return this.hashes.get(key)?.get(field);
  }

  async hashValues(key: string): Promise<string[]> {
    return [...(this.hashes.get(key)?.values() ?? [])];
  }

  async admit(key: string, member: string, expiresAt: number, limit: number): Promise<number | undefined> {
    return (await this.admitAll([{ key, limit }], member, expiresAt))?.freeAt;
  }

  // Every set is checked before any is written, with no await in between:
  // nothing else runs on the event loop meanwhile (as the Redis script).
  async admitAll(bounds: readonly Bound[], member: string, expiresAt: number): Promise<AdmitRefusal | undefined> {
    const now = Date.now();
    const sets: Map<string, number>[] = [];
    for (const [index, bound] of bounds.entries()) {
      let members = this.bounded.get(bound.key);
      if (!members) {
        members = new Map();
        this.bounded.set(bound.key, members);
      }
      let first = Number.POSITIVE_INFINITY;
      for (const [name, at] of members) {
        if (at <= now) members.delete(name);
        else first = Math.min(first, at);
      }
      if (members.size >= bound.limit) return { refusedBy: index, freeAt: first };
      sets.push(members);
    }
    for (const members of sets) members.set(member, expiresAt);
    return undefined;
  }

  // The same checks and writes as the Redis script, with no await in between:
  // nothing else runs on the event loop meanwhile.
  async writeRecord(write: RecordWrite): Promise<RecordWriteOutcome> {
    const records = this.hash(write.records);
    const claims = this.hash(write.claims);
    const current = records.get(write.id);
    if (current !== write.expected) return 'changed';
    for (const claim of write.take) {
      const owner = claims.get(claim);
      if (owner !== undefined && owner !== write.id) return 'claimTaken';
    }
    for (const claim of write.release) if (claims.get(claim) === write.id) claims.delete(claim);
    for (const claim of write.take) claims.set(claim, write.id);
    if (write.value === undefined) records.delete(write.id);
    else records.set(write.id, write.value);
    return 'written';
  }
}
