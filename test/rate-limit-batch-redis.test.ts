import type { Server } from 'node:http';
import type { createClient } from 'redis';
import { errorHandler } from '../src/errors/index.js';
import { rateLimit } from '../src/rate-limit/index.js';
import { storeKeyOf } from '../src/stores/counter-keys.js';
import { type RedisClient, RedisCounterStore } from '../src/stores/index.js';
import { type OrderedCount, type OrderedPolicy, orderedCounter } from '../src/stores/ordered-count.js';
import { hashSlot, RedisTimeoutError } from '../src/stores/redis/index.js';
import { StoreUnavailableError } from '../src/stores/store-error.js';
import { appWith } from './helpers.js';
import { counted, useRedis, useRedisCluster } from './support/redis-clients.js';
import { closeServer, describeWith, listen, REDIS_SERVER } from './support/services.js';

/**
 * The requests of one turn of the event loop are counted in one script per
 * hash slot (src/stores/redis/script-batch.ts): one command for many
 * requests, each answered exactly what a script of its own, sent in the same
 * order, answers: counts, refusals, windows and what is left in Redis.
 */

const POLICIES: OrderedPolicy[] = [
  { windowMs: 60_000, limit: 3 },
  { windowMs: 30_000, limit: 5 },
];

/** The store's counter of POLICIES (or of `policies`): every call answered by a script. */
function counterOf(store: RedisCounterStore, policies = POLICIES): (keys: readonly string[]) => Promise<OrderedCount> {
  const counter = orderedCounter(store, policies);
  if (counter === undefined) throw new Error('RedisCounterStore offers no ordered counter');
  return (keys) => {
    const answer = counter(keys);
    if (answer === undefined) throw new Error('the keys do not share a hash slot');
    return answer;
  };
}

/** The keys of one request: the user's and the application's, an absent one counted by the address. */
const keysOf = (user?: string, app?: string): string[] => [
  storeKeyOf('user', user === undefined ? 'address:192.0.2.7' : `user:${user}`),
  storeKeyOf('application', app === undefined ? 'address:192.0.2.7' : `application:${app}`),
];

/** Who sends, in order: two users of one application, the anonymous caller, one user alone. */
const SEQUENCE: string[][] = [
  ...Array.from({ length: 5 }, () => keysOf('ann', 'mobile')),
  ...Array.from({ length: 3 }, () => keysOf('bob', 'mobile')),
  ...Array.from({ length: 4 }, () => keysOf()),
  keysOf('ann'),
  ...Array.from({ length: 2 }, () => keysOf('cy', 'mobile')),
  keysOf('ann', 'mobile'),
];

/** An answer with its windows' ends cut to whole seconds left: the two runs read them a moment apart. */
const comparable = ({ refusedAt, windows }: OrderedCount) => ({
  refusedAt,
  windows: windows.map((w) =>
    w === undefined ? undefined : { count: w.count, seconds: Math.round((w.resetAt - Date.now()) / 1000) },
  ),
});

/** Every key under `prefix` and its count. */
async function left(client: ReturnType<typeof createClient>, prefix: string): Promise<Record<string, string | null>> {
  const keys = (await client.keys(`${prefix}*`)).sort();
  return Object.fromEntries(await Promise.all(keys.map(async (key) => [key.slice(prefix.length), await client.get(key)])));
}

