import express, { type Express } from 'express';
import { createClient } from 'redis';
import request from 'supertest';
import { exportsRouter } from '../../examples/server/src/exports.js';
import { MemoryState } from '../../examples/server/src/memory-state.js';
import { connectRedis, type RedisClient, RedisState, type SharedState } from '../../examples/server/src/state.js';
import { UserRepository } from '../../examples/server/src/users/repository.js';
import { errorHandler, notFound } from '../../src/index.js';
import { jsonResponses } from '../../src/json/index.js';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../support/services.js';
import { demoAccessToken } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * POST /v1/exports: a caller's own bound under the service's, in one step;
 * key spaces no export id can reach; a store error is a 503, never a 500.
 * The caller is named by a test header (the routes read `req.auth`).
 */
const appOver = (state: SharedState): Express => {
  const app = express();
  app.use(jsonResponses());
  app.use((req, _res, next) => {
    const caller = req.headers.caller;
    if (typeof caller === 'string') req.auth = { subject: caller, scopes: ['exports'] };
    next();
  });
  app.use(exportsRouter({ state, users: new UserRepository(state), delaySeconds: 0, keptSeconds: 60, limit: 3, callerLimit: 2 }));
  app.use(notFound(), errorHandler({ production: false, log: false }));
  return app;
};

function boundsOf(name: string, stateOf: () => SharedState) {
  describe(`with the state in ${name}`, () => {
    let app: Express;
    beforeAll(() => {
      app = appOver(stateOf());
    });
    const ask = (caller: string) => request(app).post('/v1/exports').set('Caller', caller);

    it('gives one caller its own bound (429, its Retry-After) while the others are still served, up to the service’s (503)', async () => {
      expect((await ask('ann')).status).toBe(202);
      expect((await ask('ann')).status).toBe(202);
      const own = await ask('ann');
      expect(own.status).toBe(429);
      expect(own.body).toEqual({
        errors: [
          {
            message: 'You have too many exports being prepared or kept; retry after the time in Retry-After.',
            code: 42900,
          },
        ],
      });
      expect(Number(own.headers['retry-after'])).toBeGreaterThanOrEqual(59);
      expect(own.headers.ratelimit).toBeUndefined();
      // Ann's refusal took no room: Bob gets the last place of the service.
      expect((await ask('bob')).status).toBe(202);
      const full = await ask('cy');
      expect(full.status).toBe(503);
      expect(full.body.errors[0].code).toBe(50300);
    });

    it.each(['index', 'bound:service', 'bound:caller:ann', 'record:x', '..%2Findex'])(
      'answers GET /v1/exports/%s with 404 JSON: no id reaches another key space',
      async (id) => {
        const res = await request(app).get(`/v1/exports/${id}`).set('Caller', 'ann');
        expect(res.status).toBe(404);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(res.body.errors[0].code).toBe(40402);
      },
    );
  });
}

boundsOf('memory', () => new MemoryState(60_000));

describeWith(REDIS_SERVER, 'exports on Redis', () => {
  let redis: RedisServer;
  let client: RedisClient;
  beforeAll(async () => {
    redis = await startRedis();
    client = await connectRedis(redis.url);
  });
  afterAll(async () => {
    await client?.close();
    await redis?.stop();
  });

  boundsOf('Redis', () => new RedisState(client));

  it('answers an error reply of Redis (WRONGTYPE) with 503 JSON and Retry-After, without the driver’s message', async () => {
    const raw = createClient({ url: redis.url });
    await raw.connect();
    try {
      await raw.set('reference-server:exports:bound:caller:mallory', 'not a sorted set');
    } finally {
      await raw.close();
    }
    const res = await request(appOver(new RedisState(client)))
      .post('/v1/exports')
      .set('Caller', 'mallory');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body).toEqual({ errors: [{ message: 'A shared state store is unreachable.', code: 50302 }] });
    expect(res.text).not.toMatch(/WRONGTYPE/);
  });

  describe('the reference server', () => {
    let server: RunningProcess;
    beforeAll(async () => {
      server = await startServer({ REDIS_URL: redis.url, EXPORT_DELAY: '0', EXPORT_CALLER_LIMIT: '2', RATE_LIMIT: '100000' });
    });
    afterAll(() => server?.stop());

    it('answers GET /v1/exports/index with 404 JSON after an export was made (was 500 WRONGTYPE)', async () => {
      const bearer = `Bearer ${await demoAccessToken(server.url)}`;
      expect((await request(server.url).post('/v1/exports').set('Authorization', bearer)).status).toBe(202);
      const res = await request(server.url).get('/v1/exports/index').set('Authorization', bearer);
      expect(res.status).toBe(404);
      expect(res.body.errors[0].code).toBe(40402);
      expect(server.output()).not.toMatch(/WRONGTYPE/);
    });

    it('refuses one token past EXPORT_CALLER_LIMIT with 429 and Retry-After', async () => {
      const bearer = `Bearer ${await demoAccessToken(server.url)}`;
      const answers: request.Response[] = [];
      for (let i = 0; i < 3; i++) answers.push(await request(server.url).post('/v1/exports').set('Authorization', bearer));
      // One export of this caller is already kept by the test before.
      expect(answers.map((res) => res.status)).toEqual([202, 429, 429]);
      expect(answers[0]?.headers.ratelimit).toMatch(/r=\d+/);
      const refused = answers[1] as request.Response;
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(3000);
      // Its instant is the export's expiry, not the rate limiter's: no RateLimit header names another (Limits rule 2).
      expect(refused.headers.ratelimit).toBeUndefined();
      expect(refused.headers['ratelimit-policy']).toBeUndefined();
    });
  });
});
