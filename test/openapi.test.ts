import express, { type Express } from 'express';
import { MemoryUserStore, tokenRouter } from 'express-api-conventions-authorization-server';
import request from 'supertest';
import {
  apiError,
  type ConventionsOptions,
  conventions,
  entityTag,
  errorHandler,
  notFound,
  pageOf,
  paging,
  preconditions,
  sendItem,
  sendList,
  setValidators,
  validate,
} from '../src/index.js';
import { bearerAuth } from '../src/oauth2/index.js';
import { withConventions } from '../src/openapi/index.js';
import { ALICE, AUDIENCE, basic, KEYS, SCOPES, seedStores, TEST_COST, testHasher } from './support/oauth2.js';
import { type Exchange, OpenApiResponses } from './support/openapi-responses.js';

/**
 * withConventions() by round trip: a small app under conventions(), the
 * document its team writes (success answers only), withConventions(), then
 * every answer of the running app validated against the result.
 */

/** A described document, read freely by the assertions below. */
// biome-ignore lint/suspicious/noExplicitAny: the tests walk the document's JSON by hand.
type Described = { paths: Record<string, any>; components: Record<string, any> };

const ORIGIN = 'https://app.example';
const OPTIONS: ConventionsOptions = {
  corsPolicy: { origins: [ORIGIN] },
  rateLimit: { limit: 40, windowSeconds: 60 },
  parseBodies: { limit: '1kb' },
} as ConventionsOptions;

interface Item {
  id: number;
  name: string;
}
const ITEMS: Item[] = Array.from({ length: 30 }, (_, index) => ({ id: index + 1, name: `item ${index + 1}` }));
const VERSION = new Date('2026-01-01T00:00:00Z');

function app(options: ConventionsOptions): Express {
  const made = express();
  made.use(conventions(options));
  made.get('/v1/items', paging(), (req, res) => {
    sendList(res, 'items', pageOf(ITEMS, req.page));
  });
  made.get('/v1/items/:id', (req, res, next) => {
    const item = ITEMS.find((candidate) => String(candidate.id) === req.params.id);
    if (!item) return next(apiError('resourceNotFound'));
    setValidators(res, { etag: entityTag(item.id), lastModified: VERSION });
    sendItem(res, item);
  });
  const body = {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: { name: { type: 'string', minLength: 1, maxLength: 50 } },
  };
  made.post('/v1/items', validate({ body }), (req, res) => {
    res.status(201).location('/v1/items/31');
    sendItem(res, { id: 31, name: (req.body as Item).name });
  });
  made.put(
    '/v1/items/:id',
    preconditions({
      current: (req) =>
        ITEMS.some((item) => String(item.id) === req.params.id) ? { etag: entityTag(Number(req.params.id)) } : undefined,
    }),
    validate({ body }),
    (req, res) => {
      sendItem(res, { id: Number(req.params.id), name: (req.body as Item).name });
    },
  );
  made.get('/v1/failures', () => {
    throw new Error('boom');
  });
  made.use(notFound(), errorHandler({ log: false }));
  return made;
}

const item = { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer' }, name: { type: 'string' } } };
/** The team's own document: what its routes answer when all goes well, nothing of the conventions. */
const TEAM_DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'Items', version: '1.0.0' },
  paths: {
    '/v1/items': {
      get: {
        responses: {
          '200': {
            description: 'A page of items.',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['items', 'hasNext'],
                  properties: { items: { type: 'array', items: item }, hasNext: { type: 'boolean' } },
                },
              },
            },
          },
        },
      },
      post: {
        requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
        responses: {
          '201': {
            description: 'Created.',
            headers: { Location: { schema: { type: 'string' } } },
            content: { 'application/json': { schema: item } },
          },
        },
      },
    },
    '/v1/items/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
      get: { responses: { '200': { description: 'One item.', content: { 'application/json': { schema: item } } } } },
      put: {
        requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
        responses: { '200': { description: 'Replaced.', content: { 'application/json': { schema: item } } } },
      },
    },
    '/v1/failures': { get: { responses: { '200': { description: 'Never.' } } } },
  },
};

