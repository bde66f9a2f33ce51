import express from 'express';
import request from 'supertest';
import { errorHandler, notFound } from '../src/errors/index.js';
import { commonHeaders } from '../src/headers/index.js';
import { expectHeaders, HTTP_DATE } from './helpers.js';

describe('commonHeaders()', () => {
  const app = express();
  app.use(commonHeaders());
  app.get('/v1/things', (_req, res) => {
    res.json({ things: [] });
  });
  app.use(notFound(), errorHandler({ log: false }));

  it.each([
    ['a success', '/v1/things', 200],
    ['a 404', '/v1/nothing', 404],
  ])('on %s: sends nosniff and Date, and no X-Powered-By', async (_case, path, status) => {
    const res = await request(app).get(path);
    expect(res.status).toBe(status);
    expectHeaders(res, { 'X-Content-Type-Options': 'nosniff', 'X-Powered-By': null });
    expect(res.headers.date).toMatch(HTTP_DATE);
  });

  it('refuses options it does not know', () => {
    expect(() => commonHeaders({ nosniff: false } as never)).toThrow('received an unsupported option `nosniff`');
  });
});
