import express from 'express';
import request from 'supertest';
import { corsPolicy, requireXhr } from '../src/cors/index.js';
import { errorHandler, notFound } from '../src/errors/index.js';
import { conventions } from '../src/index.js';
import { jsonResponses } from '../src/json/index.js';
import { expectHeaders } from './helpers.js';

const ALLOWED = 'http://localhost:5173';

function corsApp(options: Parameters<typeof corsPolicy>[0]): express.Express {
  const app = express();
  app.use(corsPolicy(options), jsonResponses());
  app.get('/v1/users', (_req, res) => res.json({ users: [], hasNext: false }));
  app.put('/v1/users/1', (_req, res) => res.json({ saved: true }));
  app.get('/v1/sessions/current', requireXhr(), (_req, res) => res.json({ name: 'alice' }));
  app.use(errorHandler({ log: false }));
  return app;
}

const preflight = (app: express.Express, origin: string, method = 'PUT', headers = 'Content-Type, X-Requested-With') =>
  request(app)
    .options('/v1/users/1')
    .set('Origin', origin)
    .set('Access-Control-Request-Method', method)
    .set('Access-Control-Request-Headers', headers);

describe('corsPolicy()', () => {
  const app = corsApp({ origins: [ALLOWED, /^https:\/\/[a-z]+\.example\.com$/] });

  describe('a preflight from an allowed origin (rule 8.3)', () => {
    it('answers 200, Content-Length: 0, Content-Type: text/plain, with the origin, comma lists and an integer max-age', async () => {
      const res = await preflight(app, ALLOWED);
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expectHeaders(res, {
        'Content-Length': '0',
        'Content-Type': 'text/plain',
        'Access-Control-Allow-Origin': ALLOWED,
        'Access-Control-Allow-Credentials': 'true',
        'Access-Control-Allow-Methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
        'Access-Control-Allow-Headers':
          'Authorization, Content-Type, CSRF-Token, If-Match, If-Modified-Since, If-None-Match, If-Unmodified-Since, X-HTTP-Method-Override, X-Requested-With',
        'Access-Control-Max-Age': '600',
        Vary: 'Origin',
      });
    });

    it('answers the same for an origin matched by an anchored pattern', async () => {
      const res = await preflight(app, 'https://app.example.com');
      expect(res.status).toBe(200);
      expectHeaders(res, { 'Access-Control-Allow-Origin': 'https://app.example.com' });
    });
  });

  describe('an actual request from an allowed origin', () => {
    it('carries the validated origin, credentials, exposed headers and Vary: Origin', async () => {
      const res = await request(app).get('/v1/users').set('Origin', ALLOWED);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ users: [], hasNext: false });
      expectHeaders(res, {
        'Access-Control-Allow-Origin': ALLOWED,
        'Access-Control-Allow-Credentials': 'true',
        'Access-Control-Expose-Headers': 'ETag, Location, RateLimit, RateLimit-Policy, Retry-After',
        'Access-Control-Allow-Methods': null,
        Vary: 'Origin',
      });
    });

    it('never answers * while credentials are allowed', async () => {
      const res = await request(app).get('/v1/users').set('Origin', ALLOWED);
      expect(res.headers['access-control-allow-origin']).not.toBe('*');
    });

    it('appends Origin to a Vary the route set, never overwrites it', async () => {
      const varying = express();
      varying.use((_req, res, next) => {
        res.setHeader('Vary', 'Accept-Language');
        next();
      });
      varying.use(corsPolicy({ origins: [ALLOWED] }));
      varying.get('/v1/x', (_req, res) => res.json({}));
      const res = await request(varying).get('/v1/x').set('Origin', ALLOWED);
      expectHeaders(res, { Vary: 'Accept-Language, Origin' });
    });
  });

  describe('an origin that is not allowed', () => {
    it.each([
      ['null', 'null'],
      ['a look-alike suffix', 'http://localhost:5173.evil.com'],
      ['a look-alike prefix', 'http://evil-localhost:5173'],
      ['another port', 'http://localhost:5174'],
      ['another scheme', 'https://localhost:5173'],
      ['a trailing slash', 'http://localhost:5173/'],
      ['upper case', 'HTTP://LOCALHOST:5173'],
      ['a pattern look-alike', 'https://app.example.com.evil.com'],
      ['a pattern sub-subdomain', 'https://a.b.example.com'],
    ])('%s (%s): a preflight is refused with 403 JSON and no CORS headers', async (_what, origin) => {
      const res = await preflight(app, origin);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ errors: [{ message: 'The origin is not allowed.', code: 40303, detail: { origin } }] });
      expectHeaders(res, {
        'Access-Control-Allow-Origin': null,
        'Access-Control-Allow-Credentials': null,
        'Access-Control-Allow-Methods': null,
        Vary: 'Origin',
      });
    });

    it('an actual request is answered without CORS headers, so the browser keeps it from the script', async () => {
      const res = await request(app).get('/v1/users').set('Origin', 'null');
      expect(res.status).toBe(200);
      expectHeaders(res, { 'Access-Control-Allow-Origin': null, 'Access-Control-Allow-Credentials': null, Vary: 'Origin' });
    });
  });

  describe('a request without Origin', () => {
    it('is not a CORS request: no CORS headers, but Vary: Origin for caches', async () => {
      const res = await request(app).get('/v1/users');
      expectHeaders(res, { 'Access-Control-Allow-Origin': null, Vary: 'Origin' });
    });
  });

  describe("origins: '*'", () => {
    const open = corsApp({
      origins: '*',
      credentials: false,
      maxAgeSeconds: 60,
      methods: ['GET'],
      allowedHeaders: ['X-Requested-With'],
    });

    it('answers * without credentials, and a preflight as rule 8.3 says', async () => {
      const res = await preflight(open, 'https://anyone.example', 'GET', 'X-Requested-With');
      expect(res.status).toBe(200);
      expectHeaders(res, {
        'Access-Control-Allow-Origin': '*',
        'Access-Control-Allow-Credentials': null,
        'Access-Control-Allow-Methods': 'GET',
        'Access-Control-Allow-Headers': 'X-Requested-With',
        'Access-Control-Max-Age': '60',
        'Content-Type': 'text/plain',
        'Content-Length': '0',
      });
    });
  });

  describe('configuration', () => {
    it('refuses * together with credentials', () => {
      expect(() => corsPolicy({ origins: '*' })).toThrow(
        "corsPolicy(options): `origins: '*'` cannot be combined with `credentials: true`",
      );
    });

    it('refuses null, origins with a path or trailing slash, and unanchored patterns', () => {
      expect(() => corsPolicy({ origins: ['null'] })).toThrow('`origins` must be real origins');
      expect(() => corsPolicy({ origins: ['http://localhost:5173/'] })).toThrow('`origins` must be exact origins');
      expect(() => corsPolicy({ origins: ['localhost:5173'] })).toThrow('`origins` must be exact origins');
      expect(() => corsPolicy({ origins: [/example\.com/] })).toThrow('`origins` must be anchored patterns');
      expect(() => corsPolicy({ origins: [/^https:\/\/a\.com$/g] })).toThrow('without the g or y flag');
      expect(() => corsPolicy({ origins: [] })).toThrow('`origins` must be a non-empty array');
    });

    it('refuses other wrong options', () => {
      expect(() => corsPolicy({ origins: [ALLOWED], maxAgeSeconds: 1.5 })).toThrow(
        '`maxAgeSeconds` must be an integer at least 0',
      );
      expect(() => corsPolicy({ origins: [ALLOWED], methods: ['GET,PUT'] })).toThrow('`methods` must be');
      expect(() => corsPolicy({ origin: [ALLOWED] } as never)).toThrow("cors's `origin` is `origins` here");
    });
  });
});

