import { STATUS_CODES } from 'node:http';
import express, { type Express } from 'express';
import express4 from 'express4';
import createError from 'http-errors';
import request from 'supertest';
import { ERROR_CATALOGUE } from '../src/errors/catalogue.js';
import { ApiError, apiError, entryForStatus, errorHandler, notFound } from '../src/errors/index.js';
import { jsonResponses } from '../src/json/index.js';
import { conventions } from '../src/preset.js';
import { parseBodies } from '../src/request/index.js';
import { StoreUnavailableError } from '../src/stores/index.js';
import { expectHeaders, HTTP_DATE } from './helpers.js';

type ExpressFactory = () => Express;

const JSON_TYPE = 'application/json; charset=utf-8';

function buildApp(factory: ExpressFactory, production: boolean, log = jest.fn()): Express {
  const app = factory();
  app.use(jsonResponses(), ...parseBodies({ limit: 64 }));
  app.get('/v1/users/:id', (req, res) => {
    if (req.params.id === '1') res.json({ id: 1 });
    else throw apiError('resourceNotFound');
  });
  app.post('/v1/users', (_req, res) => {
    res.status(201).json({ created: true });
  });
  app.delete('/v1/users/:id', (_req, res) => {
    res.status(204).end();
  });
  app.get('/sync-throw', () => {
    throw new Error('database password is hunter2');
  });
  app.get('/async-throw', async () => {
    await Promise.resolve();
    throw new Error('async failure detail');
  });
  app.get('/http-error', (_req, _res, next) => {
    next(Object.assign(new Error('I am a teapot'), { status: 418 }));
  });
  app.get('/conflict', () => {
    throw apiError('uniqueKeyTaken', { message: 'The email is taken.' });
  });
  app.get('/etag-then-throw', (_req, res) => {
    res.setHeader('ETag', '"abc"');
    res.setHeader('Cache-Control', 'public, max-age=60');
    throw new Error('late');
  });
  app.get('/retry', () => {
    throw apiError('tooManyRequests', { headers: { 'Retry-After': '7' } });
  });
  app.get('/custom-body', () => {
    throw apiError('unauthenticated', {
      body: { error: 'invalid_token' },
      headers: { 'Cache-Control': 'no-store', Pragma: 'no-cache' },
    });
  });
  app.use(notFound(), errorHandler({ production, log }));
  return app;
}

