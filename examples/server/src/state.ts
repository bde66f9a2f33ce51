import { createHash } from 'node:crypto';
import { storeUnavailable } from 'express-api-conventions';
import { createClient, createCluster, ErrorReply } from 'redis';
import { StartupError } from './settings.js';

/**
 * One atomic change of a record kept with unique claims (a user and its
 * email address): applied whole when the record is still what the writer
 * read, or not at all. This is how two instances sharing one Redis never
 * lose an update, resurrect a deleted record or leave a claim behind.
 */
export interface RecordWrite {
  /** The hash of the records (`users`). */
  readonly records: string;
  /** The hash of the unique claims, claim → record id (`users:emails`). */
  readonly claims: string;
  readonly id: string;
  /**
   * The record as the writer read it, compared whole with what is stored
   * now; `undefined` when it must not exist yet (a create).
   */
  readonly expected: string | undefined;
  /** The new record; `undefined` deletes it. */
  readonly value: string | undefined;
  /** Claims the record gives up (those it held when read). */
  readonly release: readonly string[];
  /** Claims the record takes; each must be free or already its own. */
  readonly take: readonly string[];
}

/**
 * `written`: applied. `changed`: the record is no longer what was read (or a
 * create found it there); nothing was written. `claimTaken`: another record
 * holds a claim in `take`; nothing was written.
 */
export type RecordWriteOutcome = 'written' | 'changed' | 'claimTaken';

/**
 * The server's own shared state (users, exports, sessions): a few key and
 * hash operations, in memory for one instance, or in Redis so that several
 * instances behind one address act as one service. The library's stores
 * (rate-limit counters, refresh tokens) get the same Redis client.
 *
 * In Redis, a command that cannot be answered (Redis down, or not answering
 * within COMMAND_TIMEOUT_MS) rejects with the `stateStoreUnavailable`
 * ApiError: 503 with `Retry-After`, never a hang and never a 500.
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
  /** Applies `write` in one atomic step (see RecordWrite). */
  writeRecord(write: RecordWrite): Promise<RecordWriteOutcome>;
  /**
   * Adds `member` to the bounded set `key` until `expiresAt` (milliseconds
   * since the epoch), unless the set already holds `limit` members that have
   * not expired; one atomic step, so instances sharing a Redis cannot pass the
   * limit together. Returns `undefined` when added, else when the first
   * member expires (a place frees up).
   */
  admit(key: string, member: string, expiresAt: number, limit: number): Promise<number | undefined>;
  /**
   * admit() over several bounded sets at once (a caller's own and the
   * service's): `member` is added to all of them, or to none when one is
   * full. Returns `undefined` when added, else which bound refused (its
   * index in `bounds`, the first full one) and when a place frees up there.
   */
  admitAll(bounds: readonly Bound[], member: string, expiresAt: number): Promise<AdmitRefusal | undefined>;
}

/** One bounded set of admitAll(): its key and how many members it holds at most. */
export interface Bound {
  readonly key: string;
  readonly limit: number;
}

/** Why admitAll() refused: the index of the full bound, and when its first member expires. */
export interface AdmitRefusal {
  readonly refusedBy: number;
  readonly freeAt: number;
}

/** The longest a Redis command may wait for its answer before the request gets 503. */
export const COMMAND_TIMEOUT_MS = 500;
/** Commands waiting for Redis at most; more fail at once (503). */
export const COMMAND_QUEUE_LIMIT = 10_000;
/** On a cluster, how long after a node comes back the others coming back are awaited, for one reconnection run. */
const RECONNECT_GATHER_MS = 100;
/** How long start-up waits for Redis to answer before it gives up (exit 1). */
export const CONNECT_DEADLINE_MS = 5000;
/** The 503 of a request that needs Redis while it cannot be reached: the library's, with its Retry-After. */
export const stateUnavailable = (cause: unknown) => storeUnavailable(cause);

