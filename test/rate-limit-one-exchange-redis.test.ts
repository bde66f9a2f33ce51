import type { Server } from 'node:http';
import type { Express } from 'express';
import type { createClient } from 'redis';
import { errorHandler } from '../src/errors/index.js';
import { type RateLimitOptions, rateLimit } from '../src/rate-limit/index.js';
import { storeKeyOf } from '../src/stores/counter-keys.js';
import { type CounterState, type RedisClient, RedisCounterStore } from '../src/stores/index.js';
import { hashSlot, sharesSlot } from '../src/stores/redis/index.js';
import { appWith } from './helpers.js';
import { counted, useRedis, useRedisCluster } from './support/redis-clients.js';
import { closeServer, describeWith, listen, REDIS_SERVER } from './support/services.js';

/**
 * The Redis path counts both of a request's policies in one exchange with
 * Redis (one script), and answers exactly what counting them one by one
 * answers: the same statuses, RateLimit headers, Retry-After and counts
 * left in Redis, a refused request's hits given back.
 */

/** The store counting policy by policy: a subclass with increment() of its own is never counted in one script. */
class OneByOneStore extends RedisCounterStore {
  override increment(key: string, windowMs: number): Promise<CounterState> {
    return super.increment(key, windowMs);
  }
}

/** Who each request acts for: the `x-user` and `x-app` headers, none for an anonymous one. */
const byHeaders: RateLimitOptions['identify'] = (req) => ({ user: req.get('x-user'), application: req.get('x-app') });

function limitedApp(store: RedisCounterStore, options: RateLimitOptions = {}): Express {
  return appWith(
    rateLimit({ store, partitionSecret: 'shared-secret', identify: byHeaders, address: () => '192.0.2.7', ...options }),
    (app) => {
      app.get('/v1/things', (_req, res) => res.json({ things: [] }));
      app.use(errorHandler({ production: true, log: false }));
    },
  );
}

const servers: Server[] = [];
async function serve(app: Express): Promise<string> {
  const { server, url } = await listen(app, '/v1/things');
  servers.push(server);
  return url;
}
afterAll(() => Promise.all(servers.map(closeServer)));

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return {
    status: res.status,
    body: await res.text(),
    policy: res.headers.get('ratelimit-policy'),
    // `t` is seconds left, read at each answer: compared apart, within a second.
    state: res.headers.get('ratelimit')?.replace(/;t=\d+/g, ''),
    t: [...(res.headers.get('ratelimit') ?? '').matchAll(/;t=(\d+)/g)].map((m) => Number(m[1])),
    retryAfter: res.headers.has('retry-after') ? Number(res.headers.get('retry-after')) : undefined,
  };
}

/** Sends `count` requests at once, alternating between the instances; returns how many passed. */
async function burst(urls: string[], count: number, headers: Record<string, string> = {}): Promise<number> {
  const statuses = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      fetch(urls[i % urls.length] as string, { headers }).then(async (res) => {
        await res.arrayBuffer();
        return res.status;
      }),
    ),
  );
  expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
  return statuses.filter((status) => status === 200).length;
}

const SEQUENCE: Record<string, string>[] = [
  ...Array.from({ length: 4 }, () => ({ 'x-user': 'ann', 'x-app': 'mobile' })),
  ...Array.from({ length: 3 }, () => ({ 'x-user': 'bob', 'x-app': 'mobile' })),
  ...Array.from({ length: 3 }, () => ({})),
  { 'x-user': 'ann' },
  { 'x-app': 'mobile' },
];

describe('sharesSlot()', () => {
  it('says whether keys lie in one Redis Cluster hash slot', () => {
    const ann = storeKeyOf('user', 'address:192.0.2.7');
    const app = storeKeyOf('application', 'address:192.0.2.7');
    expect(ann).toMatch(/^user:\{[A-Za-z0-9+/]{16}\}$/);
    expect(sharesSlot([`eac:${ann}`, `eac:${app}`])).toBe(true);
    expect(hashSlot(`eac:${ann}`)).toBe(hashSlot(`eac:${app}`));
    const keys = ['eac:user:1', 'eac:application:2'];
    expect(sharesSlot(keys)).toBe(hashSlot(keys[0] as string) === hashSlot(keys[1] as string));
    expect(sharesSlot(['{a}x', 'y{a}'])).toBe(true);
    expect(sharesSlot(['a', 'b'])).toBe(false);
    expect(sharesSlot(['{}a', '{}a'])).toBe(true);
  });
});

