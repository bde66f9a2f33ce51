import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { waitUntil } from '../support/timing.js';
import { DEMO, signIn } from './client.js';
import { type RunningProcess, startServer } from './harness.js';
import { expectDocumented } from './openapi.js';

/**
 * Browser sessions, CSRF, browser-script-only endpoints, sign-out, and the
 * asynchronous exports of the reference server, black box, state in memory.
 */

let server: RunningProcess;
const api = () => request(server.url);

beforeAll(async () => {
  server = await startServer({ EXPORT_DELAY: '1', RATE_LIMIT: '100000' });
});

afterAll(async () => {
  await server?.stop();
});

describe('POST /v1/sessions', () => {
  it('signs in from a form: 201, a Secure HttpOnly SameSite cookie, and { csrfToken }', async () => {
    const res = await api().post('/v1/sessions').type('form').send({ username: DEMO.username, password: DEMO.password });
    expect(res.status).toBe(201);
    const cookies = res.headers['set-cookie'] as unknown as string[];
    expect(cookies).toHaveLength(2);
    expect(cookies[0]).toMatch(
      /^__Host-session=[A-Za-z0-9_-]{43}; Max-Age=28800; Path=\/; Expires=[^;]+ GMT; HttpOnly; Secure; SameSite=Lax$/,
    );
    expect(cookies[1]).toMatch(
      /^__Host-device=[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}; Path=\/; Max-Age=15552000; HttpOnly; Secure; SameSite=Strict$/,
    );
    expect(res.body).toEqual({ csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(res.headers.location).toBe('/v1/sessions/current');
    expectDocumented(res);
  });

  it('signs in from JSON as well', async () => {
    const res = await api().post('/v1/sessions').send({ username: DEMO.username, password: DEMO.password });
    expect(res.status).toBe(201);
  });

  it('gives each session its own CSRF token', async () => {
    const [a, b] = await Promise.all([signIn(server.url), signIn(server.url)]);
    expect(a.csrfToken).not.toBe(b.csrfToken);
    expect(a.cookie).not.toBe(b.cookie);
  });

  describe('no user enumeration', () => {
    it('answers a wrong password and an unknown user with the same 401 and no cookie', async () => {
      const wrong = await api().post('/v1/sessions').type('form').send({ username: DEMO.username, password: 'guess' });
      const unknown = await api().post('/v1/sessions').type('form').send({ username: 'mallory', password: 'guess' });
      expect(wrong.status).toBe(401);
      expect(wrong.body).toEqual({ errors: [{ message: 'The username or password is not right.', code: 40100 }] });
      expect(unknown.status).toBe(401);
      expect(unknown.body).toEqual(wrong.body);
      // RFC 9110 §15.5.2: every 401 carries a challenge.
      expect(wrong.headers['www-authenticate']).toBe('Bearer realm="reference-server"');
      expect(unknown.headers['www-authenticate']).toBe(wrong.headers['www-authenticate']);
      expect(wrong.headers['set-cookie']).toBeUndefined();
      expectDocumented(wrong);
    });
  });

  describe('repeated failures', () => {
    it('are throttled per username: after 10, even the right password gets 429 with Retry-After', async () => {
      const fresh = await startServer({ DEMO_USERNAME: 'dodo', DEMO_PASSWORD: 'caucus-race-winner', RATE_LIMIT: '100000' });
      try {
        const attempt = (password: string) =>
          request(fresh.url).post('/v1/sessions').type('form').send({ username: 'dodo', password });
        for (let i = 0; i < 10; i++) expect((await attempt('guess')).status).toBe(401);
        const throttled = await attempt('caucus-race-winner');
        expect(throttled.status).toBe(429);
        expect(throttled.body.errors[0].code).toBe(42901);
        expect(throttled.body.errors[0].message).toBe(
          'Too many failed sign-in attempts for this username from this address; retry after the time in Retry-After.',
        );
        expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(800);
        expect(throttled.headers['set-cookie']).toBeUndefined();
      } finally {
        await fresh.stop();
      }
    });
  });

  describe('lock-outs that cannot be aimed', () => {
    /** A form POST from a chosen loopback address (127.0.0.0/8 is all this host's), so the server sees another req.ip. */
    const postFrom = (url: string, localAddress: string, path: string, form: Record<string, string>) =>
      new Promise<{ status: number; headers: Record<string, unknown>; body: Record<string, unknown> }>((resolve, reject) => {
        const body = new URLSearchParams(form).toString();
        const target = new URL(path, url);
        const req = httpRequest(
          {
            host: target.hostname,
            port: target.port,
            path: target.pathname,
            method: 'POST',
            localAddress,
            headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk) => {
              text += chunk;
            });
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : {} }),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      });

    it('ten wrong passwords from one address refuse that address only; the owner signs in from another, at both doors', async () => {
      const fresh = await startServer({ DEMO_USERNAME: 'dodo', DEMO_PASSWORD: 'caucus-race-winner', RATE_LIMIT: '100000' });
      try {
        const browserFrom = (address: string, password: string) =>
          postFrom(fresh.url, address, '/v1/sessions', { username: 'dodo', password });
        const tokenFrom = (address: string, password: string) =>
          postFrom(fresh.url, address, '/v1/oauth2/token', { grant_type: 'password', username: 'dodo', password });
        for (let i = 0; i < 10; i++) expect((await tokenFrom('127.0.0.2', 'guess')).status).toBe(400);
        expect((await browserFrom('127.0.0.2', 'caucus-race-winner')).status).toBe(429);
        // Before: 429 for every address, the owner's too, for about 897 s.
        expect((await browserFrom('127.0.0.3', 'caucus-race-winner')).status).toBe(201);
        expect((await tokenFrom('127.0.0.4', 'caucus-race-winner')).status).toBe(200);
        expect((await tokenFrom('127.0.0.2', 'caucus-race-winner')).status).toBe(429);
      } finally {
        await fresh.stop();
      }
    });

    it('failures from three addresses delay the username briefly (Retry-After 1 s), not for the window', async () => {
      const fresh = await startServer({ DEMO_USERNAME: 'dodo', DEMO_PASSWORD: 'caucus-race-winner', RATE_LIMIT: '100000' });
      try {
        for (const address of ['127.0.0.5', '127.0.0.6', '127.0.0.7']) {
          expect((await postFrom(fresh.url, address, '/v1/sessions', { username: 'dodo', password: 'guess' })).status).toBe(401);
        }
        const delayed = await postFrom(fresh.url, '127.0.0.8', '/v1/sessions', {
          username: 'dodo',
          password: 'caucus-race-winner',
        });
        expect(delayed.status).toBe(429);
        expect(delayed.headers['retry-after']).toBe('1');
        const delayedAt = Date.now();
        await waitUntil(() => Date.now() > delayedAt + 1000, 'the Retry-After second to pass');
        const later = await postFrom(fresh.url, '127.0.0.8', '/v1/sessions', {
          username: 'dodo',
          password: 'caucus-race-winner',
        });
        expect(later.status).toBe(201);
      } finally {
        await fresh.stop();
      }
    });
  });

  describe('one sign-in guard with the token endpoint (one allowance of failures for both doors)', () => {
    const tokenGrant = (url: string, username: string, password: string, headers: Record<string, string> = {}) =>
      request(url).post('/v1/oauth2/token').type('form').set(headers).send({ grant_type: 'password', username, password });
    const browser = (url: string, username: string, password: string, headers: Record<string, string> = {}) =>
      request(url).post('/v1/sessions').type('form').set(headers).send({ username, password });
    const count = (statuses: readonly number[], ...wanted: number[]) => statuses.filter((s) => wanted.includes(s)).length;

    it('checks exactly 10 of 60 parallel wrong passwords sent to both doors, and refuses the rest with 429', async () => {
      const fresh = await startServer({ DEMO_USERNAME: 'dodo', DEMO_PASSWORD: 'caucus-race-winner', RATE_LIMIT: '100000' });
      try {
        const results = await Promise.all(
          Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? tokenGrant : browser)(fresh.url, 'dodo', `guess-${i}`)),
        );
        const statuses = results.map((res) => res.status);
        expect(count(statuses, 400, 401)).toBe(10);
        expect(count(statuses, 429)).toBe(50);
        // Still throttled at both doors, for the right password too.
        expect((await browser(fresh.url, 'dodo', 'caucus-race-winner')).status).toBe(429);
        expect((await tokenGrant(fresh.url, 'dodo', 'caucus-race-winner')).status).toBe(429);
      } finally {
        await fresh.stop();
      }
    });

    it('refuses the browser sign-in of a user the token endpoint throttled, even with the right password', async () => {
      const fresh = await startServer({ DEMO_USERNAME: 'dodo', DEMO_PASSWORD: 'caucus-race-winner', RATE_LIMIT: '100000' });
      try {
        for (let i = 0; i < 10; i++) expect((await tokenGrant(fresh.url, 'dodo', 'guess')).status).toBe(400);
        const throttled = await browser(fresh.url, 'dodo', 'caucus-race-winner');
        expect(throttled.status).toBe(429);
        expect(throttled.body).toEqual({
          errors: [
            {
              message:
                'Too many failed sign-in attempts for this username from this address; retry after the time in Retry-After.',
              code: 42901,
            },
          ],
        });
        expect(throttled.headers['set-cookie']).toBeUndefined();
        expectDocumented(throttled);
      } finally {
        await fresh.stop();
      }
    });

    it('refuses the token endpoint to a user the browser door throttled, whatever the spelling or X-Forwarded-For', async () => {
      const fresh = await startServer({ DEMO_USERNAME: 'dodo', DEMO_PASSWORD: 'caucus-race-winner', RATE_LIMIT: '100000' });
      try {
        const spellings = ['dodo', 'DODO', ' Dodo ', 'ｄｏｄｏ'];
        for (let i = 0; i < 10; i++) {
          const spoofed = { 'X-Forwarded-For': `198.51.100.${i}` };
          expect((await browser(fresh.url, spellings[i % 4] as string, 'guess', spoofed)).status).toBe(401);
        }
        const throttled = await tokenGrant(fresh.url, 'Dodo', 'caucus-race-winner', { 'X-Forwarded-For': '203.0.113.50' });
        expect(throttled.status).toBe(429);
        expect(throttled.body).toEqual({
          error: 'too_many_requests',
          error_description:
            'Too many failed sign-in attempts for this username from this address; retry after the time in Retry-After.',
        });
        expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(800);
      } finally {
        await fresh.stop();
      }
    });

    it('never answers 429 to 200 sequential correct sign-ins from one address, through both doors', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++) {
        statuses.push((await (i % 2 === 0 ? tokenGrant : browser)(server.url, DEMO.username, DEMO.password)).status);
      }
      expect(count(statuses, 200)).toBe(100);
      expect(count(statuses, 201)).toBe(100);
    });

    it('never answers 429 to 50 parallel correct sign-ins from one address, through both doors', async () => {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? tokenGrant : browser)(server.url, DEMO.username, DEMO.password)),
      );
      const statuses = results.map((res) => res.status);
      expect(count(statuses, 200)).toBe(25);
      expect(count(statuses, 201)).toBe(25);
    });
  });

  it('answers 400 when a field is missing, naming the field (validate())', async () => {
    const res = await api().post('/v1/sessions').type('form').send({ username: DEMO.username });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ code: 40005, field: 'password' })]);
    expectDocumented(res);
  });
});

