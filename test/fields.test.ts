import express, { type Express } from 'express';
import express4 from 'express4';
import request from 'supertest';
import { ConfigurationError } from '../src/config/index.js';
import { errorHandler, notFound } from '../src/errors/index.js';
import { idPair, jsonResponses } from '../src/json/index.js';
import { checkRoutes } from '../src/lint/index.js';
import { conventions } from '../src/preset.js';
import { applySelection } from '../src/request/fields.js';
import { pageOf, paging, type SelectFieldsOptions, selectFields, sendItem, sendList, validate } from '../src/request/index.js';

type ExpressFactory = () => Express;

const USER_FIELDS: SelectFieldsOptions = {
  fields: 'id,id_str,name,email,gender,address(street,city,geo(lat,lng)),createdAt,updatedAt',
  sets: { summary: 'id,name', place: 'name,address(city)' },
};

const user = (n: number) => ({
  ...idPair(9007199254740993n + BigInt(n)),
  name: `User ${n}`,
  email: `user${n}@example.com`,
  gender: n % 2 === 0 ? 'female' : 'male',
  address: { street: `${n} Main St`, city: 'Springfield', geo: { lat: 1, lng: 2 } },
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-02T00:00:00Z',
});
const USERS = [user(1), user(2), user(3)];

const build = (factory: ExpressFactory, options: SelectFieldsOptions = USER_FIELDS): Express => {
  const app = factory();
  app.use(jsonResponses());
  app.get('/v1/users', paging({ defaultLimit: 2 }), selectFields(options), (req, res) => {
    sendList(res, 'users', pageOf(USERS, req.page));
  });
  app.get('/v1/users/:id', selectFields(options), (req, res) => {
    sendItem(res, USERS[Number(req.params.id) - 1] as object);
  });
  app.use(errorHandler({ production: true, log: false }));
  return app;
};

const unknown = (message: string) => ({ message, code: 40004, field: 'fields' });
const TOP_LEVEL = 'id, id_str, name, email, gender, address, createdAt, updatedAt; the named sets are: summary, place';

