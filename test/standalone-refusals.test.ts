import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { tokenRouter } from 'express-api-conventions-authorization-server';
import express4 from 'express4';
import request from 'supertest';
import { corsPolicy, requireXhr } from '../src/cors/index.js';
import { errorHandler } from '../src/errors/index.js';
import { type AuthContext, bearerAuth, requireScope } from '../src/oauth2/index.js';
import { rateLimit } from '../src/rate-limit/index.js';
import { methodOverride, parseBodies } from '../src/request/index.js';
import { csrfProtection, csrfTokens } from '../src/security/index.js';
import type { CounterStore } from '../src/stores/index.js';
import { expectHeaders } from './helpers.js';
import { AUDIENCE, ISSUER, KEYS, SCOPES, seedStores, TOKEN_OPTIONS } from './support/oauth2.js';

/**
 * Every middleware answers its own refusals in the conventions' JSON shape (rule 14.7) when
 * errorHandler() is not mounted (docs/architecture.md), where Express's final
 * handler would write an HTML page (or another error layer a 500); with
 * errorHandler() mounted, errorHandler() renders them, with its options.
 */

const ORIGIN = 'http://localhost:5173';
const tokens = csrfTokens({ secret: 'a-test-secret-of-at-least-32-bytes!!' });
let stores: Awaited<ReturnType<typeof seedStores>>;
beforeAll(async () => {
  stores = await seedStores();
});

type Factory = () => express.Express;

/** The middleware, a route, and nothing after it. */
const alone = (factory: Factory, middlewares: RequestHandler[]) => {
  const app = factory();
  app.use(...middlewares);
  app.all('/v1/users/1', (_req, res) => {
    res.status(200).end();
  });
  return app;
};

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store, max-age=0' };

interface Case {
  readonly middlewares: () => RequestHandler[];
  readonly send: (app: express.Express) => request.Test;
  readonly status: number;
  readonly error: { readonly message: string; readonly code: number; readonly detail?: unknown };
}

const CASES: Readonly<Record<string, Case>> = {
  'corsPolicy(): a preflight from an origin it does not allow': {
    middlewares: () => [corsPolicy({ origins: [ORIGIN] })],
    send: (app) =>
      request(app).options('/v1/users/1').set('Origin', 'https://evil.example').set('Access-Control-Request-Method', 'PUT'),
    status: 403,
    error: { message: 'The origin is not allowed.', code: 40303, detail: { origin: 'https://evil.example' } },
  },
  'requireXhr(): a request without X-Requested-With': {
    middlewares: () => [requireXhr()],
    send: (app) => request(app).get('/v1/users/1'),
    status: 403,
    error: { message: 'This endpoint only answers browser scripts (X-Requested-With: XMLHttpRequest).', code: 40301 },
  },
  'csrfProtection(): a session request without a token': {
    middlewares: () => [csrfProtection({ tokens, sessionOf: () => 's1' })],
    send: (app) => request(app).post('/v1/users/1'),
    status: 403,
    error: {
      message: 'The CSRF token is missing or not valid.',
      code: 40302,
      detail: 'no CSRF token in the CSRF-Token header or the _csrf field',
    },
  },
  'csrfProtection(): an asynchronous session lookup and a wrong token': {
    middlewares: () => [csrfProtection({ tokens, sessionOf: async () => 's1' })],
    send: (app) => request(app).post('/v1/users/1').set('CSRF-Token', tokens.issue('s2')),
    status: 403,
    error: {
      message: 'The CSRF token is missing or not valid.',
      code: 40302,
      detail: 'the CSRF token does not belong to this session',
    },
  },
  'methodOverride(): an override of a GET': {
    middlewares: () => [methodOverride()],
    send: (app) => request(app).get('/v1/users/1').set('X-HTTP-Method-Override', 'DELETE'),
    status: 400,
    error: {
      message:
        'The method override is not allowed: only a POST can be overridden, this request is a GET.' +
        ' Send the method itself, or POST with X-HTTP-Method-Override (methodOverride({ methods }) lists the ones allowed).',
      code: 40002,
    },
  },
  'parseBodies(): malformed JSON': {
    middlewares: () => parseBodies(),
    send: (app) => request(app).post('/v1/users/1').set('Content-Type', 'application/json').send('{"name":'),
    status: 400,
    error: { message: 'The request body could not be parsed.', code: 40001, detail: expect.any(String) },
  },
  'parseBodies(): a body over the limit': {
    middlewares: () => parseBodies({ limit: 10 }),
    send: (app) => request(app).post('/v1/users/1').send({ name: 'longer than ten bytes' }),
    status: 413,
    error: { message: 'The request body is too large.', code: 41300, detail: expect.any(String) },
  },
  'parseBodies(): a JSON body that is not UTF-8': {
    middlewares: () => parseBodies(),
    send: (app) =>
      request(app)
        .post('/v1/users/1')
        .set('Content-Type', 'application/json')
        // superagent would JSON.stringify a Buffer sent as JSON: send the bytes as they are.
        .serialize((bytes) => bytes)
        .send(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])),
    status: 400,
    error: {
      message: 'The request body is not valid UTF-8 (or holds an unpaired surrogate escape).',
      code: 40012,
      detail: 'the JSON body holds bytes that are not UTF-8',
    },
  },
};