// What every connection to Redis (one Redis, or each node of a cluster) is given.
const connectionOptions = (connected: () => boolean) => ({
  // No command waits while the connection is down (an outage answers 503 at
  // once instead of queueing), nor longer than COMMAND_TIMEOUT_MS to be sent;
  // the wait for its answer is bounded by withDeadline(). While Redis hangs,
  // at most COMMAND_QUEUE_LIMIT commands wait for it: memory stays bounded.
  commandOptions: { timeout: COMMAND_TIMEOUT_MS },
  disableOfflineQueue: true,
  commandsQueueMaxLength: COMMAND_QUEUE_LIMIT,
  socket: {
    connectTimeout: CONNECT_DEADLINE_MS,
    // Once connected, reconnect for ever (a lasting outage shows as 503 on the
    // requests that need Redis); before that, the first failure stops the start.
    reconnectStrategy: (retries: number, cause: Error) => (connected() ? Math.min(retries * 100, 1000) : cause),
  },
});

const newClient = (url: string, connected: () => boolean) => createClient({ url, ...connectionOptions(connected) });

/**
 * What the connection to each node of a cluster is given: node-redis uses
 * the URLs named only to find the nodes, so the credentials and TLS of the
 * first one are given to every node here.
 */
function clusterNodeOptions(urls: readonly string[], connected: () => boolean) {
  const first = new URL(urls[0] as string);
  const options = connectionOptions(connected);
  return {
    ...options,
    ...(first.username === '' ? {} : { username: decodeURIComponent(first.username) }),
    ...(first.password === '' ? {} : { password: decodeURIComponent(first.password) }),
    socket: first.protocol === 'rediss:' ? { ...options.socket, tls: true as const } : options.socket,
  };
}

// The cluster client keeps command options of its own (a 5 s time-out), which win over the
// nodes': ours are given to it too.
const newCluster = (urls: readonly string[], connected: () => boolean) =>
  createCluster({
    rootNodes: urls.map((url) => ({ url })),
    defaults: clusterNodeOptions(urls, connected),
    commandOptions: { timeout: COMMAND_TIMEOUT_MS },
  });

export type RedisSingleClient = ReturnType<typeof newClient>;
export type RedisClusterClient = ReturnType<typeof newCluster>;
/** One Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER): the library's stores take either. */
export type RedisClient = RedisSingleClient | RedisClusterClient;

/** Whether the client is a cluster's: its state's keys then need one hash tag (RedisState). */
export const isCluster = (client: RedisClient): client is RedisClusterClient => 'masters' in client;

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Waits for `connecting` at most CONNECT_DEADLINE_MS; when it fails or the
 * deadline passes, `destroy()`s the client and fails the start naming `what`.
 */
