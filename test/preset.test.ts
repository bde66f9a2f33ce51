import express from 'express';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { type ConventionsOptions, conventions, errorHandler, idPair, notFound } from '../src/index.js';
import { expectHeaders } from './helpers.js';

describe('conventions()', () => {
  const app = express();
  app.use(conventions());
  app.get('/v1/users/:id', (req, res) => {
    res.json({ ...idPair(BigInt(req.params.id as string) * 1000000000000n), name: '<b>' });
  });
  app.put('/v1/users/:id', (req, res) => {
    res.json({ replaced: req.body });
  });
  app.use(notFound(), errorHandler({ production: true, log: false }));

  it('makes a conforming JSON answer', async () => {
    const res = await request(app).get('/v1/users/9007199');
    expect(res.status).toBe(200);
    expectHeaders(res, {
      'Content-Type': 'application/json; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
      'X-Powered-By': null,
    });
    expect(res.text).toBe('{"id":9007199000000000000,"id_str":"9007199000000000000","name":"\\u003Cb\\u003E"}');
  });

  it('parses bodies and honours method override', async () => {
    const res = await request(app).post('/v1/users/1').type('form').send('_method=PUT&name=Ada');
    expect(res.body).toEqual({ replaced: { name: 'Ada' } });
  });

  it('answers unknown URIs and wrong methods as JSON', async () => {
    expect((await request(app).get('/v1/nope')).body).toEqual({
      errors: [{ message: 'No endpoint answers this URI.', code: 40401 }],
    });
    const wrong = await request(app).delete('/v1/users/1');
    expect(wrong.status).toBe(405);
    expectHeaders(wrong, { Allow: 'GET, HEAD, PUT' });
  });

  it('leaves a module out when its option is false', async () => {
    const bare = express();
    bare.use(conventions({ methodOverride: false, commonHeaders: false, securityHeaders: false }));
    bare.post('/v1/x', (req, res) => {
      res.json({ method: req.method });
    });
    const res = await request(bare).post('/v1/x').set('X-HTTP-Method-Override', 'PUT');
    expect(res.body).toEqual({ method: 'POST' });
    expectHeaders(res, { 'X-Content-Type-Options': null });
  });

  it('adds maintenance when it is configured', async () => {
    const stopped = express();
    stopped.use(conventions({ maintenance: { retryAfter: 60 } }));
    stopped.use(notFound(), errorHandler({ log: false }));
    const res = await request(stopped).get('/v1/anything');
    expect(res.status).toBe(503);
    expectHeaders(res, { 'Retry-After': '60' });
  });

  describe('run as one middleware, in order, as Express runs its layers', () => {
    const failing = (identify: () => { user?: string }) => {
      const app = express();
      app.use(conventions({ rateLimit: { identify } }));
      app.get('/v1/x', (_req, res) => {
        res.json({ reached: true });
      });
      app.use(notFound(), errorHandler({ production: true, log: false }));
      return app;
    };

    it('runs its stages in the order of the stage table', () => {
      const [preset] = conventions({ corsPolicy: { origins: ['http://localhost:5173'] }, responseLinter: {} });
      expect(preset?.stages).toEqual([
        'commonHeaders',
        'securityHeaders',
        'caching',
        'corsPolicy',
        'secureCookies',
        'jsonResponses',
        'rateLimit',
        'crossSiteProtection',
        'parseBodies',
        'methodOverride',
        'responseLinter',
      ]);
      // What it runs, handler by handler: each stage's named middleware (two body parsers),
      // and after the limiter the answer to a refusal held until it counted (corsPolicy's).
      expect(preset?.modules.map((module) => module.name)).toEqual([
        'commonHeadersMiddleware',
        'securityHeadersMiddleware',
        'cachingMiddleware',
        'corsPolicyMiddleware',
        'secureCookiesMiddleware',
        'jsonResponsesMiddleware',
        'rateLimitMiddleware',
        'answerHeldRefusal',
        'crossSiteProtectionMiddleware',
        'parseBodyMiddleware',
        'parseBodyMiddleware',
        'methodOverrideMiddleware',
        'responseLinterMiddleware',
      ]);
    });

    it('holds nothing when no stage before the limiter can refuse: no answer step after it', () => {
      const names = (options: ConventionsOptions) => conventions(options)[0]?.modules.map((module) => module.name);
      expect(names({})).not.toContain('answerHeldRefusal');
      expect(names({ corsPolicy: { origins: ['http://localhost:5173'] }, rateLimit: false })).not.toContain('answerHeldRefusal');
    });

    it('runs the rate limiter before the body parsers: a refusal comes before a body is read', async () => {
      const res = await request(
        failing(() => {
          throw new Error('identify failed');
        }),
      )
        .post('/v1/x')
        .set('Content-Type', 'application/json')
        .send('{"broken":');
      // The limiter's error (500), not the parser's (400): the body was never parsed.
      expect(res.status).toBe(500);
      expectHeaders(res, { RateLimit: null, 'X-Content-Type-Options': 'nosniff' });
    });

    it('is one middleware', () => {
      expect(conventions()).toHaveLength(1);
      expect(conventions()[0]?.name).toBe('conventionsMiddleware');
    });

    it('hands an error a module throws to the error handler, with the headers set before it', async () => {
      const res = await request(
        failing(() => {
          throw new Error('identify failed');
        }),
      ).get('/v1/x');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ errors: [{ message: 'An internal error occurred.', code: 50000 }] });
      expectHeaders(res, { 'X-Content-Type-Options': 'nosniff', 'X-Frame-Options': 'deny' });
    });

    it('hands an error a module passes to next() to the error handler', async () => {
      const res = await request(failing(() => ({})))
        .post('/v1/x')
        .set('Content-Type', 'application/json')
        .send('{"broken":');
      expect(res.status).toBe(400);
    });
  });

  it('passes module options through, checked', () => {
    expect(() => conventions({ parseBodies: { limit: 0 } })).toThrow('parseBodies(options): `limit` must be');
    expect(() => conventions({ rateLimiter: {} } as never)).toThrow(
      'conventions(options): received an unsupported option `rateLimiter`',
    );
  });
});