describeWith(REDIS_SERVER, 'the requests of one turn of the event loop in one script', () => {
  const redis = useRedis();
  let client: ReturnType<typeof createClient>;
  const servers: Server[] = [];

  beforeAll(() => {
    client = redis.client;
  });
  afterAll(() => Promise.all(servers.map(closeServer)));
  beforeEach(() => client.flushAll());

  it('sends one command for the requests of one turn, and answers each what a script of its own answers', async () => {
    const spy = counted(client as unknown as RedisClient);
    const batched = counterOf(new RedisCounterStore({ client: spy.client, prefix: 'batch:' }));
    const alone = counterOf(new RedisCounterStore({ client, prefix: 'alone:' }));
    await counterOf(new RedisCounterStore({ client, prefix: 'warm:' }))(keysOf()); // loads the script on a fresh Redis
    spy.commands.length = 0;

    const together = await Promise.all(SEQUENCE.map((keys) => batched(keys)));
    expect(spy.commands).toEqual(['EVALSHA']);
    const oneByOne: OrderedCount[] = [];
    for (const keys of SEQUENCE) oneByOne.push(await alone(keys));

    expect(together.map(comparable)).toEqual(oneByOne.map(comparable));
    // The sequence was built to refuse at both policies and to read after a refusal.
    expect(together.map((answer) => answer?.refusedAt)).toEqual([-1, -1, -1, 0, 0, -1, -1, 1, -1, -1, -1, 0, 0, 1, 1, 0]);
    expect(together[7]?.windows.map((w) => w?.count)).toEqual([3, 6]);
    expect(await left(client, 'batch:')).toEqual(await left(client, 'alone:'));
  });

  it('starts another script past 64 requests, and counts across them exactly', async () => {
    const spy = counted(client as unknown as RedisClient);
    const counter = counterOf(new RedisCounterStore({ client: spy.client }), [{ windowMs: 60_000, limit: 100 }]);
    await counter([storeKeyOf('user', 'warm-up')]);
    spy.commands.length = 0;
    const answers = await Promise.all(Array.from({ length: 150 }, () => counter([storeKeyOf('user', 'user:ann')])));
    expect(spy.commands).toEqual(['EVALSHA', 'EVALSHA', 'EVALSHA']);
    expect(answers.map((answer) => answer?.windows[0]?.count)).toEqual(
      Array.from({ length: 150 }, (_, i) => Math.min(i + 1, 101)),
    );
    expect(answers.filter((answer) => answer?.refusedAt === -1)).toHaveLength(100);
    expect(await client.get(`eac:${storeKeyOf('user', 'user:ann')}`)).toBe('100');
  });

  it('loads the script for the whole batch when Redis forgot it', async () => {
    const spy = counted(client as unknown as RedisClient);
    const counter = counterOf(new RedisCounterStore({ client: spy.client }));
    await counter(keysOf('ann', 'mobile'));
    await client.scriptFlush();
    spy.commands.length = 0;
    const answers = await Promise.all(Array.from({ length: 4 }, () => counter(keysOf('ann', 'mobile'))));
    expect(spy.commands).toEqual(['EVALSHA', 'EVAL']);
    expect(answers.map((answer) => answer?.windows.map((w) => w?.count))).toEqual([
      [2, 2],
      [3, 3],
      [4, 3],
      [4, 3],
    ]);
  });

  it('fails a request whose key is no counter alone: the others of its batch are counted, its hits given back', async () => {
    const spy = counted(client as unknown as RedisClient);
    const counter = counterOf(new RedisCounterStore({ client: spy.client }));
    await counter(keysOf('ann', 'mobile'));
    const [user, app] = [keysOf('eve', 'tampered')[0] as string, keysOf('eve', 'tampered')[1] as string];
    await client.hSet(`eac:${app}`, 'by', 'hand'); // its INCR fails with WRONGTYPE once the user key is counted
    await client.set(`eac:${keysOf('mal')[0]}`, 'abc'); // its INCR fails at the first policy
    spy.commands.length = 0;
    const settled = await Promise.allSettled([
      counter(keysOf('ann', 'mobile')),
      counter([user, app]),
      counter(keysOf('mal')),
      counter(keysOf('ann', 'mobile')),
    ]);
    expect(spy.commands).toEqual(['EVALSHA']);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    const counts = settled.map((s) => (s.status === 'fulfilled' ? s.value.windows.map((w) => w?.count) : undefined));
    expect(counts).toEqual([[2, 2], undefined, undefined, [3, 3]]);
    const wrongType = (settled[1] as PromiseRejectedResult).reason;
    expect(wrongType).toBeInstanceOf(StoreUnavailableError);
    expect(wrongType.message).toMatch(/^RedisCounterStore: Redis failed EVALSHA: .*WRONGTYPE/);
    expect((settled[2] as PromiseRejectedResult).reason.message).toMatch(/not an integer/);
    // The failed requests spent nothing: eve's user key was given back, mal's application key never counted.
    expect(await client.get(`eac:${user}`)).toBe('0');
    expect(await client.get(`eac:${keysOf('mal')[1]}`)).toBeNull();
    expect(await client.get(`eac:${keysOf('ann', 'mobile')[0]}`)).toBe('3');
  });

  it('fails every request of a batch Redis does not answer in time, each with its own 503', async () => {
    const store = new RedisCounterStore({ client, commandTimeoutMs: 100 });
    const counter = counterOf(store);
    await counter(keysOf('ann', 'mobile'));
    const pauser = client.duplicate();
    await pauser.connect();
    try {
      await pauser.sendCommand(['CLIENT', 'PAUSE', '400', 'ALL']);
      const settled = await Promise.allSettled(Array.from({ length: 5 }, () => counter(keysOf('ann', 'mobile'))));
      expect(settled.map((s) => s.status)).toEqual(Array(5).fill('rejected'));
      for (const s of settled) expect((s as PromiseRejectedResult).reason).toBeInstanceOf(RedisTimeoutError);

      const logged: unknown[] = [];
      const limiter = rateLimit({
        store,
        partitionSecret: 'shared-secret',
        address: () => '192.0.2.7',
        log: (e: unknown) => logged.push(e),
      });
      const app = appWith(limiter, (a) => {
        a.get('/v1/things', (_req, res) => res.json({ things: [] }));
        a.use(errorHandler({ production: true, log: false }));
      });
      const { server, url } = await listen(app, '/v1/things');
      servers.push(server);
      await new Promise((resolve) => setTimeout(resolve, 450)); // the pause is over
      await pauser.sendCommand(['CLIENT', 'PAUSE', '400', 'ALL']);
      const answers = await Promise.all(Array.from({ length: 3 }, () => fetch(url)));
      expect(answers.map((res) => res.status)).toEqual([503, 503, 503]);
      for (const res of answers) {
        expect(await res.json()).toEqual({ errors: [{ message: 'A shared state store is unreachable.', code: 50302 }] });
        expect(res.headers.get('retry-after')).toBe('5');
      }
      expect(logged).toHaveLength(3);
      for (const error of logged) expect(error).toBeInstanceOf(RedisTimeoutError);
    } finally {
      pauser.destroy();
    }
  });

  it('40 parallel requests over a limit of 10: 10 pass, each told a different remaining count', async () => {
    const app = appWith(
      rateLimit({
        store: new RedisCounterStore({ client }),
        partitionSecret: 'shared-secret',
        limit: 10,
        address: () => '192.0.2.7',
      }),
      (a) => {
        a.get('/v1/things', (_req, res) => res.json({ things: [] }));
        a.use(errorHandler({ production: true, log: false }));
      },
    );
    const { server, url } = await listen(app, '/v1/things');
    servers.push(server);
    const answers = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const res = await fetch(url);
        await res.arrayBuffer();
        return { status: res.status, remaining: /"user";r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1] };
      }),
    );
    const passed = answers.filter((answer) => answer.status === 200);
    expect(passed.map((answer) => Number(answer.remaining)).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(answers.filter((answer) => answer.status === 429).map((answer) => answer.remaining)).toEqual(Array(30).fill('0'));
  });
});

