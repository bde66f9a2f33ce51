import { createClient } from 'redis';

/**
 * The server's own shared state (users, exports, sessions): a few key and
 * hash operations, in memory for one instance, or in Redis so that several
 * instances behind one address act as one service. The library's stores
 * (rate-limit counters, refresh tokens) get the same Redis client.
 */
export interface SharedState {
  get(key: string): Promise<string | undefined>;
  /** Sets `key`; with `ttlSeconds` it is forgotten after that time. */
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  /** Sets `key` only when it is not set; tells whether it was. */
  setIfAbsent(key: string, value: string, ttlSeconds?: number): Promise<boolean>;
  delete(key: string): Promise<void>;
  hashGet(key: string, field: string): Promise<string | undefined>;
  hashValues(key: string): Promise<string[]>;
  hashSet(key: string, field: string, value: string): Promise<void>;
  /** Sets `field` only when it is not set; tells whether it was (unique keys across instances). */
  hashSetIfAbsent(key: string, field: string, value: string): Promise<boolean>;
  /** Deletes `field`; tells whether it was there. */
  hashDelete(key: string, field: string): Promise<boolean>;
}

const newClient = (url: string, connected: () => boolean) =>
  createClient({
    url,
    socket: {
      connectTimeout: 5000,
      // Once connected, reconnect for ever (a lasting outage shows as errors on the
      // requests that need Redis); before that, the first failure stops the start.
      reconnectStrategy: (retries: number, cause: Error) => (connected() ? Math.min(retries * 100, 2000) : cause),
    },
  });

export type RedisClient = ReturnType<typeof newClient>;

/** Connects to Redis, failing the start-up when it cannot be reached. */
export async function connectRedis(url: string): Promise<RedisClient> {
  let connected = false;
  const client = newClient(url, () => connected);
  client.on('error', (error: unknown) => {
    if (connected) process.stderr.write(`redis: ${error instanceof Error ? error.message : String(error)}\n`);
  });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`cannot reach Redis at ${url}: ${error instanceof Error ? error.message : String(error)}`);
  }
  connected = true;
  return client;
}

export class RedisState implements SharedState {
  constructor(
    private readonly client: RedisClient,
    private readonly prefix = 'reference-server:',
  ) {}

  async get(key: string): Promise<string | undefined> {
    return (await this.client.get(this.prefix + key)) ?? undefined;
  }

  async set(key: string, value: string, ttlSeconds?: number): Promise<void> {
    await this.client.set(this.prefix + key, value, ttlSeconds ? { expiration: { type: 'EX', value: ttlSeconds } } : undefined);
  }

  async setIfAbsent(key: string, value: string, ttlSeconds?: number): Promise<boolean> {
    const expiration = ttlSeconds ? { expiration: { type: 'EX' as const, value: ttlSeconds } } : {};
    return (await this.client.set(this.prefix + key, value, { condition: 'NX', ...expiration })) === 'OK';
  }

  async delete(key: string): Promise<void> {
    await this.client.del(this.prefix + key);
  }

  async hashGet(key: string, field: string): Promise<string | undefined> {
    return (await this.client.hGet(this.prefix + key, field)) ?? undefined;
  }

  async hashValues(key: string): Promise<string[]> {
    return this.client.hVals(this.prefix + key);
  }

  async hashSet(key: string, field: string, value: string): Promise<void> {
    await this.client.hSet(this.prefix + key, field, value);
  }

  async hashSetIfAbsent(key: string, field: string, value: string): Promise<boolean> {
    return (await this.client.hSetNX(this.prefix + key, field, value)) === 1;
  }

  async hashDelete(key: string, field: string): Promise<boolean> {
    return (await this.client.hDel(this.prefix + key, field)) === 1;
  }
}

interface Entry {
  value: string;
  expiresAt: number;
}

export class MemoryState implements SharedState {
  private readonly values = new Map<string, Entry>();
  private readonly hashes = new Map<string, Map<string, string>>();

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

  async hashSet(key: string, field: string, value: string): Promise<void> {
    this.hash(key).set(field, value);
  }

  async hashSetIfAbsent(key: string, field: string, value: string): Promise<boolean> {
    const hash = this.hash(key);
    if (hash.has(field)) return false;
    hash.set(field, value);
    return true;
  }

  async hashDelete(key: string, field: string): Promise<boolean> {
    return this.hashes.get(key)?.delete(field) ?? false;
  }
}