describeWith(REDIS_SERVER, 'both policies in one exchange with one Redis', () => {
  const redis = useRedis();
  let client: ReturnType<typeof createClient>;

  beforeAll(() => {
    client = redis.client;
  });
  beforeEach(() => client.flushAll());

  it('sends one command per request: both counters in one EVALSHA', async () => {
    const spy = counted(client as unknown as RedisClient);
    const url = await serve(limitedApp(new RedisCounterStore({ client: spy.client }), { limit: 5 }));
    await get(url, { 'x-user': 'ann', 'x-app': 'mobile' }); // loads the script (NOSCRIPT, then EVAL) on a fresh Redis
    spy.commands.length = 0;
    for (let i = 0; i < 3; i++) expect((await get(url, { 'x-user': 'ann', 'x-app': 'mobile' })).status).toBe(200);
    expect(spy.commands).toEqual(['EVALSHA', 'EVALSHA', 'EVALSHA']);
    // A refusal gives its hits back inside the same script: still one command.
    spy.commands.length = 0;
    for (let i = 0; i < 3; i++) await get(url, { 'x-user': 'ann', 'x-app': 'mobile' });
    expect(spy.commands).toEqual(['EVALSHA', 'EVALSHA', 'EVALSHA']);
  });

  it.each([
    ['user 3, application 5', { user: { limit: 3 }, application: { limit: 5 } }],
    ['user 5, application 3', { user: { limit: 5 }, application: { limit: 3 } }],
    ['the user policy alone', { limit: 2, application: false as const }],
  ])('answers what counting policy by policy answers (%s)', async (_title, options) => {
    const one = await serve(limitedApp(new RedisCounterStore({ client, prefix: 'one:' }), options));
    const byPolicy = await serve(limitedApp(new OneByOneStore({ client, prefix: 'each:' }), options));
    for (const headers of SEQUENCE) {
      const [a, b] = [await get(one, headers), await get(byPolicy, headers)];
      // Seconds left are read at each answer: equal within the second the two answers may straddle.
      expect({ ...a, t: a.t.length, retryAfter: a.retryAfter === undefined }).toEqual({
        ...b,
        t: b.t.length,
        retryAfter: b.retryAfter === undefined,
      });
      for (const [i, seconds] of [...a.t, a.retryAfter ?? 0].entries()) {
        expect(Math.abs(seconds - ([...b.t, b.retryAfter ?? 0][i] as number))).toBeLessThanOrEqual(1);
      }
    }
    // What is left in Redis is the same too: refused requests spent nothing.
    const left = async (prefix: string) => {
      const keys = (await client.keys(`${prefix}*`)).sort();
      return Object.fromEntries(await Promise.all(keys.map(async (key) => [key.slice(prefix.length), await client.get(key)])));
    };
    expect(await left('one:')).toEqual(await left('each:'));
  });

  it('gives each window its full length on a first hit, and keeps it after', async () => {
    const store = new RedisCounterStore({ client });
    const url = await serve(limitedApp(store, { windowSeconds: 30 }));
    await get(url, { 'x-user': 'ann', 'x-app': 'mobile' });
    const keys = await client.keys('eac:*');
    expect(keys).toHaveLength(2);
    for (const key of keys) {
      expect(await client.get(key)).toBe('1');
      expect(await client.pTTL(key)).toBeGreaterThan(29_000);
      expect(await client.pTTL(key)).toBeLessThanOrEqual(30_000);
    }
  });

  it('60 parallel requests over a limit of 10 on two instances: exactly 10 pass, anonymous or not', async () => {
    const urls = [
      await serve(limitedApp(new RedisCounterStore({ client }), { limit: 10 })),
      await serve(limitedApp(new RedisCounterStore({ client }), { limit: 10 })),
    ];
    expect(await burst(urls, 60)).toBe(10);
    expect(await burst(urls, 60, { 'x-user': 'ann', 'x-app': 'mobile' })).toBe(10);
  });
});

describeWith(REDIS_SERVER, 'both policies in one exchange on a Redis Cluster', () => {
  const redisCluster = useRedisCluster();
  let run = 0;
  const prefix = () => `one${++run}:`;

  it('counts an anonymous caller (its address in both policies, one slot) in one command', async () => {
    const spy = counted(redisCluster.client as unknown as RedisClient);
    const url = await serve(limitedApp(new RedisCounterStore({ client: spy.client, prefix: prefix() }), { limit: 5 }));
    await get(url);
    spy.commands.length = 0;
    for (let i = 0; i < 3; i++) expect((await get(url)).status).toBe(200);
    expect(spy.commands).toEqual(['EVALSHA', 'EVALSHA', 'EVALSHA']);
  });

  it('counts a user and an application of two slots policy by policy, as before', async () => {
    const spy = counted(redisCluster.client as unknown as RedisClient);
    const url = await serve(limitedApp(new RedisCounterStore({ client: spy.client, prefix: prefix() }), { limit: 5 }));
    const headers = { 'x-user': 'ann', 'x-app': 'mobile' };
    expect(hashSlot(`x:${storeKeyOf('user', 'user:ann')}`)).not.toBe(
      hashSlot(`x:${storeKeyOf('application', 'application:mobile')}`),
    );
    await get(url, headers);
    spy.commands.length = 0;
    expect((await get(url, headers)).status).toBe(200);
    expect(spy.commands).toEqual(['EVALSHA', 'EVALSHA']);
  });

  it('60 parallel requests over a limit of 10 on two instances: exactly 10 pass, anonymous or not', async () => {
    const apps = async () => {
      const store = () => new RedisCounterStore({ client: redisCluster.client, prefix: `burst${run}:` });
      return [await serve(limitedApp(store(), { limit: 10 })), await serve(limitedApp(store(), { limit: 10 }))];
    };
    prefix();
    const urls = await apps();
    expect(await burst(urls, 60)).toBe(10);
    expect(await burst(urls, 60, { 'x-user': 'ann', 'x-app': 'mobile' })).toBe(10);
  });
});
