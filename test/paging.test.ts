import express, { type Express } from 'express';
import express4 from 'express4';
import request from 'supertest';
import { ConfigurationError } from '../src/config/index.js';
import { errorHandler } from '../src/errors/index.js';
import { jsonResponses } from '../src/json/index.js';
import { type PagingOptions, pageOf, paging, selectFields, sendList } from '../src/request/index.js';
import { expectHeaders } from './helpers.js';

type ExpressFactory = () => Express;

const ITEMS = Array.from({ length: 25 }, (_, i) => ({ id: i + 1 }));

const build = (factory: ExpressFactory, options?: PagingOptions): Express => {
  const app = factory();
  app.use(jsonResponses());
  app.get('/v1/users', paging(options), (req, res) => {
    res.setHeader('Link', '</v1/users/search>; rel="search"');
    sendList(res, 'users', pageOf(ITEMS, req.page));
  });
  app.get('/v1/users/search', paging(options), (req, res) => {
    res.json({ page: req.page ?? null });
  });
  app.use(errorHandler({ production: true, log: false }));
  return app;
};

const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ({ id: from + i }));
const invalid = (field: string, why: string) => ({
  errors: [{ message: `The query parameter "${field}" ${why}`, code: 40003, field }],
});

describe.each([
  ['Express 5', express as ExpressFactory],
  ['Express 4', express4 as unknown as ExpressFactory],
])('paging() on %s', (_name, factory) => {
  const app = build(factory);

  describe('without offset and limit', () => {
    it('starts at 0 with the default limit of 20', async () => {
      const res = await request(app).get('/v1/users/search');
      expect(res.body).toEqual({ page: { offset: 0, limit: 20 } });
    });
  });

  describe('a list with more results', () => {
    it('sends { users, hasNext: true } and the next page in a Link header, after the Link already set', async () => {
      const res = await request(app).get('/v1/users?limit=10&offset=5');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ users: ids(6, 15), hasNext: true });
      expectHeaders(res, {
        Link: '</v1/users/search>; rel="search", </v1/users?limit=10&offset=15>; rel="next"',
        'Content-Type': 'application/json; charset=utf-8',
      });
    });

    it('keeps every other query parameter as the client wrote it', async () => {
      const res = await request(app).get('/v1/users?q=a%20b&offset=0&fields=id,name&limit=5');
      expect(res.headers.link).toBe(
        '</v1/users/search>; rel="search", </v1/users?q=a%20b&fields=id,name&limit=5&offset=5>; rel="next"',
      );
    });

    it('adds offset when the client sent none', async () => {
      const res = await request(app).get('/v1/users');
      expect(res.body).toEqual({ users: ids(1, 20), hasNext: true });
      expect(res.headers.link).toBe('</v1/users/search>; rel="search", </v1/users?offset=20>; rel="next"');
    });
  });

  describe('the last page', () => {
    it('sends hasNext: false and no next link', async () => {
      const res = await request(app).get('/v1/users?offset=20&limit=10');
      expect(res.body).toEqual({ users: ids(21, 25), hasNext: false });
      expect(res.headers.link).toBe('</v1/users/search>; rel="search"');
    });

    it('sends an empty list past the end', async () => {
      const res = await request(app).get('/v1/users?offset=100');
      expect(res.body).toEqual({ users: [], hasNext: false });
    });
  });

  describe('limit=0', () => {
    it('sends no items, says whether any exist, and links no next page (it would be the same)', async () => {
      const res = await request(app).get('/v1/users?limit=0');
      expect(res.body).toEqual({ users: [], hasNext: true });
      expect(res.headers.link).toBe('</v1/users/search>; rel="search"');
    });
  });

  describe('bad values', () => {
    it.each([
      ['offset=-1', 'offset', 'must be a whole number, 0 or more; received "-1".'],
      ['offset=1.5', 'offset', 'must be a whole number, 0 or more; received "1.5".'],
      ['offset=abc', 'offset', 'must be a whole number, 0 or more; received "abc".'],
      ['offset=', 'offset', 'must be a whole number, 0 or more; received "".'],
      ['offset=%201', 'offset', 'must be a whole number, 0 or more; received " 1".'],
      ['offset=1e3', 'offset', 'must be a whole number, 0 or more; received "1e3".'],
      ['offset=99999999999999999999', 'offset', 'must be a whole number, 0 or more; received 99999999999999999999.'],
      ['limit=101', 'limit', 'must be a whole number from 0 to 100; received 101.'],
      ['limit=ten', 'limit', 'must be a whole number from 0 to 100; received "ten".'],
      ['limit=5&limit=6', 'limit', 'must be given once, as a single whole number.'],
    ])('answers 400 for %s naming the parameter and why', async (query, field, why) => {
      const res = await request(app).get(`/v1/users?${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(invalid(field, why));
    });
  });
});

describe('paging() options', () => {
  it('uses the configured default and maximum', async () => {
    const app = build(express, { defaultLimit: 3, maxLimit: 5 });
    expect((await request(app).get('/v1/users/search')).body).toEqual({ page: { offset: 0, limit: 3 } });
    expect((await request(app).get('/v1/users/search?limit=5')).body).toEqual({ page: { offset: 0, limit: 5 } });
    const res = await request(app).get('/v1/users/search?limit=6');
    expect(res.body).toEqual(invalid('limit', 'must be a whole number from 0 to 5; received 6.'));
  });

  it('lowers the default to a smaller maximum', async () => {
    const app = build(express, { maxLimit: 10 });
    expect((await request(app).get('/v1/users/search')).body).toEqual({ page: { offset: 0, limit: 10 } });
  });

  it.each([
    [{ maxLimit: 0 }, '`maxLimit` must be an integer at least 1; received 0.'],
    [{ defaultLimit: 2.5 }, '`defaultLimit` must be an integer at least 1; received 2.5.'],
    [{ defaultLimit: 50, maxLimit: 10 }, '`defaultLimit` must be at most maxLimit (10); received 50.'],
    [{ maxlimit: 10 }, 'Did you mean `maxLimit`?'],
  ])('refuses %j at start-up', (options, message) => {
    expect(() => paging(options as PagingOptions)).toThrow(ConfigurationError);
    expect(() => paging(options as PagingOptions)).toThrow(message);
  });
});

describe('parsing the query string', () => {
  it('happens once per request on Express 5, shared by paging(), selectFields() and the handler', async () => {
    const parse = jest.fn((text: string) => Object.fromEntries(new URLSearchParams(text)));
    const app = express();
    app.set('query parser', parse);
    app.get('/v1/users', paging(), selectFields({ fields: 'id' }), (req, res) => {
      res.json({ limit: req.query.limit, again: req.query.limit, page: req.page });
    });
    const res = await request(app).get('/v1/users?limit=3&fields=id');
    expect(res.body).toEqual({ limit: '3', again: '3', page: { offset: 0, limit: 3 } });
    expect(parse).toHaveBeenCalledTimes(1);
  });
});

describe('sendList()', () => {
  it('percent-encodes characters that cannot stand in a Link header', async () => {
    const app = build(express);
    const res = await request(app).get('/v1/users?q="%3E&limit=1');
    expect(res.headers.link).toBe('</v1/users/search>; rel="search", </v1/users?q=%22%3E&limit=1&offset=1>; rel="next"');
  });

  it('sends every item and hasNext: false without paging()', async () => {
    const app = express();
    app.get('/v1/countries', (_req, res) => {
      sendList(res, 'countries', { items: [{ code: 'FI' }], hasNext: false });
    });
    const res = await request(app).get('/v1/countries');
    expect(res.body).toEqual({ countries: [{ code: 'FI' }], hasNext: false });
    expect(res.headers.link).toBeUndefined();
  });

  it('writes bigints exactly and escapes < and > like every JSON body', async () => {
    const app = express();
    app.get('/v1/things', (_req, res) => {
      sendList(res, 'things', { items: [{ id: 2n ** 64n, name: '<b>' }], hasNext: false });
    });
    const res = await request(app).get('/v1/things');
    expect(res.text).toBe('{"things":[{"id":18446744073709551616,"name":"\\u003Cb\\u003E"}],"hasNext":false}');
  });
});