/** Sends one request and turns its answer into an exchange. */
async function exchange(test: request.Test, method: string, path: string): Promise<Exchange> {
  const answer = await test;
  const text = answer.text;
  const body = text && /json/.test(String(answer.headers['content-type'])) ? JSON.parse(text) : undefined;
  return { method, path, status: answer.status, headers: answer.headers, body };
}

describe('withConventions()', () => {
  describe('by round trip against a running app', () => {
    const server = app(OPTIONS);
    const document = withConventions(TEAM_DOCUMENT, OPTIONS) as Record<string, unknown>;
    const validator = new OpenApiResponses(document);
    const seen = new Map<number, number>();

    const check = async (test: request.Test, method: string, path: string, status: number) => {
      const answer = await exchange(test, method, path);
      expect(answer.status).toBe(status);
      seen.set(status, (seen.get(status) ?? 0) + 1);
      expect(validator.problems(answer)).toEqual([]);
    };

    it('describes every answer of the app, success and error alike', async () => {
      const agent = request(server);
      await check(agent.get('/v1/items').set('Origin', ORIGIN), 'GET', '/v1/items', 200);
      await check(agent.get('/v1/items?offset=10&limit=5&fields=name'), 'GET', '/v1/items', 200);
      await check(agent.get('/v1/items?limit=1000'), 'GET', '/v1/items', 400);
      await check(agent.get('/v1/items/3'), 'GET', '/v1/items/3', 200);
      await check(agent.head('/v1/items/3'), 'HEAD', '/v1/items/3', 200);
      await check(agent.get('/v1/items/3').set('If-None-Match', entityTag(3)), 'GET', '/v1/items/3', 304);
      await check(agent.get('/v1/items/99'), 'GET', '/v1/items/99', 404);
      await check(agent.post('/v1/items').send({ name: 'new' }), 'POST', '/v1/items', 201);
      await check(agent.post('/v1/items').send({ name: '' }), 'POST', '/v1/items', 400);
      await check(agent.post('/v1/items').set('Content-Type', 'application/json').send('{"name":'), 'POST', '/v1/items', 400);
      await check(agent.post('/v1/items').set('Content-Type', 'text/csv').send('name\nx'), 'POST', '/v1/items', 415);
      await check(agent.post('/v1/items').send({ name: 'x'.repeat(4000) }), 'POST', '/v1/items', 413);
      await check(agent.put('/v1/items/3').set('If-Match', '"stale"').send({ name: 'x' }), 'PUT', '/v1/items/3', 412);
      await check(agent.put('/v1/items/3').send({ name: 'x' }).set('Origin', ORIGIN), 'PUT', '/v1/items/3', 200);
      await check(agent.delete('/v1/items'), 'DELETE', '/v1/items', 405);
      await check(agent.get('/v1/failures'), 'GET', '/v1/failures', 500);
      let last: request.Response | undefined;
      for (let count = 0; count < 40 && last?.status !== 429; count++) last = await agent.get('/v1/items/1');
      await check(agent.get('/v1/items/1'), 'GET', '/v1/items/1', 429);
      expect([...seen.keys()].sort()).toEqual([200, 201, 304, 400, 404, 405, 412, 413, 415, 429, 500].sort());
    });

    it('describes the 503 of maintenance', async () => {
      const closed = app({ ...OPTIONS, maintenance: { enabled: true, retryAfter: 120 } } as ConventionsOptions);
      await check(request(closed).get('/v1/items'), 'GET', '/v1/items', 503);
      await check(request(closed).post('/v1/items').send({ name: 'x' }), 'POST', '/v1/items', 503);
    });
  });

  it('finds what the team’s own document lacks (the validator is not blind)', async () => {
    const answer = await exchange(request(app(OPTIONS)).get('/v1/items/1'), 'GET', '/v1/items/1');
    const problems = new OpenApiResponses(TEAM_DOCUMENT).problems(answer);
    expect(problems).toEqual(
      expect.arrayContaining([
        'GET /v1/items/1 200: header ratelimit not declared',
        'GET /v1/items/1 200: header etag not declared',
      ]),
    );
    const missing = await exchange(request(app(OPTIONS)).get('/v1/items/99'), 'GET', '/v1/items/99');
    expect(new OpenApiResponses(TEAM_DOCUMENT).problems(missing)).toEqual(['GET /v1/items/99 404: status not listed']);
  });

  it('reads an OpenAPI 3.0 document the same way, in schemas 3.0 accepts', async () => {
    const document = withConventions({ ...TEAM_DOCUMENT, openapi: '3.0.3' }, OPTIONS) as Record<string, unknown>;
    const validator = new OpenApiResponses(document);
    const answer = await exchange(request(app(OPTIONS)).get('/v1/items?limit=1000'), 'GET', '/v1/items');
    expect(validator.problems(answer)).toEqual([]);
    expect(JSON.stringify(document)).not.toMatch(/"const"|"null"/);
  });

  it('leaves out what the options turn off: the rate-limit headers and 429, CORS, ETag', () => {
    const document = withConventions(TEAM_DOCUMENT, { rateLimit: false, caching: { etag: false } }) as unknown as Described;
    const get = document.paths['/v1/items/{id}'].get;
    expect(Object.keys(get.responses)).not.toContain('429');
    expect(Object.keys(get.responses['200'].headers)).not.toEqual(expect.arrayContaining(['RateLimit']));
    expect(Object.keys(get.responses['200'].headers)).not.toContain('ETag');
    expect(Object.keys(document.components.headers)).not.toContain('Access-Control-Allow-Origin');
  });

  it('adds 401 and 403 where a security requirement is declared, and the paging and fields parameters on lists', () => {
    const secured = {
      ...TEAM_DOCUMENT,
      security: [{ bearerAuth: [] }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    };
    const document = withConventions(secured, {}) as unknown as Described;
    expect(Object.keys(document.paths['/v1/items/{id}'].get.responses)).toEqual(expect.arrayContaining(['401', '403']));
    const names = document.paths['/v1/items'].get.parameters.map((parameter: { $ref: string }) => parameter.$ref);
    expect(names).toEqual(['#/components/parameters/offset', '#/components/parameters/limit', '#/components/parameters/fields']);
    expect(document.components.securitySchemes.bearerAuth.description).toMatch(/RFC8725/);
    expect(Object.keys(withConventions(TEAM_DOCUMENT, {}).paths['/v1/items/{id}'].get.responses)).not.toContain('403');
  });

  it('adds the token service when tokenRouter is configured: token, revocation, introspection and metadata', () => {
    const document = withConventions(TEAM_DOCUMENT, {
      tokenRouter: tokenRouter({
        keys: KEYS,
        issuer: 'https://id.example/tenant',
        audience: AUDIENCE,
        users: new MemoryUserStore(),
        dpop: true,
      }),
    } as never) as unknown as Described;
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/v1/oauth2/token',
        '/v1/oauth2/revocations',
        '/v1/oauth2/introspections',
        '/.well-known/oauth-authorization-server/tenant',
      ]),
    );
    expect(document.paths['/v1/oauth2/token'].post.responses['400'].$ref).toBe('#/components/responses/TokenBadRequest');
    expect(document.components.schemas.TokenParameter.properties.token.minLength).toBe(1);
    expect(document.components.securitySchemes.dpop.scheme).toBe('DPoP');
    expect(document.components.securitySchemes.bearerAuth.description).toMatch(/RFC8725/);
  });

  it('refuses an option conventions() does not know, naming the closest', () => {
    expect(() => withConventions(TEAM_DOCUMENT, { cors: { origins: ['https://a.example'] } } as never)).toThrow(
      /withConventions\(options\): received an unsupported option `cors`/,
    );
  });

  it('refuses what is not an OpenAPI 3.0 or 3.1 document', () => {
    expect(() => withConventions({ swagger: '2.0' }, {})).toThrow(/OpenAPI 3\.0 or 3\.1 document/);
  });
});