describe.each([
  ['Express 5', express as ExpressFactory],
  ['Express 4', express4 as unknown as ExpressFactory],
])('errorHandler() on %s', (_name, factory) => {
  const dev = buildApp(factory, false);
  const log = jest.fn();
  const prod = buildApp(factory, true, log);

  describe('a route that reports a missing resource', () => {
    it('answers 404 with code 40402', async () => {
      const res = await request(dev).get('/v1/users/2');
      expect(res.status).toBe(404);
      expectHeaders(res, { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store, max-age=0' });
      expect(res.body).toEqual({ errors: [{ message: 'The resource does not exist.', code: 40402 }] });
    });
  });

  describe('a URI that no route answers (rule 14.4)', () => {
    it('answers 404 JSON with code 40401, which differs from the missing-resource code', async () => {
      const res = await request(prod).get('/v1/nothing-here');
      expect(res.status).toBe(404);
      expectHeaders(res, { 'Content-Type': JSON_TYPE, 'X-Powered-By': res.headers['x-powered-by'] ?? null });
      expect(res.body).toEqual({ errors: [{ message: 'No endpoint answers this URI.', code: 40401 }] });
      expect(ERROR_CATALOGUE.routeNotFound.code).not.toBe(ERROR_CATALOGUE.resourceNotFound.code);
    });

    it('tells the method and path in development', async () => {
      const res = await request(dev).get('/v1/nothing-here?x=1');
      expect(res.body.errors[0].detail).toEqual({ method: 'GET', path: '/v1/nothing-here' });
    });

    it('answers a HEAD with the 404 status and no body', async () => {
      const res = await request(prod).head('/v1/nothing-here');
      expect(res.status).toBe(404);
      expectHeaders(res, { 'Content-Type': JSON_TYPE });
      expect(res.text).toBeUndefined();
    });
  });

  describe('a path that exists for other methods', () => {
    it('answers 405 with Allow listing them', async () => {
      const res = await request(prod).patch('/v1/users/1');
      expect(res.status).toBe(405);
      expectHeaders(res, { Allow: 'DELETE, GET, HEAD', 'Content-Type': JSON_TYPE });
      expect(res.body).toEqual({ errors: [{ message: 'The method is not allowed on this URI.', code: 40500 }] });
    });

    it('sees routes of nested routers', async () => {
      const app = factory();
      const router = express.Router();
      router.put('/items/:id', (_req, res) => {
        res.json({});
      });
      app.use('/v1', router);
      app.use(notFound(), errorHandler({ log: false }));
      const res = await request(app).get('/v1/items/3');
      expect(res.status).toBe(405);
      expectHeaders(res, { Allow: 'PUT' });
    });

    it('sees the routes of a router inside the preset (the token endpoint)', async () => {
      const app = factory();
      const router = express.Router();
      router.post('/v1/oauth2/token', (_req, res) => {
        res.json({});
      });
      app.use(conventions({ after: { tokenRouter: [router] } }));
      app.use(notFound(), errorHandler({ production: true, log: false }));
      const res = await request(app).patch('/v1/oauth2/token');
      expect(res.status).toBe(405);
      expectHeaders(res, { Allow: 'POST' });
      expect(res.body).toEqual({ errors: [{ message: 'The method is not allowed on this URI.', code: 40500 }] });
    });
  });

  describe('errors thrown by handlers', () => {
    it('renders a sync throw as 500 with a generic message and no stack in production', async () => {
      const res = await request(prod).get('/sync-throw');
      expect(res.status).toBe(500);
      expectHeaders(res, { 'Content-Type': JSON_TYPE });
      expect(res.body).toEqual({ errors: [{ message: 'An internal error occurred.', code: 50000 }] });
      expect(res.text).not.toContain('hunter2');
      expect(res.text).not.toContain('at ');
      expect(log).toHaveBeenCalledWith(expect.objectContaining({ status: 500, code: 50000, method: 'GET', path: '/sync-throw' }));
    });

    it('gives the detail in development', async () => {
      const res = await request(dev).get('/sync-throw');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        errors: [{ message: 'An internal error occurred.', code: 50000, detail: 'database password is hunter2' }],
      });
    });

    it('maps an error carrying a status to that status, with the class code when none fits', async () => {
      const res = await request(prod).get('/http-error');
      expect(res.status).toBe(418);
      expectHeaders(res, { 'Content-Type': JSON_TYPE });
      expect(res.body).toEqual({ errors: [{ message: "I'm a Teapot.", code: 41800 }] });
    });

    it('keeps the message and status of an ApiError', async () => {
      const res = await request(prod).get('/conflict');
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ errors: [{ message: 'The email is taken.', code: 40901 }] });
    });

    it('sends the headers an error brings', async () => {
      const res = await request(prod).get('/retry');
      expect(res.status).toBe(429);
      expectHeaders(res, { 'Retry-After': '7' });
      expect(res.body).toEqual({
        errors: [{ message: 'Too many requests; retry after the time in Retry-After.', code: 42900 }],
      });
    });

    it('renders a protocol body (RFC 6750) when the error brings one', async () => {
      const res = await request(prod).get('/custom-body');
      expect(res.status).toBe(401);
      expectHeaders(res, { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store', Pragma: 'no-cache' });
      expect(res.body).toEqual({ error: 'invalid_token' });
    });

    it('drops representation headers the failed handler had set, and is never stored', async () => {
      const res = await request(prod).get('/etag-then-throw');
      expect(res.status).toBe(500);
      expectHeaders(res, { ETag: null, 'Cache-Control': 'no-store, max-age=0' });
    });

    it('keeps Date on 4xx answers', async () => {
      const res = await request(prod).get('/v1/users/2');
      expect(res.headers.date).toMatch(HTTP_DATE);
    });
  });

  describe('body parser failures', () => {
    it('answers malformed JSON with 400 code 40001', async () => {
      const res = await request(prod).post('/v1/users').set('Content-Type', 'application/json').send('{"a":');
      expect(res.status).toBe(400);
      expectHeaders(res, { 'Content-Type': JSON_TYPE });
      expect(res.body).toEqual({ errors: [{ message: 'The request body could not be parsed.', code: 40001 }] });
    });

    it('answers a body over the limit with 413 code 41300', async () => {
      const res = await request(prod)
        .post('/v1/users')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ text: 'x'.repeat(200) }));
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ errors: [{ message: 'The request body is too large.', code: 41300 }] });
    });

    it('answers an unsupported charset with 415 code 41501', async () => {
      const res = await request(prod).post('/v1/users').set('Content-Type', 'application/json; charset=koi8-r').send('{}');
      expect(res.status).toBe(415);
      expect(res.body).toEqual({ errors: [{ message: 'The request body charset is not supported.', code: 41501 }] });
    });

    it('answers an unsupported content encoding with 415 code 41502', async () => {
      const res = await request(prod)
        .post('/v1/users')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'br-nonsense')
        .send('{}');
      expect(res.status).toBe(415);
      expect(res.body).toEqual({
        errors: [{ message: 'The request body content encoding is not supported.', code: 41502 }],
      });
    });
  });

  describe('a path the router cannot decode', () => {
    it('answers 400 JSON code 40006, not Express HTML', async () => {
      const res = await request(prod).get('/v1/users/%E0%A4%A');
      expect(res.status).toBe(400);
      expectHeaders(res, { 'Content-Type': JSON_TYPE });
      expect(res.body).toEqual({ errors: [{ message: 'The request URI is not valid.', code: 40006 }] });
    });
  });
});