/**
 * Refusals whose answer is the same with or without errorHandler() (no
 * `detail`): the status, every header the spec requires and the exact body.
 */
interface ProtocolCase {
  readonly middlewares: () => RequestHandler[];
  readonly send: (app: express.Express) => Promise<request.Response>;
  readonly status: number;
  readonly headers: Readonly<Record<string, string | null>>;
  readonly body: Record<string, unknown>;
}

const TOKEN_FAILURE = { 'Cache-Control': 'no-store, max-age=0', Pragma: 'no-cache' };
const failingStore: CounterStore = {
  increment: () => Promise.reject(new Error('connection refused')),
  get: () => Promise.reject(new Error('connection refused')),
  decrement: () => Promise.reject(new Error('connection refused')),
  reset: () => Promise.reject(new Error('connection refused')),
};
const router = () =>
  tokenRouter({
    ...TOKEN_OPTIONS,
    scopes: SCOPES,
    ...stores,
  }) as unknown as RequestHandler;
const postForm = (app: express.Express, form: Record<string, string>) =>
  request(app).post('/v1/oauth2/token').type('form').send(form);
const bearer = () => bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE });
const readerAuth: RequestHandler = (req, _res, next) => {
  // AuthContext, the type of req.auth, comes from the oauth2 entry point too.
  const auth: AuthContext = { subject: 'u-2', scopes: ['users:read'] };
  req.auth = auth;
  next();
};

const PROTOCOL_CASES: Readonly<Record<string, ProtocolCase>> = {
  'rateLimit(): the request over the limit (429 with Retry-After)': {
    middlewares: () => [rateLimit({ limit: 1, windowSeconds: 60, application: false, address: () => '127.0.0.1' })],
    send: async (app) => {
      await request(app).get('/v1/users/1');
      return request(app).get('/v1/users/1');
    },
    status: 429,
    headers: {
      ...JSON_HEADERS,
      'Retry-After': '60',
      'RateLimit-Policy': expect.stringMatching(/^"user";q=1;w=60;pk=:/) as unknown as string,
      RateLimit: expect.stringMatching(/^"user";r=0;t=60;pk=:/) as unknown as string,
    },
    body: { errors: [{ message: 'Too many requests; retry after the time in Retry-After.', code: 42900 }] },
  },
  'rateLimit(): a store that is down (503 with Retry-After)': {
    middlewares: () => [rateLimit({ store: failingStore, log: false, application: false, address: () => '127.0.0.1' })],
    send: (app) =>
      request(app)
        .get('/v1/users/1')
        .then((res) => res),
    status: 503,
    headers: { ...JSON_HEADERS, 'Retry-After': '5' },
    body: { errors: [{ message: 'A shared state store is unreachable.', code: 50302 }] },
  },
  'tokenRouter(): a wrong password (RFC 6749 §5.2 JSON)': {
    middlewares: () => [router()],
    send: (app) => postForm(app, { grant_type: 'password', username: 'alice', password: 'not-her-password' }).then((res) => res),
    status: 400,
    headers: { 'Content-Type': JSON_HEADERS['Content-Type'], ...TOKEN_FAILURE },
    body: { error: 'invalid_grant', error_description: 'The username or password is not correct.' },
  },
  'tokenRouter(): an unsupported grant type': {
    middlewares: () => [router()],
    send: (app) => postForm(app, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code' }).then((res) => res),
    status: 400,
    headers: { 'Content-Type': JSON_HEADERS['Content-Type'], ...TOKEN_FAILURE },
    body: {
      error: 'unsupported_grant_type',
      error_description: 'The grant type is not supported; grant_types_supported in the server metadata lists those that are.',
    },
  },
  'tokenRouter(): a body that is not a form': {
    middlewares: () => [router()],
    send: (app) =>
      request(app)
        .post('/v1/oauth2/token')
        .set('Content-Type', 'application/json')
        .send('{}')
        .then((res) => res),
    status: 400,
    headers: { 'Content-Type': JSON_HEADERS['Content-Type'], ...TOKEN_FAILURE },
    body: { error: 'invalid_request', error_description: 'The request body must be application/x-www-form-urlencoded.' },
  },
  'bearerAuth(): no bearer token (401 with the challenge)': {
    middlewares: () => [bearer()],
    send: (app) =>
      request(app)
        .get('/v1/users/1')
        .then((res) => res),
    status: 401,
    headers: { ...JSON_HEADERS, 'WWW-Authenticate': 'Bearer realm="api"' },
    body: { errors: [{ message: 'A bearer access token is required.', code: 40100 }] },
  },
  'bearerAuth(): a token that does not verify (401 invalid_token, RFC 6750)': {
    middlewares: () => [bearer()],
    send: (app) =>
      request(app)
        .get('/v1/users/1')
        .set('Authorization', 'Bearer abc.def.ghi')
        .then((res) => res),
    status: 401,
    headers: {
      'Content-Type': JSON_HEADERS['Content-Type'],
      // docs/conventions.md rule 13.7: `Cache-Control: no-store`, `Pragma: no-cache`.
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
      'WWW-Authenticate': expect.stringMatching(
        /^Bearer realm="api", error="invalid_token", error_description="[^"]+"$/,
      ) as unknown as string,
    },
    body: { error: 'invalid_token', error_description: expect.any(String) },
  },
  'requireScope(): a token without the scope (403 insufficient_scope)': {
    middlewares: () => [readerAuth, requireScope('users:write')],
    send: (app) =>
      request(app)
        .get('/v1/users/1')
        .then((res) => res),
    status: 403,
    headers: {
      ...JSON_HEADERS,
      'WWW-Authenticate':
        'Bearer realm="api", error="insufficient_scope", scope="users:write", error_description="The access token lacks the scope: users:write."',
    },
    body: { error: 'insufficient_scope', error_description: 'The access token lacks the scope: users:write.' },
  },
  'requireScope(): no authentication at all (401)': {
    middlewares: () => [requireScope('users:write')],
    send: (app) =>
      request(app)
        .get('/v1/users/1')
        .then((res) => res),
    status: 401,
    headers: { ...JSON_HEADERS, 'WWW-Authenticate': 'Bearer realm="api"' },
    body: { errors: [{ message: 'A bearer access token is required.', code: 40100 }] },
  },
};

