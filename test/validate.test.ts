import express, { type Express } from 'express';
import express4 from 'express4';
import request from 'supertest';
import { ConfigurationError } from '../src/config/index.js';
import { errorHandler } from '../src/errors/index.js';
import { jsonResponses } from '../src/json/index.js';
import { type JsonSchema, paging, parseBodies, validate } from '../src/request/index.js';

type ExpressFactory = () => Express;

const USER_BODY: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 20 },
    email: { type: 'string', format: 'email' },
    gender: { enum: ['male', 'female'] },
    age: { type: 'integer', minimum: 0 },
    newsletter: { type: 'boolean', default: false },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
    address: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
  },
  required: ['name', 'email'],
  additionalProperties: false,
};

const SEARCH_QUERY: JsonSchema = {
  type: 'object',
  properties: { q: { type: 'string', minLength: 1 }, limit: { type: 'integer', maximum: 50 } },
  required: ['q'],
};

const build = (factory: ExpressFactory): Express => {
  const app = factory();
  app.use(jsonResponses(), ...parseBodies());
  app.post('/v1/users', validate({ body: USER_BODY }), (req, res) => {
    res.status(201).json({ body: req.body });
  });
  app.get('/v1/users/search', validate({ query: SEARCH_QUERY }), paging(), (req, res) => {
    res.json({ query: req.query, limitType: typeof req.query.limit, page: req.page ?? null });
  });
  app.get(
    '/v1/users/:id',
    validate({ params: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } } } }),
    (req, res) => {
      res.json({ id: req.params.id, type: typeof req.params.id });
    },
  );
  app.use(errorHandler({ production: true, log: false }));
  return app;
};

const failed = (...items: [string, string][]) => ({
  errors: items.map(([field, message]) => ({ message, code: 40005, field })),
});

// Express 5's query parser (node:querystring) keeps a `__proto__` parameter as
// an own key; Express 4's (qs) drops it.
describe.each([
  ['Express 5', express as ExpressFactory, true],
  ['Express 4', express4 as unknown as ExpressFactory, false],
])('validate() on %s', (_name, factory, queryKeepsProto) => {
  const app = build(factory);

  describe('a valid JSON body', () => {
    it('passes, with the schema defaults filled in', async () => {
      const res = await request(app).post('/v1/users').send({ name: 'Ada', email: 'ada@example.com', age: 36 });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ body: { name: 'Ada', email: 'ada@example.com', age: 36, newsletter: false } });
    });
  });

  describe('an invalid JSON body', () => {
    it('answers 400 with one error per failing field, each saying what to send', async () => {
      const res = await request(app)
        .post('/v1/users')
        .send({ name: '', email: 'not-an-email', gender: 'other', age: -1, tags: ['a', 'b', 'c', 'd'], address: { zip: '1' } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(
        failed(
          ['name', 'Body field "name" must be at least 1 character long.'],
          ['email', 'Body field "email" must be an email address.'],
          ['gender', 'Body field "gender" must be one of "male", "female".'],
          ['age', 'Body field "age" must be 0 or more.'],
          ['tags', 'Body field "tags" must hold at most 3 items.'],
          ['address.city', 'Body field "address.city" is required.'],
          ['address.zip', 'Body field "address.zip" is not accepted here.'],
        ),
      );
    });

    it('names every missing required field', async () => {
      const res = await request(app).post('/v1/users').send({});
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failed(['name', 'Body field "name" is required.'], ['email', 'Body field "email" is required.']));
    });

    it('names at most 20 failing fields', async () => {
      const extra = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`extra${i}`, i]));
      const res = await request(app)
        .post('/v1/users')
        .send({ name: 'Ada', email: 'ada@example.com', ...extra });
      expect(res.status).toBe(400);
      expect(res.body.errors).toHaveLength(20);
      expect(res.body.errors[0]).toEqual({ message: 'Body field "extra0" is not accepted here.', code: 40005, field: 'extra0' });
    });

    it('does not coerce JSON: a string is not a number there', async () => {
      const res = await request(app).post('/v1/users').send({ name: 'Ada', email: 'ada@example.com', age: '36' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failed(['age', 'Body field "age" must be a whole number.']));
    });

    it('names an array item by its index', async () => {
      const res = await request(app)
        .post('/v1/users')
        .send({ name: 'Ada', email: 'ada@example.com', tags: ['a', 7] });
      expect(res.body).toEqual(failed(['tags[1]', 'Body field "tags[1]" must be a string.']));
    });

    it('refuses a body that is not an object', async () => {
      const res = await request(app).post('/v1/users').send([1, 2]);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failed(['body', 'The request body must be an object.']));
    });

    it('validates a missing body as an empty object, naming what is required', async () => {
      const res = await request(app).post('/v1/users');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failed(['name', 'Body field "name" is required.'], ['email', 'Body field "email" is required.']));
    });

    it('refuses a body of another media type with 415', async () => {
      const res = await request(app).post('/v1/users').set('Content-Type', 'text/plain').send('name=Ada');
      expect(res.status).toBe(415);
      expect(res.body).toEqual({
        errors: [
          { message: 'The request body must be sent as application/json or application/x-www-form-urlencoded.', code: 41500 },
        ],
      });
    });
  });

  describe('a form body (application/x-www-form-urlencoded)', () => {
    it('validates, with string values coerced to the schema types', async () => {
      const res = await request(app)
        .post('/v1/users')
        .type('form')
        .send('name=Ada&email=ada%40example.com&age=36&newsletter=true&tags=x');
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ body: { name: 'Ada', email: 'ada@example.com', age: 36, newsletter: true, tags: ['x'] } });
    });

    it('answers 400 per failing field like JSON', async () => {
      const res = await request(app)
        .post('/v1/users')
        .type('form')
        .send('name=Ada&email=ada%40example.com&age=old&newsletter=maybe');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(
        failed(
          ['age', 'Body field "age" must be a whole number.'],
          ['newsletter', 'Body field "newsletter" must be true or false.'],
        ),
      );
    });
  });

  describe('keys that reach object internals', () => {
    it.each([
      ['{"name":"Ada","email":"ada@example.com","__proto__":{"admin":true}}', '__proto__'],
      ['{"name":"Ada","email":"ada@example.com","constructor":{"prototype":{"admin":true}}}', 'constructor'],
      ['{"name":"Ada","email":"ada@example.com","address":{"city":"x","prototype":1}}', 'address.prototype'],
    ])('refuses %s', async (json, field) => {
      const res = await request(app).post('/v1/users').set('Content-Type', 'application/json').send(json);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failed([field, `Body field "${field}" is not accepted.`]));
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
    });

    it('refuses constructor in a form body', async () => {
      const res = await request(app).post('/v1/users').type('form').send('name=Ada&email=ada%40example.com&constructor=x');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failed(['constructor', 'Body field "constructor" is not accepted.']));
    });

    it('never sees __proto__ in a form body: the form parser drops it', async () => {
      const res = await request(app).post('/v1/users').type('form').send('name=Ada&email=ada%40example.com&__proto__=x');
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ body: { name: 'Ada', email: 'ada@example.com', newsletter: false } });
    });

    it('refuses __proto__ in the query, or never sees it', async () => {
      const res = await request(app).get('/v1/users/search?q=a&__proto__=x');
      expect(res.body).toEqual(
        queryKeepsProto
          ? failed(['__proto__', 'Query parameter "__proto__" is not accepted.'])
          : { query: { q: 'a' }, limitType: 'undefined', page: { offset: 0, limit: 20 } },
      );
    });
  });

  describe('query parameters', () => {
    it('are coerced, and req.query keeps the validated values for later middlewares', async () => {
      const res = await request(app).get('/v1/users/search?q=ada&limit=5');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ query: { q: 'ada', limit: 5 }, limitType: 'number', page: { offset: 0, limit: 5 } });
    });

    it('answer 400 naming the parameter', async () => {
      const res = await request(app).get('/v1/users/search?limit=500');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(
        failed(['q', 'Query parameter "q" is required.'], ['limit', 'Query parameter "limit" must be 50 or less.']),
      );
    });
  });

  describe('path parameters', () => {
    it('are coerced to the schema type', async () => {
      const res = await request(app).get('/v1/users/42');
      expect(res.body).toEqual({ id: 42, type: 'number' });
    });

    it('answer 400 naming the parameter', async () => {
      const res = await request(app).get('/v1/users/abc');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(failed(['id', 'Path parameter "id" must be a whole number.']));
    });
  });
});