describe('conventions() with bearerAuth (rule 12.6: per user and per application)', () => {
  const secret = 'a-preset-test-secret-of-32-bytes-or-more';
  const keys = [{ kid: 'p1', algorithm: 'HS256' as const, secret }];
  const issuer = 'https://api.example.test';
  const audience = 'https://api.example.test/v1';
  const tokenFor = (sub: string, clientId: string): string =>
    jwt.sign({ iss: issuer, aud: audience, sub, client_id: clientId, jti: sub }, secret, {
      algorithm: 'HS256',
      expiresIn: 60,
      header: { alg: 'HS256', kid: 'p1', typ: 'at+jwt' },
    });

  const app = express();
  app.use(conventions({ bearerAuth: { keys, issuer, audience }, rateLimit: { limit: 2, windowSeconds: 60 } }));
  app.get('/v1/users', (req, res) => {
    res.json({ users: [], hasNext: false, caller: req.auth?.subject ?? null });
  });
  app.use(notFound(), errorHandler({ production: true, log: false }));

  const remaining = (res: request.Response, policy: string): number => {
    const item = String(res.headers.ratelimit)
      .split(',')
      .find((part) => part.trim().startsWith(`"${policy}"`));
    return Number(/;r=(\d+)/.exec(item ?? '')?.[1]);
  };

  it('identifies the bearer caller before counting, so each user has a count of its own', async () => {
    const ann = await request(app)
      .get('/v1/users')
      .set('Authorization', `Bearer ${tokenFor('ann', 'app-1')}`);
    expect(ann.body.caller).toBe('ann');
    expect(remaining(ann, 'user')).toBe(1);
    expect(remaining(ann, 'application')).toBe(1);
    const bob = await request(app)
      .get('/v1/users')
      .set('Authorization', `Bearer ${tokenFor('bob', 'app-1')}`);
    expect(bob.body.caller).toBe('bob');
    expect(remaining(bob, 'user')).toBe(1);
    expect(remaining(bob, 'application')).toBe(0);
  });

  it('lets a request without bearer credentials through anonymous', async () => {
    const res = await request(app).get('/v1/users').set('Authorization', 'Basic ZGVtby1jbGllbnQ6ZGVtby1zZWNyZXQ=');
    expect(res.status).toBe(200);
    expect(res.body.caller).toBeNull();
  });

  it('refuses a bad bearer token with 401 invalid_token', async () => {
    const res = await request(app).get('/v1/users').set('Authorization', 'Bearer not-a-token');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_token', error_description: 'The access token is malformed.' });
  });
});
