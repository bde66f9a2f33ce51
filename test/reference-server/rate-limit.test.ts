import { arrayBufferToBase64, parseList } from 'structured-headers';
import request from 'supertest';
import { DEMO, signIn } from './client.js';
import { type RunningProcess, startServer } from './harness.js';
import { expectDocumented } from './openapi.js';

/**
 * Rate limits on the reference server (section 12): RATE_LIMIT
 * requests per RATE_WINDOW seconds, counted per user and per application,
 * signalled on every answer in RateLimit-Policy and RateLimit.
 */

const LIMIT = 6;
let server: RunningProcess;
const api = () => request(server.url);

beforeAll(async () => {
  server = await startServer({ RATE_LIMIT: String(LIMIT), RATE_WINDOW: '60' });
});

afterAll(async () => {
  await server?.stop();
});

/** A RateLimit or RateLimit-Policy header as plain items: name, then parameters. */
function items(value: string | undefined): Record<string, unknown>[] {
  return parseList(value ?? '').map(([name, params]) => {
    const item: Record<string, unknown> = { name };
    for (const [key, param] of params as Map<string, unknown>) {
      item[key] = param instanceof ArrayBuffer || ArrayBuffer.isView(param) ? arrayBufferToBase64(param as ArrayBuffer) : param;
    }
    return item;
  });
}

const PK = expect.stringMatching(/^[A-Za-z0-9+/]{16}$/);

describe('RateLimit-Policy and RateLimit (rules 12.2 and 12.3)', () => {
  it('sends RateLimit-Policy and RateLimit for the user and the application on every answer', async () => {
    const answers = [await api().get('/v1/users/search?q=ali'), await api().get('/v1/users/1'), await api().get('/v1/nothing')];
    expect(answers.map((res) => res.status)).toEqual([200, 404, 404]);
    for (const res of answers) {
      expect(items(res.headers['ratelimit-policy'])).toEqual([
        { name: 'user', q: LIMIT, w: 60, pk: PK },
        { name: 'application', q: LIMIT, w: 60, pk: PK },
      ]);
      const [user, application] = items(res.headers.ratelimit);
      expect(user).toEqual({ name: 'user', r: expect.any(Number), t: expect.any(Number), pk: PK });
      expect(application).toEqual({ name: 'application', r: expect.any(Number), t: expect.any(Number), pk: PK });
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
      expect(res.headers['x-ratelimit-reset']).toBeUndefined();
    }
    const remaining = answers.map((res) => items(res.headers.ratelimit)[0]?.r);
    expect(remaining).toEqual([LIMIT - 1, LIMIT - 2, LIMIT - 3]);
  });

  it('answers 429 with Retry-After at the instant of t over the limit', async () => {
    let last = await api().get('/v1/users?limit=1');
    while (last.status === 200) last = await api().get('/v1/users?limit=1');
    expect(last.status).toBe(429);
    expect(last.body).toEqual({ errors: [{ message: 'Too many requests; retry after the time in Retry-After.', code: 42900 }] });
    const [user] = items(last.headers.ratelimit);
    expect(user?.r).toBe(0);
    expect(last.headers['retry-after']).toBe(String(user?.t));
    expectDocumented(last);
  });
});

describe('counting per user and per application (rule 12.6)', () => {
  let fresh: RunningProcess;
  beforeAll(async () => {
    fresh = await startServer({ RATE_LIMIT: String(LIMIT), RATE_WINDOW: '60' });
  });
  afterAll(() => fresh?.stop());

  const remaining = (res: request.Response) => items(res.headers.ratelimit).map((item) => item.r);

  it('counts users apart and their application together', async () => {
    // Signing in is anonymous: the address counts as user and as application (1 each).
    const session = await signIn(fresh.url);
    // The signed-in user has a count of its own; its application is still known
    // only by the address, so that count goes on.
    const asAlice = () => request(fresh.url).get('/v1/users?limit=1').set('Cookie', session.cookie);
    expect(remaining(await asAlice())).toEqual([LIMIT - 1, LIMIT - 2]);
    expect(remaining(await asAlice())).toEqual([LIMIT - 2, LIMIT - 3]);
    // An anonymous request from the same address: its own user count, the shared application count.
    expect(remaining(await request(fresh.url).get('/v1/users?limit=1'))).toEqual([LIMIT - 2, LIMIT - 4]);
  });
});

describe('an application known by its client id', () => {
  let fresh: RunningProcess;
  beforeAll(async () => {
    fresh = await startServer({ RATE_LIMIT: String(LIMIT), RATE_WINDOW: '60' });
  });
  afterAll(() => fresh?.stop());

  it('counts a token’s requests against its user and its client, apart from the caller’s address', async () => {
    const basic = `Basic ${Buffer.from(`${DEMO.clientId}:${DEMO.clientSecret}`).toString('base64')}`;
    const issued = await request(fresh.url)
      .post('/v1/oauth2/token')
      .type('form')
      .set('Authorization', basic)
      .send({ grant_type: 'password', username: DEMO.username, password: DEMO.password });
    expect(issued.status).toBe(200);
    // The token request: anonymous user (the address), application demo-client (from Basic).
    expect(items(issued.headers.ratelimit).map((item) => item.r)).toEqual([LIMIT - 1, LIMIT - 1]);
    const withToken = () =>
      request(fresh.url).get('/v1/users?limit=1').set('Authorization', `Bearer ${issued.body.access_token}`);
    // alice's first request; demo-client's second.
    expect(items((await withToken()).headers.ratelimit).map((item) => item.r)).toEqual([LIMIT - 1, LIMIT - 2]);
    // An anonymous request from the same address: the address's second as user, its first as application.
    expect(items((await request(fresh.url).get('/v1/users?limit=1')).headers.ratelimit).map((item) => item.r)).toEqual([
      LIMIT - 2,
      LIMIT - 1,
    ]);
  });
});

describe('refused requests count against the caller', () => {
  let fresh: RunningProcess;
  beforeAll(async () => {
    fresh = await startServer({ RATE_LIMIT: String(LIMIT), RATE_WINDOW: '60' });
  });
  afterAll(() => fresh?.stop());

  // A garbage bearer token (401) and a preflight from an origin CORS refuses
  // (403) spend the quota of the caller's address, as any request does.
  it('answers 401 and 403 while quota remains, then 429 with Retry-After for the same address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await request(fresh.url).get('/v1/me').set('Authorization', 'Bearer garbage.garbage.garbage');
      statuses.push(res.status);
      expect(res.headers.ratelimit).toMatch(/r=\d+/);
    }
    for (let i = 0; i < 2; i++) {
      const res = await request(fresh.url)
        .options('/v1/users')
        .set('Origin', 'https://evil.example')
        .set('Access-Control-Request-Method', 'POST');
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 403, 403]);
    const over = await request(fresh.url).get('/v1/users');
    expect(over.status).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});