async function connectWithin(connecting: Promise<unknown>, destroy: () => void, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CONNECT_DEADLINE_MS / 1000} s`)), CONNECT_DEADLINE_MS);
  });
  try {
    await Promise.race([connecting, deadline]);
  } catch (error) {
    destroy();
    throw new StartupError(`cannot reach ${what}: ${messageOf(error)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** After the start, a connection's errors go to the log (before it, the start fails with them). */
const logErrorsOnceConnected = (connected: () => boolean) => (error: unknown) => {
  if (connected()) process.stderr.write(`redis: ${messageOf(error)}\n`);
};

/**
 * Connects to Redis, failing the start-up when it cannot be reached or does
 * not answer within CONNECT_DEADLINE_MS (a port that accepts connections and
 * never answers included). `onReconnect` runs on every later reconnection.
 */
export async function connectRedis(url: string, onReconnect: () => void = () => {}): Promise<RedisSingleClient> {
  let connected = false;
  const client = newClient(url, () => connected);
  client.on(
    'error',
    logErrorsOnceConnected(() => connected),
  );
  client.on('ready', () => {
    if (connected) onReconnect();
  });
  // The handshake and a PING: a black hole accepts the connection but never answers.
  await connectWithin(
    client.connect().then(() => client.ping()),
    () => client.destroy(),
    `Redis at ${url}`,
  );
  connected = true;
  return client;
}

/**
 * Connects to a Redis Cluster from some of its nodes (REDIS_CLUSTER), as
 * connectRedis() does to one Redis: the start fails when the cluster's
 * layout cannot be read from them within CONNECT_DEADLINE_MS. `onReconnect`
 * runs when a node comes back after the start.
 */
export async function connectRedisCluster(
  urls: readonly string[],
  onReconnect: () => void = () => {},
): Promise<RedisClusterClient> {
  let connected = false;
  const cluster = newCluster(urls, () => connected);
  cluster.on(
    'error',
    logErrorsOnceConnected(() => connected),
  );
  cluster.on(
    'node-error',
    logErrorsOnceConnected(() => connected),
  );
  // Each node that comes back says so: the nodes back within RECONNECT_GATHER_MS of the first share one run.
  let onReconnectDue = false;
  cluster.on('node-ready', () => {
    if (!connected || onReconnectDue) return;
    onReconnectDue = true;
    setTimeout(() => {
      onReconnectDue = false;
      onReconnect();
    }, RECONNECT_GATHER_MS).unref();
  });
  // connect() reads the layout (CLUSTER SLOTS) and connects to every master.
  await connectWithin(cluster.connect(), () => cluster.destroy(), `the Redis Cluster at ${urls.join(', ')}`);
  connected = true;
  return cluster;
}

/**
 * Rejects when Redis has not answered within COMMAND_TIMEOUT_MS. node-redis's
 * own command `timeout` stops counting once the command is written to the
 * socket, so a Redis that hangs (SIGSTOP, a black hole, a full disk) would
 * hang the request for ever; this deadline covers the wait for the answer.
 * The command itself is not withdrawn: a write that Redis runs once it
 * answers again is applied although the request got 503, and a client that
 * sends it again finds it done (409 for a create, 412 with If-Match), never
 * applied twice over a newer version.
 */
export function withDeadline<T>(command: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${COMMAND_TIMEOUT_MS} ms`)), COMMAND_TIMEOUT_MS);
  });
  return Promise.race([command, late]).finally(() => clearTimeout(timer));
}

// Every failure of the store, an error reply included (WRONGTYPE, OOM,
// READONLY during a fail-over), is the 503 of an unavailable store: the
// driver's message goes to the log with the cause, never to the client.
const unavailable = (error: unknown): never => {
  throw stateUnavailable(error);
};

// KEYS: records, claims. ARGV: id, expected ('' = must be absent, else '=' .. text),
// value ('' = delete, else '=' .. text), the number of claims to release, those
// claims, then the claims to take. Checks everything first, then writes: Redis
// runs a script alone, so no other command sees half of it.
const WRITE_RECORD = `
local id = ARGV[1]
local current = redis.call('HGET', KEYS[1], id)
if ARGV[2] == '' then
  if current then return 'changed' end
elseif current ~= string.sub(ARGV[2], 2) then
  return 'changed'
end
local releases = tonumber(ARGV[4])
for i = 5 + releases, #ARGV do
  local owner = redis.call('HGET', KEYS[2], ARGV[i])
  if owner and owner ~= id then return 'claimTaken' end
end
for i = 5, 4 + releases do
  if redis.call('HGET', KEYS[2], ARGV[i]) == id then redis.call('HDEL', KEYS[2], ARGV[i]) end
end
for i = 5 + releases, #ARGV do
  redis.call('HSET', KEYS[2], ARGV[i], id)
end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], id)
else
  redis.call('HSET', KEYS[1], id, string.sub(ARGV[3], 2))
