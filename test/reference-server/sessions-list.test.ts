import { RedisSessionStore } from 'express-api-conventions-authorization-server';
import { createClient } from 'redis';
import request from 'supertest';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../support/services.js';
import { type BrowserSession, demoAccessToken, signIn } from './client.js';
import { type RunningProcess, startServer } from './harness.js';
import { expectDocumented } from './openapi.js';

/**
 * Sessions a user can see and end: each sign-in keeps
 * its own session; `GET /v1/sessions` lists them by public id and
 * `DELETE /v1/sessions/{id}` ends one. Black box, on one instance in memory,
 * and on two instances over one Redis (asked on one, answered on the other).
 */

const XHR = { 'X-Requested-With': 'XMLHttpRequest' };
const FIELDS = ['id', 'createdAt', 'lastSeenAt', 'current', 'device'];
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

interface Listed {
  readonly id: string;
  readonly createdAt: string;
  readonly lastSeenAt: string;
  readonly current: boolean;
  readonly device: string;
}

/** The tests, on `first` and `second`: the same server in memory, two instances over Redis. */
function sessionsContract(servers: () => { first: string; second: string }): void {
  const list = (url: string, session: BrowserSession) => request(url).get('/v1/sessions').set('Cookie', session.cookie).set(XHR);
  const current = (url: string, session: BrowserSession) =>
    request(url).get('/v1/sessions/current').set('Cookie', session.cookie).set(XHR);
  /** The public id of the session a cookie names: the one its list marks current. */
  const idOf = async (url: string, session: BrowserSession): Promise<string> => {
    const listed = (await list(url, session)).body.sessions as Listed[];
    const mine = listed.filter((each) => each.current);
    expect(mine).toHaveLength(1);
    return mine[0]?.id ?? '';
  };

  it('two sign-ins give two live sessions, each listed, with the contract’s fields and no cookie value', async () => {
    const { first, second } = servers();
    const laptop = await signIn(first);
    const res = await request(second)
      .post('/v1/sessions')
      .set('User-Agent', FIREFOX_LINUX)
      .send({ username: 'alice', password: 'wonderland-rabbit-hole' });
    expect(res.status).toBe(201);
    const phone = {
      cookie: ((res.headers['set-cookie'] as unknown as string[])[0] ?? '').split(';')[0] ?? '',
      csrfToken: res.body.csrfToken,
    };
    expect((await current(first, laptop)).status).toBe(200);
    expect((await current(second, phone)).status).toBe(200);

    const asked = await list(second, laptop);
    expect(asked.status).toBe(200);
    expect(asked.headers['cache-control']).toBe('no-store, max-age=0');
    expectDocumented(asked);
    expect(Object.keys(asked.body)).toEqual(['sessions']);
    const listed = asked.body.sessions as Listed[];
    for (const each of listed) {
      expect(Object.keys(each)).toEqual(FIELDS);
      expect(each.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(Date.parse(each.createdAt)).toBeLessThanOrEqual(Date.parse(each.lastSeenAt));
      expect(each.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    for (const cookie of [laptop.cookie, phone.cookie]) expect(asked.text).not.toContain(cookie.split('=')[1]);
    const laptopId = await idOf(first, laptop);
    const phoneId = await idOf(first, phone);
    expect(laptopId).not.toBe(phoneId);
    expect(listed.find((each) => each.id === laptopId)?.current).toBe(true);
    expect(listed.find((each) => each.id === phoneId)).toEqual(
      expect.objectContaining({ current: false, device: 'Firefox on Linux' }),
    );
  });

  it('ending one from the other leaves the rest alive; the ended cookie gets 401 on every instance', async () => {
    const { first, second } = servers();
    const [laptop, phone, tablet] = [await signIn(first), await signIn(second), await signIn(first)];
    const phoneId = await idOf(second, phone);
    const ended = await request(first)
      .delete(`/v1/sessions/${phoneId}`)
      .set('Cookie', laptop.cookie)
      .set('CSRF-Token', laptop.csrfToken);
    expect(ended.status).toBe(204);
    expectDocumented(ended);
    for (const url of [first, second]) {
      expect((await current(url, phone)).status).toBe(401);
      expect((await current(url, laptop)).status).toBe(200);
      expect((await current(url, tablet)).status).toBe(200);
      const ids = ((await list(url, tablet)).body.sessions as Listed[]).map((each) => each.id);
      expect(ids).not.toContain(phoneId);
    }
    const again = await request(second)
      .delete(`/v1/sessions/${phoneId}`)
      .set('Cookie', laptop.cookie)
      .set('CSRF-Token', laptop.csrfToken);
    expect(again.status).toBe(404);
  });

  it('answers 404 JSON for an unknown session id', async () => {
    const { first } = servers();
    const laptop = await signIn(first);
    const res = await request(first)
      .delete('/v1/sessions/AAAAAAAAAAAAAAAAAAAAAA')
      .set('Cookie', laptop.cookie)
      .set('CSRF-Token', laptop.csrfToken);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ errors: [{ message: 'No such session.', code: 40402 }] });
    expectDocumented(res);
  });

  it('refuses DELETE with the cookie but without the CSRF token: 403, and the session lives on', async () => {
    const { first, second } = servers();
    const laptop = await signIn(first);
    const phone = await signIn(second);
    const phoneId = await idOf(second, phone);
    const res = await request(second).delete(`/v1/sessions/${phoneId}`).set('Cookie', laptop.cookie);
    expect(res.status).toBe(403);
    expect(res.body.errors[0].code).toBe(40302);
    expect((await current(first, phone)).status).toBe(200);
  });

  it('lists to a cookie only for the page’s scripts (403 without X-Requested-With), and 401 to nobody', async () => {
    const { first } = servers();
    const laptop = await signIn(first);
    const refused = await request(first).get('/v1/sessions').set('Cookie', laptop.cookie);
    expect(refused.status).toBe(403);
    const anonymous = await request(first).get('/v1/sessions').set(XHR);
    expect(anonymous.status).toBe(401);
    expectDocumented(anonymous);
  });

  it('with a bearer token and no cookie: lists (none current) and ends a session without CSRF', async () => {
    const { first, second } = servers();
    const phone = await signIn(second);
    const phoneId = await idOf(second, phone);
    const token = await demoAccessToken(first);
    const listed = await request(second).get('/v1/sessions').set('Authorization', `Bearer ${token}`);
    expect(listed.status).toBe(200);
    const sessions = listed.body.sessions as Listed[];
    expect(sessions.map((each) => each.id)).toContain(phoneId);
    expect(sessions.every((each) => each.current === false)).toBe(true);
    const ended = await request(first).delete(`/v1/sessions/${phoneId}`).set('Authorization', `Bearer ${token}`);
    expect(ended.status).toBe(204);
    expect((await current(second, phone)).status).toBe(401);
  });
}

describe('sessions a user can see and end, in memory', () => {
  let server: RunningProcess;
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT: '100000' });
  });
  afterAll(async () => {
    await server?.stop();
  });
  sessionsContract(() => ({ first: server.url, second: server.url }));
});