describe.each([
  ['Express 5', express as ExpressFactory],
  ['Express 4', express4 as unknown as ExpressFactory],
])('selectFields() on %s', (_name, factory) => {
  const app = build(factory);

  describe('without a fields parameter', () => {
    it('returns every field of one object, the 64-bit id exact', async () => {
      const res = await request(app).get('/v1/users/1');
      expect(res.status).toBe(200);
      expect(res.text).toContain('"id":9007199254740994,"id_str":"9007199254740994"');
      expect(JSON.parse(res.text.replace(/"id":\d+/, '"id":0'))).toEqual({ ...JSON.parse(JSON.stringify(USERS[0])), id: 0 });
    });
  });

  describe('with fields=name,email', () => {
    it('returns only those fields of one object', async () => {
      const res = await request(app).get('/v1/users/2?fields=name,email');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ name: 'User 2', email: 'user2@example.com' });
    });

    it('returns only those fields of every item of a list, and keeps hasNext', async () => {
      const res = await request(app).get('/v1/users?fields=name,email');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        users: [
          { name: 'User 1', email: 'user1@example.com' },
          { name: 'User 2', email: 'user2@example.com' },
        ],
        hasNext: true,
      });
    });

    it('writes the fields in the order the route declares them, whatever the order asked', async () => {
      const res = await request(app).get('/v1/users/1?fields=email,name');
      expect(res.text).toBe('{"name":"User 1","email":"user1@example.com"}');
    });

    it('accepts spaces around names', async () => {
      const res = await request(app).get('/v1/users/1?fields=name,%20email');
      expect(res.body).toEqual({ name: 'User 1', email: 'user1@example.com' });
    });
  });

  describe('with id selected', () => {
    it('also returns its id_str sibling (rule 2.9)', async () => {
      const res = await request(app).get('/v1/users/1?fields=id');
      expect(res.text).toBe('{"id":9007199254740994,"id_str":"9007199254740994"}');
    });
  });

  describe('nested selection', () => {
    it('selects fields inside a nested object with parentheses', async () => {
      const res = await request(app).get('/v1/users/1?fields=name,address(city,geo(lat))');
      expect(res.body).toEqual({ name: 'User 1', address: { city: 'Springfield', geo: { lat: 1 } } });
    });

    it('returns the whole nested object when it is named without parentheses', async () => {
      const res = await request(app).get('/v1/users/1?fields=address');
      expect(res.body).toEqual({ address: { street: '1 Main St', city: 'Springfield', geo: { lat: 1, lng: 2 } } });
    });

    it('merges two selections of the same nested object', async () => {
      const res = await request(app).get('/v1/users/1?fields=address(city),address(street)');
      expect(res.body).toEqual({ address: { street: '1 Main St', city: 'Springfield' } });
    });
  });

  describe('named sets', () => {
    it('returns the fields of a set named in fields', async () => {
      const res = await request(app).get('/v1/users?fields=summary');
      expect(res.body).toEqual({
        users: [{ name: 'User 1', id: expect.any(Number), id_str: '9007199254740994' }, expect.any(Object)],
        hasNext: true,
      });
      expect(Object.keys(res.body.users[0])).toEqual(['id', 'id_str', 'name']);
    });

    it('combines a set with more fields', async () => {
      const res = await request(app).get('/v1/users/1?fields=place,email,address(street)');
      expect(res.body).toEqual({
        name: 'User 1',
        email: 'user1@example.com',
        address: { street: '1 Main St', city: 'Springfield' },
      });
    });

    it('does not change the set when a request adds to it', async () => {
      await request(app).get('/v1/users/1?fields=place,address(street)');
      const res = await request(app).get('/v1/users/1?fields=place');
      expect(res.body).toEqual({ name: 'User 1', address: { city: 'Springfield' } });
    });
  });

  describe('a default set', () => {
    const withDefault = build(factory, { ...USER_FIELDS, defaultSet: 'place' });

    it('is returned when fields is omitted', async () => {
      const res = await request(withDefault).get('/v1/users/1');
      expect(res.body).toEqual({ name: 'User 1', address: { city: 'Springfield' } });
    });

    it('gives way to fields=* for every declared field', async () => {
      const res = await request(withDefault).get('/v1/users/3?fields=*');
      expect(Object.keys(res.body)).toEqual(['id', 'id_str', 'name', 'email', 'gender', 'address', 'createdAt', 'updatedAt']);
    });
  });

  describe('unknown names', () => {
    it('answers 400 naming the unknown field and the valid ones', async () => {
      const res = await request(app).get('/v1/users/1?fields=name,password');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        errors: [unknown(`The fields parameter names an unknown field "password"; the fields are: ${TOP_LEVEL}.`)],
      });
    });

    it('answers one error per unknown field, nested ones with their path', async () => {
      const res = await request(app).get('/v1/users?fields=nickname,address(zip,city)');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        errors: [
          unknown(`The fields parameter names an unknown field "nickname"; the fields are: ${TOP_LEVEL}.`),
          unknown(
            'The fields parameter names an unknown field "address.zip"; the fields inside "address" are: street, city, geo.',
          ),
        ],
      });
    });

    it.each(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'])(
      'refuses %s like any unknown name, never reading object internals',
      async (name) => {
        const res = await request(app).get(`/v1/users/1?fields=${name}`);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          errors: [unknown(`The fields parameter names an unknown field "${name}"; the fields are: ${TOP_LEVEL}.`)],
        });
      },
    );

    it('names at most 20 unknown fields', async () => {
      const names = Array.from({ length: 30 }, (_, i) => `x${i}`).join(',');
      const res = await request(app).get(`/v1/users/1?fields=${names}`);
      expect(res.status).toBe(400);
      expect(res.body.errors).toHaveLength(20);
      expect(res.body.errors[19]).toEqual(
        unknown(`The fields parameter names an unknown field "x19"; the fields are: ${TOP_LEVEL}.`),
      );
    });

    it('refuses a set name used with parentheses', async () => {
      const res = await request(app).get('/v1/users/1?fields=summary(id)');
      expect(res.status).toBe(400);
      expect(res.body.errors[0].code).toBe(40004);
    });
  });

  describe('a malformed fields parameter', () => {
    const malformed = (why: string) => ({
      errors: [
        {
          message: `The query parameter "fields" is not valid: ${why}. Write field names separated by commas, nested fields in parentheses, such as id,name,address(city).`,
          code: 40003,
          field: 'fields',
        },
      ],
    });

    it.each([
      ['', 'a field name is missing at character 1'],
      ['name,', 'a field name is missing at character 6'],
      ['address(city', 'a ")" is missing at character 13'],
      ['name)', 'unexpected ")" at character 5'],
      ['name;email', 'unexpected ";" at character 5'],
      ['name(first)', '"name" has no fields inside it to select at character 6'],
    ])('answers 400 for fields=%j', async (value, why) => {
      const res = await request(app).get(`/v1/users/1?fields=${encodeURIComponent(value)}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(malformed(why));
    });

    it('answers 400 when fields is given twice', async () => {
      const res = await request(app).get('/v1/users/1?fields=name&fields=email');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        errors: [
          {
            message: 'The query parameter "fields" must be given once; separate the field names with commas.',
            code: 40003,
            field: 'fields',
          },
        ],
      });
    });
  });
});

describe('applySelection()', () => {
  it('reads only own properties, never inherited ones', async () => {
    const inherited = Object.create({ name: 'from the prototype' }) as Record<string, unknown>;
    inherited.email = 'own@example.com';
    const selection = (await selectionOf('name,email')) as Parameters<typeof applySelection>[1];
    expect(applySelection(inherited, selection)).toEqual({ email: 'own@example.com' });
  });

  it('selects from what toJSON() returns, as JSON would', async () => {
    const selection = (await selectionOf('name')) as Parameters<typeof applySelection>[1];
    const model = { toJSON: () => ({ name: 'Ada', secret: 'x' }) };
    expect(applySelection(model, selection)).toEqual({ name: 'Ada' });
  });

  it('never gives the result a polluted prototype', async () => {
    const selection = (await selectionOf('name')) as Parameters<typeof applySelection>[1];
    const body = JSON.parse('{"__proto__":{"polluted":true},"name":"Ada"}');
    const result = applySelection(body, selection) as Record<string, unknown>;
    expect(result).toEqual({ name: 'Ada' });
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

/** The selection selectFields() makes for a fields value, read from a real request. */
async function selectionOf(fields: string): Promise<unknown> {
  let seen: unknown;
  const probe = express();
  probe.get('/v1/users', selectFields(USER_FIELDS), (req, res) => {
    seen = req.fieldSelection;
    res.end();
  });
  await request(probe).get(`/v1/users?fields=${fields}`);
  return seen;
}

describe('selectFields() options', () => {
  const fails = (options: unknown, message: string) => {
    expect(() => selectFields(options as SelectFieldsOptions)).toThrow(ConfigurationError);
    expect(() => selectFields(options as SelectFieldsOptions)).toThrow(message);
  };

  it('requires the declared fields', () => {
    fails({}, "selectFields(options): `fields` must be the route's fields");
  });

  it.each(['__proto__', 'constructor', 'prototype'])('refuses to declare %s', (name) => {
    fails({ fields: `id,${name}` }, `"${name}" would reach object internals`);
  });

  it('refuses a malformed declaration', () => {
    fails({ fields: 'id,address(city' }, 'a ")" is missing');
    fails({ fields: 'id,id' }, '"id" is declared twice');
  });

  it('refuses a set that names an undeclared field', () => {
    fails({ fields: 'id,name', sets: { summary: 'id,email' } }, '`sets.summary` must be a selection of the declared fields');
  });

  it('refuses a set named like a field', () => {
    fails({ fields: 'id,name', sets: { name: 'id' } }, '`sets.name` must be a name that is not also a field name');
  });

  it('refuses a default set that is not declared', () => {
    fails(
      { fields: 'id,name', sets: { summary: 'id' }, defaultSet: 'brief' },
      '`defaultSet` must be the name of one of the sets (summary)',
    );
  });

  it('refuses an unknown option with a hint', () => {
    fails({ fields: 'id', defaultset: 'x' }, 'Did you mean `defaultSet`?');
  });

  it('accepts the declaration as an array of strings', () => {
    expect(typeof selectFields({ fields: ['id', 'name', 'address(city)'] })).toBe('function');
  });
});

describe('field selection, paging and validation in a whole app (the reference server users endpoints)', () => {
  const app = express();
  app.use(conventions({ responseLinter: { strict: true, log: () => undefined } }));
  const search = validate({ query: { type: 'object', properties: { q: { type: 'string', minLength: 1 } }, required: ['q'] } });
  app.get('/v1/users', paging({ defaultLimit: 2 }), selectFields(USER_FIELDS), (req, res) => {
    sendList(res, 'users', pageOf(USERS, req.page));
  });
  app.get('/v1/users/search', search, paging(), selectFields(USER_FIELDS), (req, res) => {
    const q = String(req.query.q);
    sendList(
      res,
      'users',
      pageOf(
        USERS.filter((u) => u.name.includes(q)),
        req.page,
      ),
    );
  });
  app.get('/v1/users/:id', selectFields(USER_FIELDS), (req, res) => {
    sendItem(res, USERS[Number(req.params.id) - 1] as object);
  });
  app.use(notFound(), errorHandler({ production: true, log: false }));

  it('has routes that follow the path rules', () => {
    expect(checkRoutes(app, { report: 'none' })).toEqual([]);
  });

  it('answers a list whose body passes the strict response linter, with the next page linked', async () => {
    const res = await request(app).get('/v1/users?fields=summary');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      users: [
        { id: 9007199254740994, id_str: '9007199254740994', name: 'User 1' },
        { id: 9007199254740996, id_str: '9007199254740995', name: 'User 2' },
      ],
      hasNext: true,
    });
    expect(res.headers.link).toBe('</v1/users?fields=summary&offset=2>; rel="next"');
  });

  it('answers HEAD on a list with the same headers and no body', async () => {
    const res = await request(app).head('/v1/users?limit=1');
    expect(res.status).toBe(200);
    expect(res.headers.link).toBe('</v1/users?limit=1&offset=1>; rel="next"');
    expect(res.text).toBeUndefined();
  });

  it('searches with q validated and the fields selected', async () => {
    const res = await request(app).get('/v1/users/search?q=User%203&fields=name');
    expect(res.body).toEqual({ users: [{ name: 'User 3' }], hasNext: false });
    const missing = await request(app).get('/v1/users/search');
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ errors: [{ message: 'Query parameter "q" is required.', code: 40005, field: 'q' }] });
  });

  it('answers one user with the fields selected', async () => {
    const res = await request(app).get('/v1/users/2?fields=name,gender,createdAt');
    expect(res.body).toEqual({ name: 'User 2', gender: 'female', createdAt: '2026-01-01T00:00:00Z' });
  });
});