end
return 'written'
`;
const WRITE_RECORD_SHA = createHash('sha1').update(WRITE_RECORD).digest('hex');

// KEYS: the sets (sorted sets scored by expiry). ARGV: now, expiresAt,
// member, then one limit per key. Checks every set first, then adds to all.
const ADMIT = `
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[1])
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[3 + i]) then
    return {i, redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')[2]}
  end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], ARGV[2], ARGV[3])
  redis.call('PEXPIREAT', KEYS[i], ARGV[2])
end
return false
`;
const ADMIT_SHA = createHash('sha1').update(ADMIT).digest('hex');

export class RedisState implements SharedState {
  private readonly prefix: string;

  /**
   * On a cluster every key of the server's own state carries one hash tag,
   * so it lies in one slot: its scripts take several keys (a record's hash
   * and its claims, the bounds of admitAll()), and a script's keys must
   * share a slot. The library's stores spread their keys by their own tags.
   */
  constructor(
    private readonly client: RedisClient,
    prefix?: string,
  ) {
    this.prefix = prefix ?? (isCluster(client) ? '{reference-server}:' : 'reference-server:');
  }

  // Every command goes through here: any failure, a time-out or an error reply, is a 503.
  private command<T>(run: () => Promise<T>): Promise<T> {
    return withDeadline(run()).catch(unavailable);
  }

  get(key: string): Promise<string | undefined> {
    return this.command(async () => (await this.client.get(this.prefix + key)) ?? undefined);
  }

  set(key: string, value: string, ttlSeconds?: number): Promise<void> {
    return this.command(async () => {
      await this.client.set(this.prefix + key, value, ttlSeconds ? { expiration: { type: 'EX', value: ttlSeconds } } : undefined);
    });
  }

  setIfAbsent(key: string, value: string, ttlSeconds?: number): Promise<boolean> {
    const expiration = ttlSeconds ? { expiration: { type: 'EX' as const, value: ttlSeconds } } : {};
    return this.command(
      async () => (await this.client.set(this.prefix + key, value, { condition: 'NX', ...expiration })) === 'OK',
    );
  }

  delete(key: string): Promise<void> {
    return this.command(async () => {
      await this.client.del(this.prefix + key);
    });
  }

  hashGet(key: string, field: string): Promise<string | undefined> {
    return this.command(async () => (await this.client.hGet(this.prefix + key, field)) ?? undefined);
  }

  hashValues(key: string): Promise<string[]> {
    return this.command(() => this.client.hVals(this.prefix + key));
  }

  // EVALSHA sends only the digest; the first call on a fresh Redis loads the script.
  private async script(sha: string, source: string, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await this.client.evalSha(sha, { keys, arguments: args });
    } catch (error) {
      if (!(error instanceof ErrorReply) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.client.eval(source, { keys, arguments: args });
    }
  }

  async admit(key: string, member: string, expiresAt: number, limit: number): Promise<number | undefined> {
    return (await this.admitAll([{ key, limit }], member, expiresAt))?.freeAt;
  }

  admitAll(bounds: readonly Bound[], member: string, expiresAt: number): Promise<AdmitRefusal | undefined> {
    const keys = bounds.map((bound) => this.prefix + bound.key);
    const args = [String(Date.now()), String(expiresAt), member, ...bounds.map((bound) => String(bound.limit))];
    return this.command(async () => {
      const reply = await this.script(ADMIT_SHA, ADMIT, keys, args);
      if (!Array.isArray(reply)) return undefined;
      return { refusedBy: Number(reply[0]) - 1, freeAt: Number(reply[1]) };
    });
  }

  writeRecord(write: RecordWrite): Promise<RecordWriteOutcome> {
    const args = [
      write.id,
      write.expected === undefined ? '' : `=${write.expected}`,
      write.value === undefined ? '' : `=${write.value}`,
      String(write.release.length),
      ...write.release,
      ...write.take,
    ];
    const keys = [this.prefix + write.records, this.prefix + write.claims];
    return this.command(async () => String(await this.script(WRITE_RECORD_SHA, WRITE_RECORD, keys, args)) as RecordWriteOutcome);
  }
}
