import express, { type RequestHandler } from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';
import request from 'supertest';
import * as errorsEntry from '../src/errors/index.js';
import { errorHandler, notFound } from '../src/errors/index.js';
import { bearerAuth } from '../src/oauth2/index.js';
import { type ConventionsOptions, conventions } from '../src/preset.js';
import { rateLimit } from '../src/rate-limit/index.js';
import { STAGE_NAMES } from '../src/stage-names.js';

const keys = [{ kid: 'p1', algorithm: 'HS256' as const, secret: 'a-test-secret-of-at-least-32-bytes-long!' }];
const issuer = 'https://api.example.test';
const audience = 'https://api.example.test/v1';
const ALLOWED = 'https://app.example.com';

const build = (withErrorHandler = true) => {
  const app = express();
  app.use(
    conventions({
      corsPolicy: { origins: [ALLOWED] },
      bearerAuth: { keys, issuer, audience },
      rateLimit: { limit: 5, windowSeconds: 60 },
    }),
  );
  app.get('/v1/users', (_req, res) => {
    res.json({ users: [], hasNext: false });
  });
  if (withErrorHandler) app.use(notFound(), errorHandler({ production: true, log: false }));
  return app;
};

/** `r` of the one policy that counts an anonymous caller (per user and per application both fall back to the address). */
const remaining = (res: request.Response): number[] =>
  [...String(res.headers.ratelimit).matchAll(/;r=(\d+)/g)].map((match) => Number(match[1]));

describe.each([
  ['with errorHandler()', true],
  ['without errorHandler()', false],
])('refused requests count against the caller’s address in conventions() (%s)', (_name, withErrorHandler) => {
  it('counts each 401 of a garbage bearer token, then answers 429', async () => {
    const app = build(withErrorHandler);
    for (let i = 0; i < 5; i++) {
      const res = await request(app).get('/v1/users').set('Authorization', 'Bearer garbage.garbage.garbage');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid_token', error_description: expect.any(String) });
      expect(remaining(res)).toEqual([4 - i, 4 - i]);
    }
    const sixth = await request(app).get('/v1/users').set('Authorization', 'Bearer garbage.garbage.garbage');
    expect(sixth.status).toBe(429);
    expect(sixth.headers['retry-after']).toMatch(/^[0-9]+$/);
    // The same address, now without a token: its quota is spent.
    expect((await request(app).get('/v1/users')).status).toBe(429);
  });

  it('counts each refused preflight (403), then answers 429', async () => {
    const app = build(withErrorHandler);
    const preflight = () =>
      request(app).options('/v1/users').set('Origin', 'https://evil.example').set('Access-Control-Request-Method', 'POST');
    for (let i = 0; i < 5; i++) {
      const res = await preflight();
      expect(res.status).toBe(403);
      expect(res.body.errors[0].code).toBe(40303);
      expect(remaining(res)).toEqual([4 - i, 4 - i]);
    }
    expect((await preflight()).status).toBe(429);
  });

  it('still answers an allowed preflight at once, uncounted', async () => {
    const app = build(withErrorHandler);
    for (let i = 0; i < 8; i++) {
      const res = await request(app).options('/v1/users').set('Origin', ALLOWED).set('Access-Control-Request-Method', 'POST');
      expect(res.status).toBe(200);
    }
    expect((await request(app).get('/v1/users')).status).toBe(200);
  });
});

describe('bearerAuth() and rateLimit() mounted alone', () => {
  it('keep their own behaviour: bearerAuth answers its 401 at once', async () => {
    const app = express();
    app.use(bearerAuth({ keys, issuer, audience, optional: true }), rateLimit({ limit: 1, windowSeconds: 60 }));
    app.get('/v1/users', (_req, res) => {
      res.json({ users: [], hasNext: false });
    });
    const res = await request(app).get('/v1/users').set('Authorization', 'Bearer garbage');
    expect(res.status).toBe(401);
    expect(res.headers.ratelimit).toBeUndefined();
  });
});

describe('no path drops a held refusal', () => {
  const GARBAGE = 'Bearer garbage.garbage.garbage';
  // A team's middleware that answers the request itself, as a route would.
  const answers: RequestHandler = (_req, res) => {
    res.json({ answeredBy: 'the team' });
  };
  const withPreset = (options: ConventionsOptions) => {
    const app = express();
    app.use(conventions({ bearerAuth: { keys, issuer, audience }, ...options }));
    app.get('/v1/users', (_req, res) => {
      res.json({ users: [], hasNext: false });
    });
    return app;
  };
  const expect401 = async (app: express.Express) => {
    const res = await request(app).get('/v1/users').set('Authorization', GARBAGE);
    expect([res.status, res.body]).toEqual([401, { error: 'invalid_token', error_description: expect.any(String) }]);
    return res;
  };

  it('answers the 401 when the rate limiter skips the request', async () => {
    await expect401(withPreset({ rateLimit: { skip: () => true } }));
  });

  it('answers the 401 when the rate limiter is off', async () => {
    await expect401(withPreset({ rateLimit: false }));
  });

  it('answers the 401 with express-rate-limit in place of the library’s limiter', async () => {
    const res = await expect401(
      withPreset({ rateLimit: false, after: { bearerAuth: expressRateLimit({ limit: 5, standardHeaders: 'draft-8' }) } }),
    );
    expect(res.headers.ratelimit).toBeUndefined();
  });

  it('answers the 401 (counted) with express-rate-limit as well as the library’s limiter', async () => {
    const res = await expect401(
      withPreset({ before: { rateLimit: expressRateLimit({ limit: 5, standardHeaders: 'draft-8' }) } }),
    );
    // The library's two policies (per user, per application) at its default limit of 100.
    expect(remaining(res)).toEqual([99, 99]);
  });

  // Every insertion point after bearerAuth, with the limiter on, skipping, or off:
  // a team's middleware there never answers in place of the refusal.
  const pointsAfter = STAGE_NAMES.slice(STAGE_NAMES.indexOf('bearerAuth')).flatMap((name) => [
    ...(name === 'bearerAuth' ? [] : [['before', name] as const]),
    ['after', name] as const,
  ]);
  describe.each([
    ['on', {}],
    ['skipping', { skip: () => true }],
    ['off', false],
  ] as const)('with the rate limiter %s', (_state, rateLimit) => {
    it.each(pointsAfter)('a middleware at %s.%s that answers does not answer for a refused token', async (point, name) => {
      await expect401(withPreset({ rateLimit, [point]: { [name]: answers } }));
    });
  });

  it('bearerAuth() alone answers its 401 at once, whatever is mounted after it', async () => {
    const app = express();
    app.use(bearerAuth({ keys, issuer, audience, optional: true }), expressRateLimit({ limit: 5 }), answers);
    await expect401(app);
  });

  it('holdRefusals is not exported: a refusal can only be held by the preset, which answers it', () => {
    expect(Object.keys(errorsEntry)).not.toContain('holdRefusals');
  });
});
