import request from 'supertest';
import { MemoryState } from '../../examples/server/src/memory-state.js';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../support/services.js';
import { demoAccessToken } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * Bounded memory. Expired state is swept whether or not it
 * is read again, and exports (each a snapshot of every user) are capped.
 */

describe('the in-memory state', () => {
  afterEach(() => jest.useRealTimers());

  it('sweeps expired entries that nobody reads again, and keeps the rest', async () => {
    jest.useFakeTimers({ now: Date.UTC(2026, 0, 1) });
    const state = new MemoryState(1000);
    for (let i = 0; i < 5000; i++) await state.set(`sessions:${i}`, 'a session', 2);
    await state.set('users:seeded', 'for ever');
    await state.set('exports:late', 'kept longer', 10);
    expect(state.size).toBe(5002);
    jest.advanceTimersByTime(1000);
    expect(state.size).toBe(5002);
    jest.advanceTimersByTime(2000);
    expect(state.size).toBe(2);
    expect(await state.get('users:seeded')).toBe('for ever');
    expect(await state.get('exports:late')).toBe('kept longer');
    jest.advanceTimersByTime(10_000);
    expect(state.size).toBe(1);
  });

  it('admits members of a bounded set up to its limit, and again once one expires', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const state = new MemoryState(1000);
    expect(await state.admit('exports:index', 'a', 1_002_000, 2)).toBeUndefined();
    expect(await state.admit('exports:index', 'b', 1_005_000, 2)).toBeUndefined();
    // Full: the answer is when the first place frees up.
    expect(await state.admit('exports:index', 'c', 1_005_000, 2)).toBe(1_002_000);
    jest.advanceTimersByTime(2000);
    expect(await state.admit('exports:index', 'c', 1_007_000, 2)).toBeUndefined();
    expect(await state.admit('exports:index', 'd', 1_007_000, 2)).toBe(1_005_000);
  });
});

const bearerOf = async (url: string): Promise<string> => `Bearer ${await demoAccessToken(url)}`;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Once the cap is reached, POST /v1/exports is 503 with Retry-After: the
 * service is out of room, which is not the caller's rate (the conventions keep 429
 * for the rate limit, whose RateLimit headers still show quota left here).
 */
async function expectCapped(urls: string[], limit: number, keptSeconds: number): Promise<void> {
  const bearer = await bearerOf(urls[0] as string);
  const ask = (i: number) =>
    request(urls[i % urls.length] as string)
      .post('/v1/exports')
      .set('Authorization', bearer);
  const first = await Promise.all(Array.from({ length: limit }, (_, i) => ask(i)));
  expect(first.map((res) => res.status)).toEqual(first.map(() => 202));
  const refused = await ask(limit);
  expect(refused.status).toBe(503);
  expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(refused.body).toEqual({
    errors: [
      expect.objectContaining({
        message: 'Too many exports are being prepared or kept; retry after the time in Retry-After.',
        code: 50300,
      }),
    ],
  });
  const retryAfter = Number(refused.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(keptSeconds);
  // The rate limit was not what refused it (503 50300, not 429), and no RateLimit state names an
  // instant other than Retry-After's (rule 12.4); the policy is still described.
  expect(refused.headers.ratelimit).toBeUndefined();
  expect(refused.headers['ratelimit-policy']).toMatch(/^"user";q=\d+;w=\d+/);
  // The exports asked for before the cap are still handed out.
  const kept = await request(urls[0] as string)
    .get(first[0]?.headers.location ?? '')
    .set('Authorization', bearer);
  expect(kept.status).toBe(200);
  // Once they expire, there is room again.
  await sleep(retryAfter * 1000 + 200);
  expect((await ask(limit + 1)).status).toBe(202);
}

describe('POST /v1/exports is capped (EXPORT_LIMIT)', () => {
  let server: RunningProcess;
  beforeAll(async () => {
    server = await startServer({ EXPORT_LIMIT: '5', EXPORT_KEPT: '2', EXPORT_DELAY: '0', RATE_LIMIT: '100000' });
  });
  afterAll(() => server?.stop());

  it('answers 503 with Retry-After once the pending and kept exports reach the limit, and 202 again once they expire', async () => {
    await expectCapped([server.url], 5, 2);
  });
});

describeWith(REDIS_SERVER, 'POST /v1/exports is capped for the whole service on a shared Redis', () => {
  let redis: RedisServer;
  let a: RunningProcess;
  let b: RunningProcess;
  beforeAll(async () => {
    redis = await startRedis();
    const env = { REDIS_URL: redis.url, EXPORT_LIMIT: '6', EXPORT_KEPT: '2', EXPORT_DELAY: '0', RATE_LIMIT: '100000' };
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  it('two instances together admit no more than the limit', async () => {
    await expectCapped([a.url, b.url], 6, 2);
  });
});