describeWith(REDIS_SERVER, 'the requests of one turn on a Redis Cluster: one script per hash slot', () => {
  const redisCluster = useRedisCluster();

  it('sends one script per slot, each identity counted exactly', async () => {
    const spy = counted(redisCluster.client as unknown as RedisClient);
    const counter = counterOf(new RedisCounterStore({ client: spy.client, prefix: 'slots:' }), [{ windowMs: 60_000, limit: 4 }]);
    const users = ['ann', 'bob', 'cy'];
    const keys = users.map((user) => storeKeyOf('user', `user:${user}`));
    expect(new Set(keys.map((key) => hashSlot(`slots:${key}`))).size).toBe(3);
    for (const key of keys) await counter([key]); // loads the script on each node
    spy.commands.length = 0;
    const answers = await Promise.all(Array.from({ length: 18 }, (_, i) => counter([keys[i % 3] as string])));
    expect(spy.commands).toEqual(['EVALSHA', 'EVALSHA', 'EVALSHA']);
    for (const [u, key] of keys.entries()) {
      const own = answers.filter((_, i) => i % 3 === u);
      expect(own.map((answer) => answer?.windows[0]?.count)).toEqual([2, 3, 4, 5, 5, 5]);
      expect(own.map((answer) => answer?.refusedAt)).toEqual([-1, -1, -1, 0, 0, 0]);
      expect(await redisCluster.client.get(`slots:${key}`)).toBe('4');
    }
  });
});