describe('requireXhr() (rule 8.4)', () => {
  const app = corsApp({ origins: [ALLOWED] });

  it('answers a request that sends X-Requested-With: XMLHttpRequest', async () => {
    const res = await request(app).get('/v1/sessions/current').set('X-Requested-With', 'XMLHttpRequest');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: 'alice' });
  });

  it.each([
    ['missing', undefined],
    ['another value', 'fetch'],
    ['empty', ''],
  ])('refuses the header %s with 403 JSON', async (_what, value) => {
    const call = request(app).get('/v1/sessions/current');
    if (value !== undefined) call.set('X-Requested-With', value);
    const res = await call;
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      errors: [{ message: 'This endpoint only answers browser scripts (X-Requested-With: XMLHttpRequest).', code: 40301 }],
    });
    expectHeaders(res, { 'Content-Type': 'application/json; charset=utf-8' });
  });

  it('refuses options it does not know', () => {
    expect(() => requireXhr({ value: 'x' } as never)).toThrow('requireXhr(options): received an unsupported option `value`');
  });
});

describe('conventions({ corsPolicy })', () => {
  const app = express();
  app.use(conventions({ corsPolicy: { origins: [ALLOWED] }, maintenance: { enabled: () => stopped, retryAfter: 30 } }));
  app.get('/v1/users', (_req, res) => res.json({ users: [] }));
  app.use(notFound(), errorHandler({ log: false }));
  let stopped = false;
  afterEach(() => {
    stopped = false;
  });

  it('answers a preflight before anything else runs', async () => {
    const res = await preflight(app, ALLOWED);
    expect(res.status).toBe(200);
    expectHeaders(res, { 'Content-Type': 'text/plain', 'Content-Length': '0', 'Access-Control-Allow-Origin': ALLOWED });
  });

  it('puts the CORS headers on error answers, so the calling script can read them', async () => {
    const missing = await request(app).get('/v1/nope').set('Origin', ALLOWED);
    expect(missing.status).toBe(404);
    expectHeaders(missing, { 'Access-Control-Allow-Origin': ALLOWED, 'Access-Control-Allow-Credentials': 'true' });
    stopped = true;
    const down = await request(app).get('/v1/users').set('Origin', ALLOWED);
    expect(down.status).toBe(503);
    expectHeaders(down, { 'Access-Control-Allow-Origin': ALLOWED, 'Retry-After': '30' });
  });
});
