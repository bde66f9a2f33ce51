import request from 'supertest';
import { type RunningProcess, startServer } from './harness.js';

/**
 * On the reference server, a garbage bearer token (401) and a preflight from
 * an origin CORS refuses (403) are counted against the caller's address:
 * 20 + 5 of them spent none of the quota before.
 */
describe('refused requests count against the caller on the reference server', () => {
  let server: RunningProcess;
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT: '6', RATE_WINDOW: '60' });
  });
  afterAll(() => server?.stop());

  it('answers 401 and 403 while quota remains, then 429 with Retry-After for the same address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await request(server.url).get('/v1/me').set('Authorization', 'Bearer garbage.garbage.garbage');
      statuses.push(res.status);
      expect(res.headers.ratelimit).toMatch(/r=\d+/);
    }
    for (let i = 0; i < 2; i++) {
      const res = await request(server.url)
        .options('/v1/users')
        .set('Origin', 'https://evil.example')
        .set('Access-Control-Request-Method', 'POST');
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 403, 403]);
    const over = await request(server.url).get('/v1/users');
    expect(over.status).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});
