import express, { type ErrorRequestHandler } from 'express';
import express4 from 'express4';
import request from 'supertest';
import { ApiError, apiError, errorHandler } from '../src/errors/index.js';
import { conventions } from '../src/index.js';
import { expectHeaders } from './helpers.js';

/**
 * An app whose own error layer is not errorHandler() (a team's handler, a
 * framework's exception layer) never turns one of the preset's refusals into
 * its 500: the preset answers them itself, in the conventions' JSON
 * (docs/errors.md#refusals-of-the-librarys-middlewares-with-or-without-errorhandler). An
 * ApiError thrown in a route does reach that handler, with `status`,
 * `statusCode` and `expose` as http-errors sets them.
 */

type Factory = () => express.Express;
const ORIGIN = 'http://localhost:5173';
const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store, max-age=0' };

/** The preset, a route, and the team's error handler, which answers 500 whatever it is given. */
function appWithOwnHandler(factory: Factory) {
  const seen: unknown[] = [];
  const app = factory();
  app.use(conventions({ rateLimit: { limit: 2 }, corsPolicy: { origins: [ORIGIN] } }));
  app.all('/v1/users', (_req, res) => {
    res.json({ data: [] });
  });
  const ignoresStatus: ErrorRequestHandler = (error, _req, res, _next) => {
    seen.push(error);
    res.status(500).json({ message: 'Internal server error' });
  };
  app.use(ignoresStatus);
  return { app, seen };
}

describe.each([
  ['Express 5', express as Factory],
  ['Express 4', express4 as unknown as Factory],
])('the preset before an error handler that ignores err.status, on %s', (_name, factory) => {
  it('answers the request over the limit with its own 429, Retry-After and JSON body', async () => {
    const { app, seen } = appWithOwnHandler(factory);
    await request(app).get('/v1/users').expect(200);
    await request(app).get('/v1/users').expect(200);
    const res = await request(app).get('/v1/users');
    expect(res.status).toBe(429);
    expectHeaders(res, { ...JSON_HEADERS, 'Retry-After': expect.stringMatching(/^\d+$/) as unknown as string });
    expect(res.body).toEqual({ errors: [{ message: 'Too many requests; retry after the time in Retry-After.', code: 42900 }] });
    expect(seen).toEqual([]);
  });

  it('answers a cross-site POST with its own 403', async () => {
    const { app, seen } = appWithOwnHandler(factory);
    const res = await request(app).post('/v1/users').set('Sec-Fetch-Site', 'cross-site').send({ name: 'a' });
    expect(res.status).toBe(403);
    expectHeaders(res, JSON_HEADERS);
    expect(res.body).toEqual({
      errors: [expect.objectContaining({ message: 'A state-changing request from another site is not allowed.', code: 40305 })],
    });
    expect(seen).toEqual([]);
  });

  it('answers a refused preflight with its own 403', async () => {
    const { app, seen } = appWithOwnHandler(factory);
    const res = await request(app)
      .options('/v1/users')
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'PUT');
    expect(res.status).toBe(403);
    expectHeaders(res, JSON_HEADERS);
    expect(res.body).toEqual({ errors: [expect.objectContaining({ message: 'The origin is not allowed.', code: 40303 })] });
    expect(seen).toEqual([]);
  });

  it('answers a refused method override with its own 400', async () => {
    const { app, seen } = appWithOwnHandler(factory);
    const res = await request(app).get('/v1/users').set('X-HTTP-Method-Override', 'DELETE');
    expect(res.status).toBe(400);
    expectHeaders(res, JSON_HEADERS);
    expect(res.body).toEqual({ errors: [expect.objectContaining({ code: 40002 })] });
    expect(seen).toEqual([]);
  });

  it('answers a malformed JSON body with its own 400 (40001)', async () => {
    const { app, seen } = appWithOwnHandler(factory);
    const res = await request(app).post('/v1/users').set('Content-Type', 'application/json').send('{"name":');
    expect(res.status).toBe(400);
    expectHeaders(res, JSON_HEADERS);
    expect(res.body).toEqual({
      errors: [{ message: 'The request body could not be parsed.', code: 40001, detail: expect.any(String) }],
    });
    expect(seen).toEqual([]);
  });

  it('still hands a refusal to an error middleware mounted before errorHandler(), which renders it', async () => {
    const seen: unknown[] = [];
    const app = factory();
    app.use(conventions({ rateLimit: { limit: 2 } }));
    app.all('/v1/users', (_req, res) => {
      res.json({ data: [] });
    });
    const tracker: ErrorRequestHandler = (error, _req, _res, next) => {
      seen.push(error);
      next(error);
    };
    app.use(tracker, errorHandler({ production: true, log: false }));
    const res = await request(app).get('/v1/users').set('X-HTTP-Method-Override', 'DELETE');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: [expect.objectContaining({ code: 40002 })] });
    expect(seen).toEqual([expect.objectContaining({ name: 'ApiError', code: 40002 })]);
  });
});

describe('an ApiError that reaches an error handler written to the http-errors convention', () => {
  it.each([
    ['Express 5', express as Factory],
    ['Express 4', express4 as unknown as Factory],
  ])('keeps its status through err.status and err.statusCode, on %s', async (_name, factory) => {
    const app = factory();
    app.use(conventions());
    app.get('/v1/users/:id', () => {
      throw apiError('resourceNotFound');
    });
    const readsStatus: ErrorRequestHandler = (
      error: { status?: number; statusCode?: number; expose?: boolean; message: string },
      _req,
      res,
      _next,
    ) => {
      res.status(error.statusCode ?? 500).json({ status: error.status, expose: error.expose, message: error.message });
    };
    app.use(readsStatus);
    const res = await request(app).get('/v1/users/7');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ status: 404, expose: true, message: apiError('resourceNotFound').message });
  });

  it('exposes its message below 500 only, as http-errors does', () => {
    const notFound = apiError('resourceNotFound');
    const internal = apiError('internal');
    expect([notFound.status, notFound.statusCode, notFound.expose]).toEqual([404, 404, true]);
    expect([internal.status, internal.statusCode, internal.expose]).toEqual([500, 500, false]);
    expect(new ApiError({ status: 503, code: 50300, message: 'Down.' }).expose).toBe(false);
  });
});