describeWith(REDIS_SERVER, 'sessions a user can see and end, on two instances over one Redis', () => {
  let redis: RedisServer;
  let a: RunningProcess;
  let b: RunningProcess;
  beforeAll(async () => {
    redis = await startRedis();
    a = await startServer({ REDIS_URL: redis.url, RATE_LIMIT: '100000' });
    b = await startServer({ REDIS_URL: redis.url, RATE_LIMIT: '100000' });
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });
  sessionsContract(() => ({ first: a.url, second: b.url }));

  it('answers 404 for another user’s session id, and leaves that session alive', async () => {
    // Only the demo account signs in over HTTP: another user's session is opened in the shared store directly.
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      // The second seeded user (the demo user is the first).
      const theirs = await new RedisSessionStore({ client }).create((4611686018427387911n + 1_000_003n).toString());
      const laptop = await signIn(a.url);
      const res = await request(b.url)
        .delete(`/v1/sessions/${theirs.session.id}`)
        .set('Cookie', laptop.cookie)
        .set('CSRF-Token', laptop.csrfToken);
      expect(res.status).toBe(404);
      expect(res.body.errors[0].code).toBe(40402);
      const stillTheirs = await request(a.url)
        .get('/v1/sessions/current')
        .set('Cookie', `__Host-session=${theirs.cookie}`)
        .set(XHR);
      expect(stillTheirs.status).toBe(200);
      expect(stillTheirs.body.id_str).toBe(theirs.session.subject);
    } finally {
      await client.quit();
    }
  });
});