describe('errorHandler() on an async throw (Express 5 catches rejected promises)', () => {
  it('renders 500 JSON', async () => {
    const res = await request(buildApp(express, true)).get('/async-throw');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ errors: [{ message: 'An internal error occurred.', code: 50000 }] });
  });
});

describe('errorHandler() when the response has already begun', () => {
  it('closes the connection instead of appending an error to a partial body', async () => {
    const app = express();
    app.get('/partial', (_req, res, next) => {
      res.write('{"partial":');
      next(new Error('broke mid-stream'));
    });
    app.use(errorHandler({ log: false }));
    await expect(request(app).get('/partial')).rejects.toThrow();
  });
});

describe('errorHandler() options', () => {
  it('refuses an unknown option with a hint', () => {
    expect(() => errorHandler({ prodution: true } as never)).toThrow(
      'errorHandler(options): received an unsupported option `prodution`. Did you mean `production`?',
    );
  });

  it('refuses a log that is not a function', () => {
    expect(() => errorHandler({ log: 'yes' } as never)).toThrow('`log` must be a function, or false for no log; received "yes"');
  });

  it('catches app.use(errorHandler) written for app.use(errorHandler())', async () => {
    const app = express();
    app.use(errorHandler as never);
    app.get('/', (_req, res) => {
      res.json({});
    });
    let thrown: unknown;
    app.use((err: unknown, _req: unknown, res: express.Response, _next: unknown) => {
      thrown = err;
      res.status(500).end();
    });
    await request(app).get('/');
    expect(String(thrown)).toContain('call it to get one: app.use(errorHandler())');
  });
});

