import request from 'supertest';
import { describeWith, freePort, REDIS_SERVER, type RedisCluster, startRedisCluster } from '../support/services.js';
import { DEMO } from './client.js';
import { type RunningProcess, startFailure, startServer } from './harness.js';

/**
 * REDIS_CLUSTER: the shared state on a real three-master Redis Cluster, and
 * two instances on it acting as one service: tokens work across them and
 * the rate-limit counts are exact under concurrency, for an anonymous caller
 * (both policies count its address: one hash slot, one script per batch)
 * and for a user and an application (two keys counted one after the other).
 */
const LIMIT = 10;
const WINDOW_SECONDS = 5;

describeWith(REDIS_SERVER, 'two instances on a Redis Cluster', () => {
  let nodes: RedisCluster;
  let a: RunningProcess;
  let b: RunningProcess;

  beforeAll(async () => {
    // A cluster that requires a password: the server gives the credentials of its URLs to every node.
    nodes = await startRedisCluster(3, { password: 'cluster p@ss' });
    const env = {
      REDIS_CLUSTER: (nodes.rootNodes[0] as { url: string }).url,
      RATE_LIMIT: String(LIMIT),
      RATE_WINDOW: String(WINDOW_SECONDS),
    };
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await nodes?.stop();
  });

  const basic = `Basic ${Buffer.from(`${DEMO.clientId}:${DEMO.clientSecret}`).toString('base64')}`;
  const passwordGrant = (url: string) =>
    request(url)
      .post('/v1/oauth2/token')
      .type('form')
      .set('Authorization', basic)
      .send({ grant_type: 'password', username: DEMO.username, password: DEMO.password });

  /** Sends `count` requests at once, alternating between the instances: their statuses. */
  async function burst(path: string, count: number, headers: Record<string, string> = {}): Promise<number[]> {
    const answers = await Promise.all(
      Array.from({ length: count }, (_, i) => {
        const call = request(i % 2 === 0 ? a.url : b.url).get(path);
        for (const [name, value] of Object.entries(headers)) call.set(name, value);
        return call;
      }),
    );
    for (const res of answers.filter((res) => res.status === 429)) {
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(WINDOW_SECONDS);
    }
    return answers.map((res) => res.status);
  }

  /** Every window opened so far has ended: the next burst starts on fresh counts. */
  const windowsEnded = () => new Promise((resolve) => setTimeout(resolve, WINDOW_SECONDS * 1000 + 200));

  it('each says its state is in a Redis Cluster', () => {
    expect(a.output()).toContain('(state in a Redis Cluster)');
    expect(b.output()).toContain('(state in a Redis Cluster)');
  });

  it('an access token issued by one instance is accepted by the other, a refresh token rotated once', async () => {
    const issued = await passwordGrant(a.url);
    expect(issued.status).toBe(200);
    const me = await request(b.url).get('/v1/me').set('Authorization', `Bearer ${issued.body.access_token}`);
    expect(me.status).toBe(200);
    expect(me.body.id_str).toBe('4611686018427387911');
    const refresh = (url: string) =>
      request(url)
        .post('/v1/oauth2/token')
        .type('form')
        .set('Authorization', basic)
        .send({ grant_type: 'refresh_token', refresh_token: issued.body.refresh_token });
    expect((await refresh(b.url)).status).toBe(200);
    await refresh(a.url); // a retry within the grace answers the rotation again
    const reused = await refresh(a.url);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
  });

  it(`60 parallel requests of one user and application over both: exactly ${LIMIT} pass`, async () => {
    const token = (await passwordGrant(a.url)).body.access_token as string;
    await windowsEnded(); // the token request counted the application once
    const statuses = await burst('/v1/me', 60, { Authorization: `Bearer ${token}` });
    expect(statuses.filter((status) => status === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(60 - LIMIT);
  }, 30_000);

  it(`60 parallel anonymous requests over both: exactly ${LIMIT} pass, the others 429 with Retry-After`, async () => {
    await windowsEnded(); // the token requests counted this address
    const statuses = await burst('/v1/users?limit=1', 60);
    expect(statuses.filter((status) => status === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(60 - LIMIT);
  }, 30_000);
});

describe('REDIS_CLUSTER that cannot be reached', () => {
  it('stops the start with a clear message and exit status 1', async () => {
    const port = await freePort();
    const { code, output } = await startFailure({ REDIS_CLUSTER: `redis://127.0.0.1:${port}` });
    expect(code).toBe(1);
    expect(output).toContain(`reference server: cannot start: cannot reach the Redis Cluster at redis://127.0.0.1:${port}: `);
  });
});
