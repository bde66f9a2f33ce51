import type { Server } from 'node:http';
import type { Express } from 'express';
import { createClient } from 'redis';
import { parseList } from 'structured-headers';
import request from 'supertest';
import { errorHandler } from '../src/errors/index.js';
import { type RateLimitOptions, rateLimit } from '../src/rate-limit/index.js';
import { type RedisClient, RedisCounterStore, StoreUnavailableError } from '../src/stores/index.js';
import { appWith, expectHeaders } from './helpers.js';
import { closeServer, describeWith, listen, REDIS_SERVER, type RedisServer, startRedis } from './support/services.js';
import { MACHINE_ALLOWANCE_MS, waitUntil } from './support/timing.js';

async function connect(url: string) {
  // Reconnects quickly and for ever; an 'error' listener is what keeps a
  // node-redis client from crashing the process when Redis goes away.
  const client = createClient({ url, socket: { reconnectStrategy: () => 50 } });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

type Client = Awaited<ReturnType<typeof connect>>;

function limitedApp(client: Client, options: RateLimitOptions = {}): Express {
  const store = new RedisCounterStore({ client, commandTimeoutMs: 200 });
  return appWith(rateLimit({ store, partitionSecret: 'shared-secret', address: () => '127.0.0.1', ...options }), (app) => {
    app.get('/v1/things', (_req, res) => res.json({ things: [] }));
    app.use(errorHandler({ production: true, log: false }));
  });
}

const listenThings = (app: Express) => listen(app, '/v1/things');

/** A parameter of the first item of a RateLimit header. */
const firstParam = (header: string | null | undefined, name: string): unknown => {
  const item = parseList(header ?? '')[0];
  return item === undefined ? undefined : (item[1] as Map<string, unknown>).get(name);
};

const close = closeServer;

describeWith(REDIS_SERVER, 'rate limits in Redis', () => {
  let redis: RedisServer;
  let client: Client;

  beforeAll(async () => {
    redis = await startRedis();
    client = await connect(redis.url);
  });
  afterAll(async () => {
    client?.destroy();
    await redis?.stop();
  });
  beforeEach(async () => {
    await client.flushAll();
  });

  describe('RedisCounterStore', () => {
    it('counts hits in one window and gives the key a TTL of the window', async () => {
      const store = new RedisCounterStore({ client });
      const before = Date.now();
      const first = await store.increment('k', 60_000);
      const second = await store.increment('k', 60_000);
      expect([first.count, second.count]).toEqual([1, 2]);
      expect(first.resetAt).toBeGreaterThanOrEqual(before + 59_000);
      expect(first.resetAt).toBeLessThanOrEqual(Date.now() + 60_000);
      expect(await client.get('eac:k')).toBe('2');
      const ttl = await client.pTTL('eac:k');
      // Less only by the time since the first hit, however long a loaded machine made it.
      expect(ttl).toBeGreaterThanOrEqual(60_000 - (Date.now() - before) - 1);
      expect(ttl).toBeLessThanOrEqual(60_000);
      expect(await store.get('k')).toMatchObject({ count: 2 });
    });

    it('lets Redis expire the key when the window ends', async () => {
      const store = new RedisCounterStore({ client, prefix: 'rl:' });
      // A window long enough for the check before its end on a loaded machine.
      const { resetAt } = await store.increment('short', MACHINE_ALLOWANCE_MS);
      expect(await client.exists('rl:short')).toBe(1);
      await waitUntil(() => Date.now() > resetAt, 'the window to end');
      expect(await client.exists('rl:short')).toBe(0);
      expect(await store.get('short')).toBeUndefined();
      expect(await store.increment('short', 150)).toMatchObject({ count: 1 });
    });

    it('gives a key left without a TTL one', async () => {
      await client.set('eac:bare', '5');
      const store = new RedisCounterStore({ client });
      const before = Date.now();
      expect(await store.increment('bare', 10_000)).toMatchObject({ count: 6 });
      expect(await client.pTTL('eac:bare')).toBeGreaterThanOrEqual(10_000 - (Date.now() - before) - 1);
    });

    it('forgets a reset key', async () => {
      const store = new RedisCounterStore({ client });
      await store.increment('k', 60_000);
      await store.reset('k');
      expect(await client.exists('eac:k')).toBe(0);
      expect(await store.get('k')).toBeUndefined();
    });

    describe('decrement()', () => {
      it('gives one hit back and keeps the TTL', async () => {
        const store = new RedisCounterStore({ client });
        await store.increment('k', 60_000);
        await store.increment('k', 60_000);
        const before = await client.pTTL('eac:k');
        await store.decrement('k');
        expect(await client.get('eac:k')).toBe('1');
        const ttl = await client.pTTL('eac:k');
        expect(ttl).toBeGreaterThan(before - 1_000);
        expect(ttl).toBeLessThanOrEqual(before);
        expect(await store.get('k')).toMatchObject({ count: 1 });
      });

      it('never goes below 0', async () => {
        const store = new RedisCounterStore({ client });
        await store.increment('k', 60_000);
        await store.decrement('k');
        await store.decrement('k');
        expect(await client.get('eac:k')).toBe('0');
        expect(await store.increment('k', 60_000)).toMatchObject({ count: 1 });
      });

      it('is a no-op on a missing key (creates none)', async () => {
        const store = new RedisCounterStore({ client });
        await store.decrement('missing');
        expect(await client.exists('eac:missing')).toBe(0);
        expect(await store.get('missing')).toBeUndefined();
      });
    });

    it('loads its script again after Redis forgot it', async () => {
      const store = new RedisCounterStore({ client });
      await store.increment('k', 60_000);
      await client.scriptFlush();
      expect(await store.increment('k', 60_000)).toMatchObject({ count: 2 });
    });

    it.each([
      [
        { client: undefined },
        'RedisCounterStore(options): `client` must be a connected node-redis v6 client: install the `redis` package (`npm install redis`), create one with its createClient() or createCluster(), call connect() and pass it as `client`; received undefined.',
      ],
      [
        { client: 'redis://x' },
        'RedisCounterStore(options): `client` must be a connected node-redis v6 client: install the `redis` package (`npm install redis`), create one with its createClient() or createCluster(), call connect() and pass it as `client`; received "redis://x".',
      ],
      [{ commandTimeoutMs: 0 }, 'RedisCounterStore(options): `commandTimeoutMs` must be an integer from 1 to 60000; received 0.'],
      [{ prefix: '' }, 'RedisCounterStore(options): `prefix` must be a non-empty string; received "".'],
    ])('refuses %j', (options, message) => {
      const withClient = 'client' in options ? options : { client: client as unknown as RedisClient, ...options };
      expect(() => new RedisCounterStore(withClient as never)).toThrow(message);
    });

    it('refuses, when built, a client that was never connected or was closed, saying to connect it first', async () => {
      const closed = await connect(redis.url);
      await closed.quit();
      for (const unusable of [createClient({ url: redis.url }), closed]) {
        expect(() => new RedisCounterStore({ client: unusable as unknown as RedisClient })).toThrow(
          'RedisCounterStore(options): `client` must be a connected node-redis client; received one that is not connected (connect() was never called, or it was closed). Call `await client.connect()` before building the store and the routers given it, and keep the client open while they serve.',
        );
      }
    });
  });

  describe('a Redis that stops answering (SIGSTOP: connections open, no replies)', () => {
    let frozen: RedisServer;
    let frozenClient: Client;

    beforeAll(async () => {
      frozen = await startRedis();
      frozenClient = await connect(frozen.url);
    });
    afterAll(async () => {
      frozenClient?.destroy();
      await frozen?.stop();
    });

    it('fails every command within commandTimeoutMs, then works again when it answers', async () => {
      const store = new RedisCounterStore({ client: frozenClient, commandTimeoutMs: 200 });
      await store.increment('k', 60_000);
      frozen.pause();
      try {
        for (const call of [
          () => store.increment('k', 60_000),
          () => store.get('k'),
          () => store.decrement('k'),
          () => store.reset('k'),
        ]) {
          const started = Date.now();
          const failure = call();
          await expect(failure).rejects.toThrow(StoreUnavailableError);
          await expect(failure).rejects.toThrow(/within 200 ms|timeout/i);
          expect(Date.now() - started).toBeLessThan(200 + MACHINE_ALLOWANCE_MS);
        }
      } finally {
        frozen.resume();
      }
      // Commands that timed out may still run once Redis wakes up (the reset did); the store answers again.
      const state = await store.increment('k', 60_000);
      expect(state.resetAt).toBeGreaterThan(Date.now());
    });
  });

  describe('two instances on two ports sharing one Redis', () => {
    let other: Client;
    let servers: Server[];
    let urls: string[];

    beforeAll(async () => {
      other = await connect(redis.url);
      const started = await Promise.all([
        listenThings(limitedApp(client, { limit: 50, application: false })),
        listenThings(limitedApp(other, { limit: 50, application: false })),
      ]);
      servers = started.map((s) => s.server);
      urls = started.map((s) => s.url);
    });
    afterAll(async () => {
      await Promise.all(servers.map(close));
      other?.destroy();
    });

    it('enforce one global count exactly under concurrent requests (2 × 60 against a quota of 50)', async () => {
      const responses = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          fetch(urls[i % 2] as string).then(async (res) => ({ res, body: await res.json() })),
        ),
      );
      const statuses = responses.map(({ res }) => res.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(50);
      expect(statuses.filter((s) => s === 429)).toHaveLength(70);
      const keys = (await client.keys('eac:*')).sort();
      expect(keys).toHaveLength(1);
      // A refused request gives its hit back: the count holds the admitted ones.
      expect(await client.get(keys[0] as string)).toBe('50');
      // Every instance writes the same partition key: one secret, one partition.
      const policies = new Set(responses.map(({ res }) => res.headers.get('ratelimit-policy')));
      expect(policies.size).toBe(1);
      const remaining = responses.map(({ res }) => firstParam(res.headers.get('ratelimit'), 'r'));
      expect(remaining.filter((r) => r === 0)).toHaveLength(71);
      expect(new Set(remaining.filter((r) => r !== 0))).toEqual(new Set(Array.from({ length: 49 }, (_, i) => i + 1)));
      const refused = responses.find(({ res }) => res.status === 429);
      expect(refused?.body).toEqual({
        errors: [{ message: 'Too many requests; retry after the time in Retry-After.', code: 42900 }],
      });
      const t = firstParam(refused?.res.headers.get('ratelimit'), 't');
      expect(refused?.res.headers.get('retry-after')).toBe(String(t));
    });
  });

  describe('a Redis outage', () => {
    let doomed: RedisServer;
    let doomedClient: Client;

    beforeAll(async () => {
      doomed = await startRedis();
      doomedClient = await connect(doomed.url);
    });
    afterAll(async () => {
      doomedClient?.destroy();
      await doomed?.stop();
    });

    it('is answered as configured, quickly, without a crash or a hung request', async () => {
      const errors: unknown[] = [];
      const closed = limitedApp(doomedClient, { log: (e: unknown) => errors.push(e), application: false });
      const open = limitedApp(doomedClient, { log: (e: unknown) => errors.push(e), application: false, storeFailure: 'open' });
      expect((await request(closed).get('/v1/things')).status).toBe(200);
      await doomed.stop();

      const refused = await request(closed).get('/v1/things').timeout(3_000);
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({ errors: [{ message: 'A shared state store is unreachable.', code: 50302 }] });
      // The store's 503 says when to come back; no RateLimit state it could not read.
      expectHeaders(refused, { RateLimit: null, 'Retry-After': '5' });
      expect(refused.headers['ratelimit-policy']).toMatch(/^"user";q=100;w=60;pk=:[A-Za-z0-9+/]{16}:$/);

      const passed = await request(open).get('/v1/things').timeout(3_000);
      expect(passed.status).toBe(200);
      expect(passed.body).toEqual({ things: [] });
      expectHeaders(passed, { RateLimit: null });
      expect(errors).toHaveLength(2);
    });
  });
});
