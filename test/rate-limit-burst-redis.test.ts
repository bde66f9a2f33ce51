import type { Server } from 'node:http';
import type { Express } from 'express';
import { createClient } from 'redis';
import { errorHandler } from '../src/errors/index.js';
import { type RateLimitOptions, rateLimit } from '../src/rate-limit/index.js';
import { RedisCounterStore } from '../src/stores/index.js';
import { appWith } from './helpers.js';
import { closeServer, describeWith, listen, REDIS_SERVER, type RedisServer, startRedis } from './support/services.js';

/**
 * "A request refused by one policy gives back what it took
 * from the others; under a burst over two instances the admitted count
 * equals the quota." Two Express apps on two ports count in one real
 * redis-server, each through its own node-redis client.
 */

async function connect(url: string) {
  const client = createClient({ url, socket: { reconnectStrategy: () => 50 } });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

type Client = Awaited<ReturnType<typeof connect>>;

/** Who each request acts for: the `x-user` and `x-app` headers (as a verified token would say). */
const byHeaders: RateLimitOptions['identify'] = (req) => ({ user: req.get('x-user'), application: req.get('x-app') });

function limitedApp(client: Client, options: RateLimitOptions): Express {
  const store = new RedisCounterStore({ client, commandTimeoutMs: 2_000 });
  return appWith(rateLimit({ store, partitionSecret: 'shared-secret', identify: byHeaders, ...options }), (app) => {
    app.get('/v1/things', (_req, res) => res.json({ things: [] }));
    app.use(errorHandler({ production: true, log: false }));
  });
}

const listenThings = (app: Express) => listen(app, '/v1/things');

const close = closeServer;

describeWith(REDIS_SERVER, 'a burst over two instances on one Redis', () => {
  let redis: RedisServer;
  const clients: Client[] = [];
  const servers: Server[] = [];

  /** Two instances with these options; returns their URLs. */
  async function twoInstances(options: RateLimitOptions): Promise<string[]> {
    const started = await Promise.all(
      [0, 1].map(async () => {
        const client = await connect(redis.url);
        clients.push(client);
        return listenThings(limitedApp(client, options));
      }),
    );
    servers.push(...started.map((s) => s.server));
    return started.map((s) => s.url);
  }

  /** Sends `count` requests at once, alternating between the instances; returns their statuses. */
  async function burst(urls: string[], count: number, headers: (i: number) => Record<string, string>): Promise<number[]> {
    return Promise.all(
      Array.from({ length: count }, (_, i) =>
        fetch(urls[i % urls.length] as string, { headers: headers(i) }).then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        }),
      ),
    );
  }

  const admitted = (statuses: number[]) => statuses.filter((status) => status === 200).length;

  beforeAll(async () => {
    redis = await startRedis();
  });
  beforeEach(async () => {
    const client = await connect(redis.url);
    await client.flushAll();
    client.destroy();
  });
  afterAll(async () => {
    await Promise.all(servers.map(close));
    for (const client of clients) client.destroy();
    await redis?.stop();
  });

  it('admits exactly the quota: 40 requests of one user and one application, quota 20, five rounds', async () => {
    const urls = await twoInstances({ limit: 20 });
    const inspector = clients[0] as Client;
    for (let round = 0; round < 5; round++) {
      const statuses = await burst(urls, 40, () => ({ 'x-user': `ann-${round}`, 'x-app': `app-${round}` }));
      expect(admitted(statuses)).toBe(20);
      expect(statuses.filter((status) => status === 429)).toHaveLength(20);
      // Every refused request gave its hits back: each count holds the admitted ones only.
      const keys = await inspector.keys('eac:*');
      const counts = await Promise.all(keys.map((key) => inspector.get(key)));
      expect(counts.filter((value) => value !== '20')).toEqual([]);
      await inspector.flushAll();
    }
  });

  it.each([
    ['user 20, application 10', { user: { limit: 20 }, application: { limit: 10 } }, 10],
    ['user 10, application 20', { user: { limit: 10 }, application: { limit: 20 } }, 10],
  ])('admits the smaller quota when the two policies differ (%s)', async (_title, quotas, expected) => {
    const urls = await twoInstances(quotas);
    for (let round = 0; round < 3; round++) {
      const statuses = await burst(urls, 40, () => ({ 'x-user': `bob-${round}`, 'x-app': `mobile-${round}` }));
      expect(admitted(statuses)).toBe(expected);
    }
  });

  it('admits the application’s quota when several users share it', async () => {
    // Four users, ten requests each, at most 5 per user and 12 for their one application.
    const urls = await twoInstances({ user: { limit: 5 }, application: { limit: 12 } });
    const statuses = await burst(urls, 40, (i) => ({ 'x-user': `user-${i % 4}`, 'x-app': 'shared' }));
    expect(admitted(statuses)).toBe(12);
  });
});
