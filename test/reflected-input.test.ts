import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import request from 'supertest';
import { ConfigurationError } from '../src/config/index.js';
import { apiError, errorHandler } from '../src/errors/index.js';
import { REFLECTED_INPUT_LIMITS } from '../src/errors/reflected-input.js';
import { jsonResponses } from '../src/json/index.js';
import { type PagingOptions, pageOf, paging, selectFields, sendList } from '../src/request/index.js';
import { rawExchange } from './support/raw-http.js';
import { closeServer } from './support/services.js';

const ITEMS = Array.from({ length: 25 }, (_, i) => ({ id: i + 1, name: `User ${i + 1}`, gender: 'female' }));

const build = (options?: PagingOptions, production = true): Express => {
  const app = express();
  app.use(jsonResponses());
  app.get('/v1/users', paging(options), selectFields({ fields: ['id', 'name', 'gender'] }), (req, res) => {
    sendList(res, 'users', pageOf(ITEMS, req.page));
  });
  const users = express.Router();
  users.get('/search', paging(options), (req, res) => {
    sendList(res, 'users', pageOf(ITEMS, req.page));
  });
  app.use('/v1/users', users);
  app.get('/v1/echo', (req, _res) => {
    throw apiError('badRequest', { message: `Received ${String(req.query.value)}.`, detail: { value: req.query.value } });
  });
  app.use(errorHandler({ production, log: false }));
  return app;
};

describe('the next-page Link (paging(), sendList())', () => {
  const app = build();

  it('is left out, with hasNext still true, when the query would make it longer than 2048 bytes', async () => {
    // 5,300 "|" are percent-encoded to 15,900 bytes: the head Node's client and nginx refuse.
    const res = await request(app).get(`/v1/users?limit=1&q=${'|'.repeat(5300)}`);
    expect(res.status).toBe(200);
    expect(res.headers.link).toBeUndefined();
    expect(res.body.hasNext).toBe(true);
  });

  it('is sent up to maxLinkLength, and a smaller bound is an option', async () => {
    const q = 'a'.repeat(1900);
    const full = await request(app).get(`/v1/users?limit=1&q=${q}`);
    expect(full.headers.link).toBe(`</v1/users?limit=1&q=${q}&offset=1>; rel="next"`);
    const bounded = await request(build({ maxLinkLength: 256 })).get(`/v1/users?limit=1&q=${q}`);
    expect(bounded.headers.link).toBeUndefined();
    expect(bounded.body.hasNext).toBe(true);
  });

  it("keeps only the parameters the route knows: the conventions' common ones and linkParameters", async () => {
    const res = await request(app).get('/v1/users?limit=2&junk=%3Cscript%3E&fields=id&gender=female&offset=4&q=ada');
    expect(res.headers.link).toBe('</v1/users?limit=2&fields=id&q=ada&offset=6>; rel="next"');
    const filtered = await request(build({ linkParameters: ['gender'] })).get('/v1/users?limit=2&gender=female&junk=1');
    expect(filtered.headers.link).toBe('</v1/users?limit=2&gender=female&offset=2>; rel="next"');
  });

  it('refuses wrong link options at start-up', () => {
    expect(() => paging({ linkParameters: ['a b'] })).toThrow(ConfigurationError);
    expect(() => paging({ linkParameters: 'gender' as never })).toThrow(/linkParameters/);
    expect(() => paging({ maxLinkLength: 10 })).toThrow(/maxLinkLength/);
  });

  describe('for an absolute-form request target (raw socket)', () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => closeServer(server));

    const get = (target: string) =>
      rawExchange(port, { pieces: [`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`] });

    it('is built from the route, never from the scheme and host the client wrote', async () => {
      const answer = await get('http://evil.example/v1/users?limit=1');
      expect(answer.status).toBe(200);
      expect(answer.headers.link).toBe('</v1/users?limit=1&offset=1>; rel="next"');
    });

    it('is built from the mounted route too', async () => {
      const answer = await get('https://evil.example:8443/v1/users/search?limit=1&offset=3');
      expect(answer.headers.link).toBe('</v1/users/search?limit=1&offset=4>; rel="next"');
    });
  });
});

describe('error bodies that echo client input (errorBody())', () => {
  const development = build(undefined, false);

  it('bound detail.unknown of fields=z0,…,z2499 to a few entries', async () => {
    const names = Array.from({ length: 2500 }, (_, i) => `z${i}`).join(',');
    const res = await request(development).get(`/v1/users?fields=${names}`);
    expect(res.status).toBe(400);
    expect(res.text.length).toBeLessThan(8 * 1024);
    const [first] = res.body.errors;
    expect(first.code).toBe(40004);
    expect(first.detail.unknown).toHaveLength(REFLECTED_INPUT_LIMITS.detailEntries + 1);
    expect(first.detail.unknown.at(-1)).toBe('… 2480 more');
  });

  it('cut a message and a detail string that quote a long value', async () => {
    const value = 'x'.repeat(5000);
    const res = await request(development).get(`/v1/echo?value=${value}`);
    const [first] = res.body.errors;
    expect(first.message).toHaveLength(REFLECTED_INPUT_LIMITS.message);
    expect(first.message.endsWith('…')).toBe(true);
    expect(first.detail.value).toHaveLength(REFLECTED_INPUT_LIMITS.detailString);
  });

  it('cut a paging refusal that quotes the value it refused', async () => {
    const res = await request(build()).get(`/v1/users?offset=${'9'.repeat(20)}x${'y'.repeat(3000)}`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message.length).toBeLessThanOrEqual(REFLECTED_INPUT_LIMITS.message);
  });

  it('list at most 20 problems, and say how many more there were', async () => {
    const app = express();
    app.get('/v1/many', (req) => {
      const names = String(req.query.names).split(',');
      throw apiError('validationFailed', {
        items: names.map((name) => ({ message: `The field "${name}" is not valid.`, code: 40005, field: name })),
      });
    });
    app.use(errorHandler({ production: true, log: false }));
    const names = Array.from({ length: 60 }, (_, i) => `f${i}`).join(',');
    const res = await request(app).get(`/v1/many?names=${names}`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toHaveLength(REFLECTED_INPUT_LIMITS.items + 1);
    expect(res.body.errors[19]).toEqual({ message: 'The field "f19" is not valid.', code: 40005, field: 'f19' });
    expect(res.body.errors[20]).toEqual({ message: '40 more problems of the same request are not listed.', code: 40005 });
  });

  it('bound a detail of any shape: depth, entries and total size', async () => {
    const app = express();
    app.get('/v1/deep', () => {
      const deep = { a: { b: { c: { d: { e: 'too deep' } } } } };
      const wide = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, 'v'.repeat(150)]));
      throw apiError('badRequest', { detail: { deep, wide } });
    });
    app.use(errorHandler({ production: false, log: false }));
    const res = await request(app).get('/v1/deep');
    const { detail } = res.body.errors[0];
    expect(detail.deep).toEqual({ a: { b: { c: '…' } } });
    expect(Object.keys(detail.wide).length).toBeLessThanOrEqual(REFLECTED_INPUT_LIMITS.detailEntries + 1);
    expect(JSON.stringify(detail).length).toBeLessThan(REFLECTED_INPUT_LIMITS.detailTotal + 1024);
  });
});