describe('GET /v1/sessions/current (browser-script-only)', () => {
  it('answers the session user to a request with X-Requested-With: XMLHttpRequest', async () => {
    const session = await signIn(server.url);
    const res = await api().get('/v1/sessions/current').set('Cookie', session.cookie).set('X-Requested-With', 'XMLHttpRequest');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Alice Liddell', email: 'alice@example.com', csrfToken: session.csrfToken });
    expectDocumented(res);
  });

  it('refuses a request without X-Requested-With with 403 JSON', async () => {
    const session = await signIn(server.url);
    const res = await api().get('/v1/sessions/current').set('Cookie', session.cookie);
    expect(res.status).toBe(403);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body.errors[0].code).toBe(40301);
    expectDocumented(res);
  });

  it('answers 401 without a session', async () => {
    const res = await api().get('/v1/sessions/current').set('X-Requested-With', 'XMLHttpRequest');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="reference-server"');
    expectDocumented(res);
  });
});

describe('CSRF: a state-changing request authenticated by the session cookie', () => {
  const newUser = { name: 'Cara Forged', email: 'cara.forged@example.com', gender: 'female' };

  it('is refused with 403 JSON without the token', async () => {
    const session = await signIn(server.url);
    const res = await api().post('/v1/users').set('Cookie', session.cookie).send(newUser);
    expect(res.status).toBe(403);
    expect(res.body.errors[0].code).toBe(40302);
    expectDocumented(res);
  });

  it('is refused with a token of another session', async () => {
    // Both sessions are live: a token of one is worthless in the other.
    const theirs = await signIn(server.url);
    const mine = await signIn(server.url);
    const res = await api().post('/v1/users').set('Cookie', mine.cookie).set('CSRF-Token', theirs.csrfToken).send(newUser);
    expect(res.status).toBe(403);
  });

  it('is refused through method override too', async () => {
    const session = await signIn(server.url);
    const res = await api()
      .post('/v1/users/4611686018427387911')
      .set('Cookie', session.cookie)
      .type('form')
      .send({ _method: 'DELETE' });
    expect(res.status).toBe(403);
    expect((await api().get('/v1/users/4611686018427387911')).status).toBe(200);
  });

  it('passes with the token in CSRF-Token', async () => {
    const session = await signIn(server.url);
    const res = await api().post('/v1/users').set('Cookie', session.cookie).set('CSRF-Token', session.csrfToken).send(newUser);
    expect(res.status).toBe(201);
  });
});