describe('validate() at construction', () => {
  it('compiles each schema once, not per request', async () => {
    const compiled = validate({ body: { type: 'object' } });
    const app = express();
    app.use(...parseBodies());
    app.post('/v1/things', compiled, (_req, res) => {
      res.status(201).end();
    });
    const Ajv = (await import('ajv')).Ajv;
    const spy = jest.spyOn(Ajv.prototype, 'compile');
    await request(app).post('/v1/things').send({});
    await request(app).post('/v1/things').send({});
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });

  it.each([
    [{}, '`body` must be a schema: give at least one of body, query, params'],
    [{ body: 'object' }, '`body` must be a JSON Schema (an object or a boolean); received "object".'],
    [{ query: { type: 'object', properties: { a: { type: 'string', format: 'postcode' } } } }, 'unknown format "postcode"'],
    [{ params: { type: 'objekt' } }, '`params` must be a JSON Schema ajv can compile'],
    [{ boddy: {} }, 'Did you mean `body`?'],
  ])('refuses %j at start-up', (schemas, message) => {
    expect(() => validate(schemas as never)).toThrow(ConfigurationError);
    expect(() => validate(schemas as never)).toThrow(message);
  });
});

describe('validate() and its optional peer dependencies (ajv, ajv-formats)', () => {
  afterEach(() => {
    jest.dontMock('ajv');
    jest.dontMock('ajv-formats');
  });

  it('loads ajv when validate() is first called, not when its module loads', () => {
    jest.isolateModules(() => {
      const ajvLoaded = () => Object.keys(require.cache).some((file) => /[/\\]node_modules[/\\]ajv[/\\]/.test(file));
      const isolated = require('../src/request/validate.js') as typeof import('../src/request/validate.js');
      expect(ajvLoaded()).toBe(false);
      isolated.validate({ body: { type: 'object' } });
      expect(ajvLoaded()).toBe(true);
    });
  });

  it.each(['ajv', 'ajv-formats'])('says at construction what to install when %s is missing', (missing) => {
    jest.isolateModules(() => {
      jest.doMock(missing, () => {
        throw new Error(`Cannot find module '${missing}' from 'src/request/validate.ts'`);
      });
      const isolated = require('../src/request/validate.js') as typeof import('../src/request/validate.js');
      const { ConfigurationError: IsolatedError } =
        require('../src/config/configuration-error.js') as typeof import('../src/config/configuration-error.js');
      const build = () => isolated.validate({ body: { type: 'object' } });
      expect(build).toThrow(IsolatedError);
      expect(build).toThrow(
        `validate(schemas): compiling JSON Schemas needs the \`ajv\` and \`ajv-formats\` packages (optional peer dependencies), and \`${missing}\` is not installed: \`npm install ajv ajv-formats\`. [EAC_PEER_MISSING:`,
      );
    });
  });
});
