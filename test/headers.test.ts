import express, { type RequestHandler } from 'express';
import request from 'supertest';
import { errorHandler, notFound } from '../src/errors/index.js';
import { commonHeaders } from '../src/service/index.js';
import { expectHeaders, HTTP_DATE } from './helpers.js';

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