describe('signing in again keeps the earlier sessions of the user', () => {
  const current = (cookie: string) =>
    api().get('/v1/sessions/current').set('Cookie', cookie).set('X-Requested-With', 'XMLHttpRequest');

  it('two sign-ins of the same user: both cookies stay live', async () => {
    const earlier = await signIn(server.url);
    const later = await signIn(server.url);
    expect((await current(later.cookie)).status).toBe(200);
    expect((await current(earlier.cookie)).status).toBe(200);
  });

  it('of many parallel sign-ins, every session stays live', async () => {
    const sessions = await Promise.all(Array.from({ length: 8 }, () => signIn(server.url)));
    const statuses = await Promise.all(sessions.map(async (session) => (await current(session.cookie)).status));
    expect(statuses).toEqual(Array(8).fill(200));
  });
});

describe('DELETE /v1/sessions/current (sign-out)', () => {
  it('needs the CSRF token', async () => {
    const session = await signIn(server.url);
    const res = await api().delete('/v1/sessions/current').set('Cookie', session.cookie);
    expect(res.status).toBe(403);
  });

  it('answers 204 with Clear-Site-Data, expires the cookie, and ends the session', async () => {
    const session = await signIn(server.url);
    const res = await api().delete('/v1/sessions/current').set('Cookie', session.cookie).set('CSRF-Token', session.csrfToken);
    expect(res.status).toBe(204);
    expect(res.headers['clear-site-data']).toBe('"cache", "cookies", "storage"');
    expect(res.headers['set-cookie']).toEqual([
      '__Host-session=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Lax',
    ]);
    expectDocumented(res);
    const after = await api().get('/v1/sessions/current').set('Cookie', session.cookie).set('X-Requested-With', 'XMLHttpRequest');
    expect(after.status).toBe(401);
  });
});

