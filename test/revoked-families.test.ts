import { createClient } from 'redis';
import { MemoryRevokedFamilies, RedisRevokedFamilies, type RevokedFamilies } from '../src/oauth2/index.js';
import { DEFAULT_COMMAND_TIMEOUT_MS } from '../src/stores/redis/index.js';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from './support/services.js';
import { MACHINE_ALLOWANCE_MS, waitUntil } from './support/timing.js';

/** Milliseconds until `check` holds. */
async function timeUntil(check: () => boolean, what: string): Promise<number> {
  const started = Date.now();
  await waitUntil(check, what);
  return Date.now() - started;
}

// Ends are read on the clock jest's fake timers move.
describe('MemoryRevokedFamilies', () => {
  let families: MemoryRevokedFamilies;
  beforeEach(() => {
    jest.useFakeTimers({ now: Date.UTC(2026, 0, 1) });
    families = new MemoryRevokedFamilies();
  });
  afterEach(() => {
    families.close();
    jest.useRealTimers();
  });

  it('answers true for a revoked family until its end, false for any other', async () => {
    await families.revoke('f-1', Date.now() + 60_000);
    expect(families.isRevoked('f-1')).toBe(true);
    expect(families.isRevoked('f-2')).toBe(false);
  });

  it('forgets an entry once it ends', async () => {
    await families.revoke('short', Date.now() + 50);
    await families.revoke('long', Date.now() + 60_000);
    jest.advanceTimersByTime(49);
    expect(families.isRevoked('short')).toBe(true);
    jest.advanceTimersByTime(1);
    expect(families.isRevoked('short')).toBe(false);
    expect(families.size).toBe(1);
    await families.revoke('other', Date.now() + 20);
    jest.advanceTimersByTime(20);
    families.sweep();
    expect(families.size).toBe(1);
    expect(families.isRevoked('long')).toBe(true);
  });

  it('keeps the later end of a family revoked twice', async () => {
    await families.revoke('f', Date.now() + 60_000);
    await families.revoke('f', Date.now() + 10);
    jest.advanceTimersByTime(30);
    expect(families.isRevoked('f')).toBe(true);
  });
});