describe('an error that carries a status keeps what it says', () => {
  const appThrowing = (error: unknown, production: boolean) => {
    const app = express();
    app.get('/v1/things', () => {
      throw error;
    });
    app.use(errorHandler({ production, log: false }));
    return app;
  };

  it.each([
    // http-errors exposes the message of every 4xx: it is shown, in production too.
    ['http-errors 422 with a message', createError(422, 'The email is not valid.'), 422, 'The email is not valid.', 42200],
    ['http-errors 451', createError(451), 451, 'Unavailable For Legal Reasons', 45100],
    ['http-errors 404 with a message', createError(404, 'No user 7.'), 404, 'No user 7.', 40400],
    ['http-errors 400 with a message', createError(400, 'The date is in the past.'), 400, 'The date is in the past.', 40000],
    ['http-errors 429', createError(429), 429, 'Too Many Requests', 42900],
    // Not exposed: the generic message of the status.
    ['http-errors 504', createError(504, 'upstream db-3 timed out'), 504, 'Gateway Timeout.', 50400],
    [
      'a plain error with status 422',
      Object.assign(new Error('row 7 locked'), { status: 422 }),
      422,
      'Unprocessable Entity.',
      42200,
    ],
    [
      'a plain error with statusCode 409',
      Object.assign(new Error('x'), { statusCode: 409 }),
      409,
      ERROR_CATALOGUE.conflict.message,
      40900,
    ],
    [
      'a 503 that exposes its message',
      Object.assign(new Error('The billing service is down.'), { status: 503, expose: true }),
      503,
      'The billing service is down.',
      50300,
    ],
  ])('%s: its status, the generic code, the message only when exposed', async (_name, error, status, message, code) => {
    const res = await request(appThrowing(error, true)).get('/v1/things');
    expect(res.status).toBe(status);
    expectHeaders(res, { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store, max-age=0' });
    expect(res.body).toEqual({ errors: [{ message, code }] });
  });

  it('keeps a message that is not exposed as development detail only', async () => {
    const error = createError(504, 'upstream db-3 timed out');
    const res = await request(appThrowing(error, false)).get('/v1/things');
    expect(res.body).toEqual({ errors: [{ message: 'Gateway Timeout.', code: 50400, detail: 'upstream db-3 timed out' }] });
  });

  it('an exposed message is the message, not repeated as detail', async () => {
    const res = await request(appThrowing(createError(422, 'The email is not valid.'), false)).get('/v1/things');
    expect(res.body).toEqual({ errors: [{ message: 'The email is not valid.', code: 42200 }] });
  });
});

describe('generic codes', () => {
  it('give every error status 400-599 the code status × 100, with the catalogue message of that code when it has one', () => {
    const catalogued = new Map<number, string>(Object.values(ERROR_CATALOGUE).map((entry) => [entry.code, entry.message]));
    for (let status = 400; status <= 599; status++) {
      const entry = entryForStatus(status);
      expect([entry.status, entry.code]).toEqual([status, status * 100]);
      const reason = STATUS_CODES[status];
      const expected =
        catalogued.get(status * 100) ??
        (reason === undefined ? (status < 500 ? 'The request is not valid.' : 'An internal error occurred.') : `${reason}.`);
      expect(entry.message).toBe(expected);
    }
    expect(entryForStatus(302)).toBe(ERROR_CATALOGUE.internal);
  });
});

describe('ApiError', () => {
  it('carries status, code and message from the catalogue', () => {
    const error = apiError('preconditionFailed');
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(Error);
    expect([error.status, error.code, error.message]).toEqual([412, 41200, 'The resource changed since it was read.']);
  });

  it('gives every catalogue code the status as its first three digits, and no code twice', () => {
    const codes = Object.values(ERROR_CATALOGUE).map((entry) => entry.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const entry of Object.values(ERROR_CATALOGUE)) {
      expect(Math.floor(entry.code / 100)).toBe(entry.status);
    }
  });
});

describe('a shared store that is down', () => {
  it('is answered 503 stateStoreUnavailable with Retry-After, never 500', async () => {
    const app = express();
    app.get('/v1/things', () => {
      throw new StoreUnavailableError('RedisCounterStore', 'the command timed out after 500 ms');
    });
    app.use(errorHandler({ production: true, log: false }));
    const res = await request(app).get('/v1/things');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ errors: [{ message: 'A shared state store is unreachable.', code: 50302 }] });
  });
});

describe('a 401 without a challenge of its own', () => {
  const app = (options?: Parameters<typeof errorHandler>[0]) => {
    const built = express();
    built.post('/v1/sessions', () => {
      throw apiError('unauthenticated', { message: 'The username or password is not right.' });
    });
    built.get('/v1/basic', () => {
      throw apiError('unauthenticated', { headers: { 'WWW-Authenticate': 'Basic realm="api"' } });
    });
    built.use(errorHandler({ production: true, log: false, ...options }));
    return built;
  };

  it('carries WWW-Authenticate: Bearer (RFC 9110 §15.5.2: every 401 has a challenge)', async () => {
    const res = await request(app()).post('/v1/sessions');
    expect(res.status).toBe(401);
    expectHeaders(res, { 'WWW-Authenticate': 'Bearer' });
    expect(res.body).toEqual({ errors: [{ message: 'The username or password is not right.', code: 40100 }] });
  });

  it('carries the challenge errorHandler() is given', async () => {
    const res = await request(app({ challenge: 'Bearer realm="reference-server"' })).post('/v1/sessions');
    expectHeaders(res, { 'WWW-Authenticate': 'Bearer realm="reference-server"' });
  });

  it('keeps the challenge an error brings', async () => {
    const res = await request(app()).get('/v1/basic');
    expectHeaders(res, { 'WWW-Authenticate': 'Basic realm="api"' });
  });
});
