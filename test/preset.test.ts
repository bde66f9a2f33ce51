import express from 'express';
import request from 'supertest';
import { conventions, errorHandler, idPair, notFound } from '../src/index.js';
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

  it('passes module options through, checked', () => {
    expect(() => conventions({ bodies: { limit: 0 } })).toThrow('parseBodies(options): `limit` must be');
    expect(() => conventions({ rateLimiter: {} } as never)).toThrow(
      'conventions(options): received an unsupported option `rateLimiter`',
    );
  });
});
