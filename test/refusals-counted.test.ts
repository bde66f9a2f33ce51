import express from 'express';
import request from 'supertest';
import { errorHandler, notFound } from '../src/errors/index.js';
import { bearerAuth } from '../src/oauth2/index.js';
import { conventions } from '../src/preset.js';
import { rateLimit } from '../src/rate-limit/index.js';

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
