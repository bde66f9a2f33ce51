import { createClient } from 'redis';
import request from 'supertest';
import { describeWith, REDIS_SERVER } from '../support/services.js';
import { waitUntil } from '../support/timing.js';
import { demoAccessToken, freshEmail, signIn } from './client.js';
import { type ControlledRedis, type RunningProcess, startControlledRedis, startServer } from './harness.js';

/**
 * The signing, CSRF and rate-partition secrets. Pinned in
 * the environment, every instance uses them; unpinned, instances sharing a
 * Redis agree on them, also after that Redis restarts empty.
 */

const TOKEN_SECRET = 'pinned-token-secret-0123456789abcdef';
const CSRF_SECRET = 'pinned-csrf-secret-0123456789abcdefgh';
const RATE_LIMIT_PARTITION_SECRET = 'pinned-partition-secret-0123456789ab';
// Instances behind one address name it as their issuer (the tokens' `iss`), whatever port each listens on.
const ISSUER = 'https://api.example.test';
const PINNED = { TOKEN_SECRET, CSRF_SECRET, RATE_LIMIT_PARTITION_SECRET, ISSUER };

const accessToken = demoAccessToken;

const me = (url: string, token: string) => request(url).get('/v1/me').set('Authorization', `Bearer ${token}`);
const policy = async (url: string) => (await request(url).get('/v1/users?limit=1')).headers['ratelimit-policy'];

describe('secrets pinned in the environment', () => {
  let a: RunningProcess;
  let b: RunningProcess;
  beforeAll(async () => {
    // Two instances that share nothing but their settings.
    [a, b] = await Promise.all([startServer(PINNED), startServer(PINNED)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('TOKEN_SECRET: a token one instance signs is accepted by the other', async () => {
    expect((await me(b.url, await accessToken(a.url))).status).toBe(200);
  });

  it('RATE_LIMIT_PARTITION_SECRET: both write the same partition keys', async () => {
    const fromA = await policy(a.url);
    expect(fromA).toMatch(/;pk=:/);
    expect(await policy(b.url)).toBe(fromA);
  });

  it('without them, two such instances disagree (the test above is not vacuous)', async () => {
    const c = await startServer();
    try {
      expect((await me(c.url, await accessToken(a.url))).status).toBe(401);
      expect(await policy(c.url)).not.toBe(await policy(a.url));
    } finally {
      await c.stop();
    }
  });
});

describeWith(REDIS_SERVER, 'secrets on a shared Redis', () => {
  let redis: ControlledRedis;
  const started: RunningProcess[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const server = await startServer({ REDIS_URL: redis.url, RATE_LIMIT: '100000', ...env });
    started.push(server);
    return server;
  };

  /** The secrets published in Redis right now. */
  const published = async (): Promise<string[]> => {
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      return (await client.keys('reference-server:secrets:*')).sort();
    } finally {
      await client.close();
    }
  };

  const republished = () =>
    waitUntil(async () => (await published()).length === 3, 'the running instance to publish its secrets again');

  beforeAll(async () => {
    redis = await startControlledRedis();
  });
  // Each test starts its own instances: one left running would publish its secrets again.
  afterEach(async () => {
    await Promise.all(started.splice(0).map((server) => server.stop()));
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('CSRF_SECRET pinned: not published, and a session keeps its CSRF token across a restart of the instance', async () => {
    const first = await start({ CSRF_SECRET });
    expect(await published()).toEqual(['reference-server:secrets:access-token', 'reference-server:secrets:rate-limit-partition']);
    const session = await signIn(first.url);
    await first.stop();
    const second = await start({ CSRF_SECRET });
    const current = await request(second.url)
      .get('/v1/sessions/current')
      .set('Cookie', session.cookie)
      .set('X-Requested-With', 'XMLHttpRequest');
    expect(current.status).toBe(200);
    expect(current.body.csrfToken).toBe(session.csrfToken);
    const write = await request(second.url)
      .post('/v1/users')
      .set('Cookie', session.cookie)
      .set('CSRF-Token', session.csrfToken)
      .send({ name: 'Csrf Survivor', email: freshEmail(), gender: 'male' });
    expect(write.status).toBe(201);
    await second.stop();
  });

  it('unpinned: after Redis restarts empty, an instance started afterwards adopts the secrets of the running one', async () => {
    const old = await start();
    const before = await accessToken(old.url);
    const oldPolicy = await policy(old.url);
    await redis.restart();
    // The running instance reconnects and publishes again what it uses.
    await republished();
    const late = await start();
    // A token from before the restart, from the old instance, works on the new one, and the reverse.
    expect((await me(late.url, before)).status).toBe(200);
    expect((await me(old.url, await accessToken(late.url))).status).toBe(200);
    expect(await policy(late.url)).toBe(oldPolicy);
    expect(late.output()).not.toContain('adopted');
  }, 30_000);

  it('unpinned: when an instance started during the outage drew its own, the running one adopts them', async () => {
    const old = await start();
    // The old instance cannot reconnect while it is paused: the new one starts on an empty Redis first.
    old.child.kill('SIGSTOP');
    try {
      await redis.restart();
      const early = await start();
      old.child.kill('SIGCONT');
      await waitUntil(() => old.output().includes('adopted'), 'the paused instance to adopt the secrets');
      expect(old.output()).toContain(
        'reference server: adopted the token, csrf, partition secret(s) published while Redis was away',
      );
      // They agree again, in both directions.
      expect((await me(old.url, await accessToken(early.url))).status).toBe(200);
      expect((await me(early.url, await accessToken(old.url))).status).toBe(200);
      expect(await policy(old.url)).toBe(await policy(early.url));
    } finally {
      old.child.kill('SIGCONT');
    }
  }, 30_000);
});
