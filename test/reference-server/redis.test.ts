import { createClient } from 'redis';
import request from 'supertest';
import { DEFAULT_REVOKED_POLL_INTERVAL_MS } from '../../src/oauth2/redis-revoked-families.js';
import { describeWith, freePort, REDIS_SERVER, type RedisServer, startRedis } from '../support/services.js';
import { MACHINE_ALLOWANCE_MS, waitUntil } from '../support/timing.js';
import { DEMO, DEMO_SERVICE, freshEmail, serviceAccessToken, signIn } from './client.js';
import { type RunningProcess, startFailure, startServer } from './harness.js';
import { expectDocumented } from './openapi.js';

/**
 * REDIS_URL: the shared state moves to a real redis-server, and two
 * instances on one Redis, behind two ports, act as one service.
 */
describeWith(REDIS_SERVER, 'two instances on one Redis', () => {
  let redis: RedisServer;
  let a: RunningProcess;
  let b: RunningProcess;

  beforeAll(async () => {
    redis = await startRedis();
    a = await startServer({ REDIS_URL: redis.url, EXPORT_DELAY: '0', RATE_LIMIT: '100000' });
    b = await startServer({ REDIS_URL: redis.url, EXPORT_DELAY: '0', RATE_LIMIT: '100000' });
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  it('each says it keeps its state in Redis', () => {
    expect(a.output()).toContain('(state in Redis)');
    expect(b.output()).toContain('(state in Redis)');
  });

  it('both list the same seeded users, seeded once', async () => {
    const [fromA, fromB] = await Promise.all([
      request(a.url).get('/v1/users?limit=100'),
      request(b.url).get('/v1/users?limit=100'),
    ]);
    expect(fromA.status).toBe(200);
    expect(fromA.text).toBe(fromB.text);
    expect(fromA.body.users.length).toBeGreaterThanOrEqual(25);
    expectDocumented(fromA);
  });

  describe('users', () => {
    it('a user created on one instance is read, changed and deleted on the other', async () => {
      const session = await signIn(a.url);
      const created = await request(a.url)
        .post('/v1/users')
        .set('Cookie', session.cookie)
        .set('CSRF-Token', session.csrfToken)
        .send({ name: 'Rhea Shared', email: freshEmail(), gender: 'female' });
      expect(created.status).toBe(201);
      const location = created.headers.location ?? '';
      const read = await request(b.url).get(location);
      expect(read.status).toBe(200);
      expect(read.text).toBe(created.text);
      const patched = await request(b.url)
        .patch(location)
        .set('Cookie', session.cookie)
        .set('CSRF-Token', session.csrfToken)
        .send({ name: 'Rhea Moved' });
      expect(patched.body.name).toBe('Rhea Moved');
      expect((await request(a.url).get(location)).body.name).toBe('Rhea Moved');
      const deleted = await request(a.url).delete(location).set('Cookie', session.cookie).set('CSRF-Token', session.csrfToken);
      expect(deleted.status).toBe(204);
      expect((await request(b.url).get(location)).status).toBe(404);
    });

    it('an email taken through one instance answers 409 on the other, even when both race for it', async () => {
      const session = await signIn(a.url);
      const email = freshEmail();
      const create = (url: string) =>
        request(url)
          .post('/v1/users')
          .set('Cookie', session.cookie)
          .set('CSRF-Token', session.csrfToken)
          .send({ name: 'Race Winner', email, gender: 'male' });
      const statuses = (await Promise.all([create(a.url), create(b.url), create(a.url), create(b.url)])).map((r) => r.status);
      expect(statuses.sort()).toEqual([201, 409, 409, 409]);
    });
  });

  describe('sessions', () => {
    it('a session opened on one instance works on the other, and signing out on it ends it on both', async () => {
      const session = await signIn(a.url);
      const current = await request(b.url)
        .get('/v1/sessions/current')
        .set('Cookie', session.cookie)
        .set('X-Requested-With', 'XMLHttpRequest');
      expect(current.status).toBe(200);
      expect(current.body.csrfToken).toBe(session.csrfToken);
      const out = await request(b.url)
        .delete('/v1/sessions/current')
        .set('Cookie', session.cookie)
        .set('CSRF-Token', session.csrfToken);
      expect(out.status).toBe(204);
      const after = await request(a.url)
        .get('/v1/sessions/current')
        .set('Cookie', session.cookie)
        .set('X-Requested-With', 'XMLHttpRequest');
      expect(after.status).toBe(401);
    });
  });

  describe('parallel wrong passwords', () => {
    it('60 at POST /v1/sessions from one address, over both instances: at most 10 checked, the rest 429 with Retry-After', async () => {
      const username = `parallel-${Date.now()}@example.com`;
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          request(i % 2 === 0 ? a.url : b.url)
            .post('/v1/sessions')
            .send({ username, password: 'not-the-password' }),
        ),
      );
      const checked = results.filter((res) => res.status === 401);
      expect(checked.length).toBeGreaterThanOrEqual(1);
      expect(checked.length).toBeLessThanOrEqual(10);
      for (const res of results.filter((each) => each.status !== 401)) {
        expect([429, 503]).toContain(res.status);
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
    });
  });

  describe('a new sign-in on one instance', () => {
    it('keeps the earlier session live on both', async () => {
      const earlier = await signIn(a.url);
      const later = await signIn(b.url);
      for (const url of [a.url, b.url]) {
        const current = (cookie: string) =>
          request(url).get('/v1/sessions/current').set('Cookie', cookie).set('X-Requested-With', 'XMLHttpRequest');
        expect((await current(earlier.cookie)).status).toBe(200);
        expect((await current(later.cookie)).status).toBe(200);
      }
    });
  });

  describe('exports', () => {
    it('an export asked for on one instance is handed out by the other', async () => {
      const session = await signIn(a.url);
      const asked = await request(a.url).post('/v1/exports').set('Cookie', session.cookie).set('CSRF-Token', session.csrfToken);
      expect(asked.status).toBe(202);
      const ready = await request(b.url)
        .get(asked.headers.location ?? '')
        .set('Cookie', session.cookie);
      expect(ready.status).toBe(200);
      expect(ready.body.id).toBe(asked.body.id);
    });
  });

  describe('tokens', () => {
    const basic = `Basic ${Buffer.from(`${DEMO.clientId}:${DEMO.clientSecret}`).toString('base64')}`;
    const token = (url: string, form: Record<string, string>) =>
      request(url).post('/v1/oauth2/token').type('form').set('Authorization', basic).send(form);
    const password = { grant_type: 'password', username: DEMO.username, password: DEMO.password };
    const refresh = (refreshToken: string) => ({ grant_type: 'refresh_token', refresh_token: refreshToken });

    it('an access token issued by one instance is accepted by the other', async () => {
      const issued = await token(a.url, password);
      expect(issued.status).toBe(200);
      const me = await request(b.url).get('/v1/me').set('Authorization', `Bearer ${issued.body.access_token}`);
      expect(me.status).toBe(200);
      expect(me.body.id_str).toBe('4611686018427387911');
    });

    it('a refresh token rotated on one instance is refused on the other, and its reuse revokes the family on both', async () => {
      const issued = await token(a.url, password);
      const rotated = await token(b.url, refresh(issued.body.refresh_token));
      expect(rotated.status).toBe(200);
      // The old token again, on the instance that issued it: once, within the default grace, a retry...
      const retry = await token(a.url, refresh(issued.body.refresh_token));
      expect(retry.body.refresh_token).toBe(rotated.body.refresh_token);
      // ...and then reuse.
      const reused = await token(a.url, refresh(issued.body.refresh_token));
      expect(reused.status).toBe(400);
      expect(reused.body.error).toBe('invalid_grant');
      // The whole family is revoked: the newest token fails on either instance.
      expect((await token(b.url, refresh(rotated.body.refresh_token))).status).toBe(400);
      expect((await token(a.url, refresh(rotated.body.refresh_token))).status).toBe(400);
    });

    it('stops the access tokens of a revoked family on every instance within the revocation poll interval, not at their expiry', async () => {
      const issued = await token(a.url, password);
      const rotated = await token(a.url, refresh(issued.body.refresh_token));
      const bearer = `Bearer ${rotated.body.access_token}`;
      expect((await request(b.url).get('/v1/me').set('Authorization', bearer)).status).toBe(200);
      // Reuse of the first refresh token on one instance (its one retry spent) revokes the family...
      expect((await token(a.url, refresh(issued.body.refresh_token))).status).toBe(200);
      expect((await token(a.url, refresh(issued.body.refresh_token))).body.error).toBe('invalid_grant');
      const revokedAt = Date.now();
      // ...and its newest access token is refused on the other within the interval it reads revocations at.
      let refused: request.Response | undefined;
      await waitUntil(async () => {
        const res = await request(b.url).get('/v1/me').set('Authorization', bearer);
        if (res.status === 401) refused = res;
        return refused !== undefined;
      }, 'a 401 on the other instance');
      expect(Date.now() - revokedAt).toBeLessThan(DEFAULT_REVOKED_POLL_INTERVAL_MS + MACHINE_ALLOWANCE_MS);
      expect(refused?.status).toBe(401);
      expect(refused?.headers['cache-control']).toBe('no-store');
      expect(refused?.headers.pragma).toBe('no-cache');
      expect(refused?.body).toEqual({ error: 'invalid_token', error_description: 'The access token was revoked.' });
      expect((await request(a.url).get('/v1/me').set('Authorization', bearer)).status).toBe(401);
    });

    it('lets one of two concurrent refreshes with one token rotate, the other is its one retry, a third revokes', async () => {
      const issued = await token(a.url, password);
      const answers = await Promise.all([
        token(a.url, refresh(issued.body.refresh_token)),
        token(b.url, refresh(issued.body.refresh_token)),
      ]);
      expect(answers.map((res) => res.status)).toEqual([200, 200]);
      expect(answers[0]?.body.refresh_token).toBe(answers[1]?.body.refresh_token);
      expect((await token(b.url, refresh(issued.body.refresh_token))).status).toBe(400);
      expect((await token(a.url, refresh(answers[0]?.body.refresh_token))).status).toBe(400);
    });
  });

  describe("a machine client's tokens", () => {
    /** GET /v1/users with the token, on both instances: its statuses. */
    const statuses = (auth: string) =>
      Promise.all(
        [a, b].map(async (instance) => (await request(instance.url).get('/v1/users?limit=1').set('Authorization', auth)).status),
      );

    it('stop working on both instances once the client is blocked, and once it is removed, in the client store they share', async () => {
      const auth = `Bearer ${await serviceAccessToken(a.url)}`;
      expect(await statuses(auth)).toEqual([200, 200]);
      const raw = createClient({ url: redis.url });
      await raw.connect();
      try {
        const [key, ...others] = await raw.keys(`*client:${DEMO_SERVICE.clientId}`);
        expect([key, others]).toEqual([expect.any(String), []]);
        const registration = await raw.hGetAll(key as string);
        await raw.hSet(key as string, 'blocked', '1');
        expect(await statuses(auth)).toEqual([401, 401]);
        await raw.hSet(key as string, 'blocked', '0');
        expect(await statuses(auth)).toEqual([200, 200]);
        await raw.del(key as string);
        const removed = await request(b.url).get('/v1/users?limit=1').set('Authorization', auth);
        expect([removed.status, removed.body]).toEqual([
          401,
          { error: 'invalid_token', error_description: 'The client of the access token is no longer allowed.' },
        ]);
        expect(removed.headers['www-authenticate']).toMatch(/error="invalid_token"/);
        await raw.hSet(key as string, registration);
      } finally {
        await raw.close();
      }
    });
  });

  describe('a restart', () => {
    it('keeps what was written and does not seed again', async () => {
      const session = await signIn(a.url);
      const created = await request(a.url)
        .post('/v1/users')
        .set('Cookie', session.cookie)
        .set('CSRF-Token', session.csrfToken)
        .send({ name: 'Stays Put', email: freshEmail(), gender: 'male' });
      const seeded = await request(a.url)
        .delete('/v1/users/4611686018428387914')
        .set('Cookie', session.cookie)
        .set('CSRF-Token', session.csrfToken);
      expect(seeded.status).toBe(204);
      await a.stop();
      a = await startServer({ REDIS_URL: redis.url, EXPORT_DELAY: '0', RATE_LIMIT: '100000' });
      expect((await request(a.url).get(created.headers.location ?? '')).status).toBe(200);
      expect((await request(a.url).get('/v1/users/4611686018428387914')).status).toBe(404);
    });
  });
});

describeWith(REDIS_SERVER, 'two instances on one Redis: rate limits', () => {
  const LIMIT = 6;
  let redis: RedisServer;
  let a: RunningProcess;
  let b: RunningProcess;

  beforeAll(async () => {
    redis = await startRedis();
    [a, b] = await Promise.all([
      startServer({ REDIS_URL: redis.url, RATE_LIMIT: String(LIMIT) }),
      startServer({ REDIS_URL: redis.url, RATE_LIMIT: String(LIMIT) }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  it('share rate-limit counts: the quota is spent across both instances', async () => {
    const statuses: number[] = [];
    const remaining: unknown[] = [];
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await request(i % 2 === 0 ? a.url : b.url).get('/v1/users?limit=1');
      statuses.push(res.status);
      remaining.push(/"user";r=(\d+)/.exec(res.headers.ratelimit ?? '')?.[1]);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0', '0', '0']);
  });

  it('agree on the partition keys, drawn once for the service', async () => {
    const [fromA, fromB] = await Promise.all([request(a.url).get('/v1/nothing'), request(b.url).get('/v1/nothing')]);
    expect(fromA.headers['ratelimit-policy']).toBe(fromB.headers['ratelimit-policy']);
  });
});

describe('REDIS_URL that cannot be reached', () => {
  it('stops the start with a clear message and exit status 1', async () => {
    const port = await freePort();
    const { code, output } = await startFailure({ REDIS_URL: `redis://127.0.0.1:${port}` });
    expect(code).toBe(1);
    expect(output).toContain(
      `reference server: cannot start: cannot reach Redis at redis://127.0.0.1:${port}: connect ECONNREFUSED`,
    );
  });
});