describe('exports: POST /v1/exports and GET /v1/exports/{id}', () => {
  it('accepts with 202, Location and Retry-After; answers 202 while preparing, then 200 with { id, createdAt, users }', async () => {
    const session = await signIn(server.url);
    const asked = await api().post('/v1/exports').set('Cookie', session.cookie).set('CSRF-Token', session.csrfToken);
    expect(asked.status).toBe(202);
    expect(asked.headers.location).toMatch(/^\/v1\/exports\/[0-9a-f-]{36}$/);
    expect(asked.headers['retry-after']).toBe('1');
    expectDocumented(asked);

    const early = await api()
      .get(asked.headers.location ?? '')
      .set('Cookie', session.cookie);
    expect(early.status).toBe(202);
    expect(early.headers['retry-after']).toBe('1');
    expect(early.body).toEqual({ id: asked.body.id, createdAt: asked.body.createdAt, ready: false });
    expectDocumented(early);

    let ready = early;
    await waitUntil(async () => {
      ready = await api()
        .get(asked.headers.location ?? '')
        .set('Cookie', session.cookie);
      return ready.status !== 202;
    }, 'the export to be ready');
    expect(ready.status).toBe(200);
    expect(Object.keys(ready.body)).toEqual(['id', 'createdAt', 'users']);
    expect(ready.body.id).toBe(asked.body.id);
    expect(ready.body.users.length).toBeGreaterThanOrEqual(25);
    expect(ready.text).toContain('"id":4611686018427387911,"id_str":"4611686018427387911"');
    expectDocumented(ready);
  });

  it('answers 404 for an export that does not exist', async () => {
    const session = await signIn(server.url);
    const res = await api().get('/v1/exports/0b6f2a52-3b8e-4d43-9a0e-41c1d5f7a7c1').set('Cookie', session.cookie);
    expect(res.status).toBe(404);
    expect(res.body.errors[0].code).toBe(40402);
    expectDocumented(res);
  });

  it('answers 401 without credentials', async () => {
    const res = await api().post('/v1/exports');
    expect(res.status).toBe(401);
  });
});