describe('withConventions() with the token service, by round trip', () => {
  const issuer = 'https://api.example.test';
  const base = { keys: KEYS, issuer, audience: AUDIENCE, passwordHasher: testHasher, passwordCost: TEST_COST, scopes: SCOPES };
  const described = (options: ConventionsOptions) =>
    withConventions(
      {
        openapi: '3.1.0',
        info: { title: 'Me', version: '1.0.0' },
        paths: {
          '/v1/me': {
            get: {
              security: [{ bearer: [] }],
              responses: {
                '200': { description: 'The caller.', content: { 'application/json': { schema: { type: 'object' } } } },
              },
            },
          },
        },
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      },
      options,
    ) as Record<string, unknown>;

  it('describes the token, revocation, introspection and metadata answers, and the bearer failures', async () => {
    const stores = await seedStores();
    const options = {
      tokenRouter: tokenRouter({ ...base, ...stores, introspectors: { 'demo-client': 'own-tokens' } }),
      bearerAuth: { keys: KEYS, issuer, audience: AUDIENCE },
    } as ConventionsOptions;
    const made = express();
    made.use(conventions(options));
    made.get('/v1/me', bearerAuth({ keys: KEYS, issuer, audience: AUDIENCE }), (req, res) => {
      res.json({ subject: req.auth?.subject });
    });
    made.use(notFound(), errorHandler({ log: false }));
    const validator = new OpenApiResponses(described(options));
    const agent = request(made);
    const demo = basic('demo-client', 'demo-secret');
    const seen: number[] = [];
    const check = async (test: request.Test, method: string, path: string, status: number) => {
      const answer = await exchange(test, method, path);
      expect([path, answer.status]).toEqual([path, status]);
      seen.push(status);
      expect(validator.problems(answer)).toEqual([]);
      return answer;
    };
    const token = await check(
      agent.post('/v1/oauth2/token').type('form').set('Authorization', demo).send(ALICE),
      'POST',
      '/v1/oauth2/token',
      200,
    );
    const { access_token, refresh_token } = token.body as { access_token: string; refresh_token: string };
    await check(
      agent
        .post('/v1/oauth2/token')
        .type('form')
        .send({ ...ALICE, password: 'wrong' }),
      'POST',
      '/v1/oauth2/token',
      400,
    );
    await check(
      agent.post('/v1/oauth2/token').type('form').set('Authorization', basic('demo-client', 'nope')).send(ALICE),
      'POST',
      '/v1/oauth2/token',
      401,
    );
    await check(agent.post('/v1/oauth2/token').type('text').send('x'), 'POST', '/v1/oauth2/token', 400);
    await check(
      agent.post('/v1/oauth2/introspections').type('form').set('Authorization', demo).send({ token: access_token }),
      'POST',
      '/v1/oauth2/introspections',
      200,
    );
    await check(
      agent.post('/v1/oauth2/introspections').type('form').send({ token: access_token }),
      'POST',
      '/v1/oauth2/introspections',
      401,
    );
    await check(
      agent.post('/v1/oauth2/revocations').type('form').set('Authorization', demo).send({ token: refresh_token }),
      'POST',
      '/v1/oauth2/revocations',
      200,
    );
    await check(
      agent.post('/v1/oauth2/revocations').type('form').set('Authorization', demo).send('token='),
      'POST',
      '/v1/oauth2/revocations',
      400,
    );
    await check(agent.get('/.well-known/oauth-authorization-server'), 'GET', '/.well-known/oauth-authorization-server', 200);
    await check(agent.get('/v1/me').set('Authorization', `Bearer ${access_token}`), 'GET', '/v1/me', 200);
    await check(agent.get('/v1/me'), 'GET', '/v1/me', 401);
    await check(agent.get('/v1/me').set('Authorization', 'Bearer not-a-token'), 'GET', '/v1/me', 401);
    expect(new Set(seen)).toEqual(new Set([200, 400, 401]));
  });
});