describeWith(REDIS_SERVER, 'RedisRevokedFamilies on a real redis-server', () => {
  let redis: RedisServer;
  const clients: { destroy(): void; readonly isReady: boolean }[] = [];
  const stores: RevokedFamilies[] = [];
  let run = 0;

  async function connect() {
    const client = createClient({ url: redis.url, socket: { reconnectStrategy: () => 50 } });
    client.on('error', () => undefined);
    await client.connect();
    clients.push(client);
    return client;
  }

  // A revocation made on one instance is seen on another within the interval and a round trip.
  const POLL_MS = 250;
  const SEEN_WITHIN_MS = POLL_MS + MACHINE_ALLOWANCE_MS;

  /** Two instances, each on its own client, sharing one key (and a third, `witness`, when asked). */
  async function twoInstances(options: { log?: (error: unknown) => void } = {}) {
    const prefix = `rf${++run}:`;
    const a = new RedisRevokedFamilies({ client: await connect(), prefix, pollIntervalMs: POLL_MS, ...options });
    const b = new RedisRevokedFamilies({ client: await connect(), prefix, pollIntervalMs: POLL_MS, ...options });
    const witness = async () => {
      const c = new RedisRevokedFamilies({ client: await connect(), prefix, pollIntervalMs: POLL_MS });
      stores.push(c);
      return c;
    };
    stores.push(a, b);
    return { a, b, prefix, witness };
  }

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(() => {
    for (const store of stores.splice(0)) store.close();
  });
  afterAll(async () => {
    for (const client of clients) client.destroy();
    await redis?.stop();
  });

  it('shows a revocation made on one instance on the other within its poll interval', async () => {
    const { a, b } = await twoInstances();
    await b.refresh();
    const timings: number[] = [];
    for (let i = 0; i < 5; i++) {
      expect(b.isRevoked(`f-${i}`)).toBe(false);
      await a.revoke(`f-${i}`, Date.now() + 60_000);
      expect(a.isRevoked(`f-${i}`)).toBe(true);
      timings.push(await timeUntil(() => b.isRevoked(`f-${i}`), `f-${i} on the other instance`));
    }
    expect(Math.max(...timings)).toBeLessThan(SEEN_WITHIN_MS);
    expect(b.isRevoked('never-revoked')).toBe(false);
  });

  it('drops ended entries from the local copy and from Redis', async () => {
    const { a, b, prefix } = await twoInstances();
    const client = await connect();
    // Long enough for the checks before the end on a loaded machine; Redis's own clock ends the keys.
    const until = Date.now() + MACHINE_ALLOWANCE_MS;
    await a.revoke('short', until);
    await b.refresh();
    expect(b.isRevoked('short')).toBe(true);
    expect(await client.exists(`${prefix}revoked:{families}`)).toBe(1);
    await waitUntil(() => Date.now() > until, 'the entry to end');
    expect(a.isRevoked('short')).toBe(false);
    expect(b.isRevoked('short')).toBe(false);
    await b.refresh();
    await a.refresh();
    expect(b.size).toBe(0);
    expect(a.size).toBe(0);
    // The keys expire with the last entry.
    expect(await client.exists([`${prefix}revoked:{families}`, `${prefix}revoked:{families}:version`])).toBe(0);
  });

  it('keeps the later end of a family revoked twice', async () => {
    const { a, b, prefix } = await twoInstances();
    const until = Date.now() + 60_000;
    await a.revoke('f', until);
    await b.revoke('f', Date.now() + 1_000);
    const client = await connect();
    expect(Number(await client.zScore(`${prefix}revoked:{families}`, 'f'))).toBe(until);
  });

  it('reads the entries only when the version changed (a quiet poll is one small reply)', async () => {
    const real = await connect();
    const replies: unknown[] = [];
    const spy = {
      sendCommand: (args: string[], options?: { timeout?: number }) =>
        real.sendCommand(args, options).then((reply) => {
          replies.push(reply);
          return reply;
        }),
    };
    const prefix = `quiet${++run}:`;
    const a = new RedisRevokedFamilies({ client: await connect(), prefix });
    const b = new RedisRevokedFamilies({ client: spy, prefix, pollIntervalMs: 60_000 });
    stores.push(a, b);
    for (let i = 0; i < 50; i++) await a.revoke(`f-${i}`, Date.now() + 60_000);
    await b.refresh();
    expect((replies.at(-1) as unknown[])[1]).toHaveLength(100);
    await b.refresh();
    expect(replies.at(-1)).toHaveLength(1);
    expect(b.isRevoked('f-49')).toBe(true);
    await a.revoke('f-50', Date.now() + 60_000);
    await b.refresh();
    expect((replies.at(-1) as unknown[])[1]).toHaveLength(102);
    expect(b.isRevoked('f-50')).toBe(true);
  });

  it('stops refreshing on close()', async () => {
    const { a, b, witness } = await twoInstances();
    const c = await witness();
    b.close();
    await a.revoke('after-close', Date.now() + 60_000);
    // An open instance polling on the same interval sees it, and reads twice more: b would have too.
    await waitUntil(() => c.isRevoked('after-close'), 'an open instance to see the revocation');
    await c.refresh();
    await c.refresh();
    expect(b.isRevoked('after-close')).toBe(false);
  });

  describe('during a Redis outage', () => {
    it('answers from its last copy without throwing, and catches up when Redis is back', async () => {
      const errors: unknown[] = [];
      const { a, b } = await twoInstances({ log: (error) => errors.push(error) });
      await a.revoke('before', Date.now() + 60_000);
      expect(await timeUntil(() => b.isRevoked('before'), 'the revocation on b')).toBeLessThan(SEEN_WITHIN_MS);

      const port = redis.port;
      await redis.stop();
      // The next refresh fails, within its command time-out.
      await waitUntil(() => errors.length > 0, 'a refresh to fail');
      expect(() => b.isRevoked('before')).not.toThrow();
      expect(b.isRevoked('before')).toBe(true);
      expect(b.isRevoked('other')).toBe(false);
      expect(errors.length).toBeGreaterThan(0);
      const started = Date.now();
      await expect(a.revoke('during', Date.now() + 60_000)).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(DEFAULT_COMMAND_TIMEOUT_MS + MACHINE_ALLOWANCE_MS);
      // The instance that revoked it holds it even though Redis could not be told.
      expect(a.isRevoked('during')).toBe(true);

      redis = await startRedis({ port });
      await waitUntil(() => clients.every((client) => client.isReady), 'the clients to reconnect');
      await a.revoke('after', Date.now() + 60_000);
      expect(await timeUntil(() => b.isRevoked('after'), 'the revocation after the outage on b')).toBeLessThan(SEEN_WITHIN_MS);
    });
  });

  it.each([
    [{ pollIntervalMs: 5 }, 'RedisRevokedFamilies(options): `pollIntervalMs` must be an integer from 10 to 60000; received 5.'],
    [{ log: 'log' }, 'RedisRevokedFamilies(options): `log` must be a function, or false for no log'],
    [{ onError: () => undefined }, 'RedisRevokedFamilies(options): received an unsupported option `onError`. It is now `log`.'],
    [
      { commandTimeoutMs: 0 },
      'RedisRevokedFamilies(options): `commandTimeoutMs` must be an integer from 1 to 60000; received 0.',
    ],
  ])('refuses %j', (options, message) => {
    const client = { sendCommand: () => Promise.resolve([]) };
    expect(() => new RedisRevokedFamilies({ client, ...(options as object) })).toThrow(message);
  });
});
