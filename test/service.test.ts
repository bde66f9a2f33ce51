import express, { type RequestHandler } from 'express';
import request from 'supertest';
import { errorHandler, notFound } from '../src/errors/index.js';
import { jsonResponses } from '../src/json/index.js';
import { commonHeaders, maintenance } from '../src/service/index.js';
import { expectHeaders, HTTP_DATE } from './helpers.js';

const JSON_TYPE = 'application/json; charset=utf-8';

// Node writes `Date` by itself; something mounted earlier (a proxy helper,
// a test shim) can turn that off. commonHeaders() must turn it back on.
const noDate: RequestHandler = (_req, res, next) => {
  res.sendDate = false;
  next();
};

// Express sets `X-Powered-By: Express` on every response unless told not to.
function appWith(middlewares: RequestHandler[]): express.Express {
  const app = express();
  app.use(noDate, ...middlewares);
  app.get('/v1/things', (_req, res) => {
    res.json({ things: [] });
  });
  app.use(notFound(), errorHandler({ log: false }));
  return app;
}

describe('commonHeaders()', () => {
  const app = appWith([commonHeaders()]);

  it.each([
    ['a success', '/v1/things', 200],
    ['a 404', '/v1/nothing', 404],
  ])('on %s: sends nosniff and Date, and no X-Powered-By', async (_case, path, status) => {
    const res = await request(app).get(path);
    expect(res.status).toBe(status);
    expectHeaders(res, { 'X-Content-Type-Options': 'nosniff', 'X-Powered-By': null });
    expect(res.headers.date).toMatch(HTTP_DATE);
  });

  it('without it the same app sends none of them (the assertions above can fail)', async () => {
    const res = await request(appWith([])).get('/v1/things');
    expect(res.status).toBe(200);
    expectHeaders(res, { 'X-Content-Type-Options': null, 'X-Powered-By': 'Express', Date: null });
  });

  it('refuses options it does not know', () => {
    expect(() => commonHeaders({ nosniff: false } as never)).toThrow('received an unsupported option `nosniff`');
  });
});

describe('maintenance()', () => {
  const appWithMaintenance = (options?: Parameters<typeof maintenance>[0]) => {
    const app = express();
    app.use(jsonResponses(), maintenance(options));
    app.get('/v1/users', (_req, res) => {
      res.json({ users: [] });
    });
    app.use(notFound(), errorHandler({ log: false }));
    return app;
  };

  it('answers every request 503 JSON with Retry-After in seconds', async () => {
    for (const path of ['/v1/users', '/v1/unknown']) {
      const res = await request(appWithMaintenance({ retryAfter: 120 })).get(path);
      expect(res.status).toBe(503);
      expectHeaders(res, { 'Retry-After': '120', 'Content-Type': JSON_TYPE });
      expect(res.body).toEqual({
        errors: [{ message: 'The service is down for maintenance; retry after the time in Retry-After.', code: 50301 }],
      });
    }
  });

  it('defaults Retry-After to 300 seconds', async () => {
    const res = await request(appWithMaintenance()).get('/v1/users');
    expectHeaders(res, { 'Retry-After': '300' });
  });

  it('sends an HTTP-date when given a Date', async () => {
    const res = await request(appWithMaintenance({ retryAfter: new Date(Date.UTC(2026, 10, 23, 12, 0, 0)) })).get('/v1/users');
    expectHeaders(res, { 'Retry-After': 'Mon, 23 Nov 2026 12:00:00 GMT' });
  });

  it('follows a switch function on every request', async () => {
    let on = false;
    const app = appWithMaintenance({ enabled: () => on });
    expect((await request(app).get('/v1/users')).status).toBe(200);
    on = true;
    expect((await request(app).get('/v1/users')).status).toBe(503);
  });

  it('refuses a wrong retryAfter at start-up', () => {
    expect(() => maintenance({ retryAfter: -1 })).toThrow(
      '`retryAfter` must be a whole number of seconds (0 or more) or a valid Date; received -1',
    );
    expect(() => maintenance({ retryAfter: new Date('nope') })).toThrow('`retryAfter` must be');
  });
});