describe.each([
  ['Express 5', express as Factory],
  ['Express 4', express4 as unknown as Factory],
])(
  'rate limiter, token endpoint and bearer refusals: the same JSON answer alone and before errorHandler(), on %s',
  (_name, factory) => {
    it.each(Object.entries(PROTOCOL_CASES))(
      '%s, with nothing after it',
      async (_case, { middlewares, send, status, headers, body }) => {
        const res = await send(alone(factory, middlewares()));
        expect(res.status).toBe(status);
        expectHeaders(res, headers);
        expect(res.body).toEqual(body);
      },
    );

    it.each(Object.entries(PROTOCOL_CASES))(
      '%s, with errorHandler() after it',
      async (_case, { middlewares, send, status, headers, body }) => {
        const app = alone(factory, middlewares());
        app.use(errorHandler({ production: true, log: false }));
        const res = await send(app);
        expect(res.status).toBe(status);
        expectHeaders(res, headers);
        expect(res.body).toEqual(body);
      },
    );
  },
);

describe.each([
  ['Express 5', express as Factory],
  ['Express 4', express4 as unknown as Factory],
])('refusals answered in JSON by the middleware itself, on %s', (_name, factory) => {
  describe('with nothing mounted after it', () => {
    it.each(Object.entries(CASES))('%s', async (_case, { middlewares, send, status, error }) => {
      const res = await send(alone(factory, middlewares()));
      expect(res.status).toBe(status);
      expectHeaders(res, JSON_HEADERS);
      expect(res.body).toEqual({ errors: [error] });
    });
  });

  describe('with errorHandler() mounted after it: errorHandler renders, with its options', () => {
    it.each(Object.entries(CASES))('%s', async (_case, { middlewares, send, status, error }) => {
      const app = alone(factory, middlewares());
      app.use(errorHandler({ production: true, log: false }));
      const res = await send(app);
      expect(res.status).toBe(status);
      expectHeaders(res, JSON_HEADERS);
      // production: true leaves out detail; the middleware alone (above) keeps it outside production.
      const { detail: _detail, ...withoutDetail } = error;
      expect(res.body).toEqual({ errors: [withoutDetail] });
    });
  });
});

describe("an app's own error middleware and errorHandler()", () => {
  it('an own error middleware alone never sees the refusal: the middleware answers it (test/foreign-error-handler.test.ts)', async () => {
    const seen: unknown[] = [];
    const app = alone(express, [requireXhr()]);
    const own: ErrorRequestHandler = (error, _req, res, _next) => {
      seen.push(error);
      res.status(418).json({ mine: true });
    };
    app.use(own);
    const res = await request(app).get('/v1/users/1');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      errors: [{ message: 'This endpoint only answers browser scripts (X-Requested-With: XMLHttpRequest).', code: 40301 }],
    });
    expect(seen).toEqual([]);
  });

  it('an own error middleware before errorHandler() gets the ApiError through next(), as before', async () => {
    const seen: unknown[] = [];
    const app = alone(express, [requireXhr()]);
    const own: ErrorRequestHandler = (error, _req, _res, next) => {
      seen.push(error);
      next(error);
    };
    app.use(own, errorHandler({ production: true, log: false }));
    const res = await request(app).get('/v1/users/1');
    expect(res.status).toBe(403);
    expect(seen).toEqual([expect.objectContaining({ name: 'ApiError', code: 40301 })]);
  });

  it('also when the app is mounted in another app that has it', async () => {
    const inner = alone(express, [requireXhr()]);
    const outer = express();
    outer.use(inner);
    outer.use(errorHandler({ production: true, log: false }));
    const res = await request(outer).get('/v1/users/1');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      errors: [{ message: 'This endpoint only answers browser scripts (X-Requested-With: XMLHttpRequest).', code: 40301 }],
    });
  });
});
