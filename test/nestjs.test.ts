import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import express, { type ErrorRequestHandler } from 'express';
import request from 'supertest';
import { checkConventions } from '../checker/src/index.js';
import { conventions } from '../src/index.js';
import { createMisorderedNestApp, createNestApp } from './support/nest-app.js';

/**
 * NestJS on Express in two lines: `app.use(conventions())` and
 * `app.useGlobalFilters(new ConventionsExceptionFilter())`. Each error answer
 * is the one the reference server gives for the same case (its bodies are
 * written out here: test/reference-server/http.test.ts proves them there),
 * and the checker finds no MUST failure, in development and in production.
 */

const ORIGIN = 'https://app.example';
const OPTIONS = { corsPolicy: { origins: [ORIGIN] }, rateLimit: { limit: 40, windowSeconds: 60 } };

const withEnvironment = (value: string) => {
  const before = process.env.NODE_ENV;
  beforeAll(() => {
    process.env.NODE_ENV = value;
  });
  afterAll(() => {
    process.env.NODE_ENV = before;
  });
};

describe.each(['development', 'production'])('a NestJS 11 app with the two lines, NODE_ENV=%s', (environment) => {
  withEnvironment(environment);
  const production = environment === 'production';
  let app: INestApplication;
  let http: ReturnType<INestApplication['getHttpServer']>;
  beforeAll(async () => {
    app = await createNestApp(OPTIONS);
    http = app.getHttpServer();
  });
  afterAll(() => app.close());

  const first = (body: { errors: { message: string; code: number; detail?: unknown }[] }) => body.errors[0];

  it('answers a path no route matches with the unknown-endpoint 404 (40401)', async () => {
    const res = await request(http).get('/v1/nope');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first(res.body)).toMatchObject({ message: 'No endpoint answers this URI.', code: 40401 });
  });

  it("answers a NotFoundException of a matched route with the missing resource's 404 (40402), a body of its own", async () => {
    const res = await request(http).get('/v1/users/99');
    expect(res.status).toBe(404);
    expect(first(res.body)).toMatchObject({ message: 'No user has this id.', code: 40402 });
    const unknown = await request(http).get('/v1/nope');
    expect(res.text).not.toBe(unknown.text);
  });

  it('answers a wrong method with 405 and the Allow of the path', async () => {
    const res = await request(http).delete('/v1/users');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(first(res.body)).toMatchObject({ code: 40500 });
  });

  it('keeps one item per message of a BadRequestException (40005)', async () => {
    const res = await request(http).post('/v1/users').send({ email: 'nope' });
    expect(res.status).toBe(400);
    expect(res.body.errors.map(({ message, code }: { message: string; code: number }) => ({ message, code }))).toEqual([
      { message: 'name must be a string', code: 40005 },
      { message: 'email must be an email', code: 40005 },
    ]);
  });

  it('answers a malformed body with 40001, through the preset', async () => {
    const res = await request(http).post('/v1/users').set('Content-Type', 'application/json').send('{"name":');
    expect(res.status).toBe(400);
    expect(first(res.body)).toMatchObject({ message: 'The request body could not be parsed.', code: 40001 });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-store, max-age=0');
  });

  it(`answers a thrown Error with 500 (50000)${production ? ', its message kept out' : ', its message as detail'}`, async () => {
    const res = await request(http).get('/v1/users/boom');
    expect(res.status).toBe(500);
    if (production) expect(res.body).toEqual({ errors: [{ message: 'An internal error occurred.', code: 50000 }] });
    else expect(first(res.body)).toMatchObject({ code: 50000, detail: 'the database password is hunter2' });
  });

  it('refuses a preflight from an origin not listed with 403 (40303), not a 500', async () => {
    const res = await request(http)
      .options('/v1/users')
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'POST');
    expect(res.status).toBe(403);
    expect(first(res.body)).toMatchObject({ code: 40303 });
  });

  it('passes the checker with no MUST failure', async () => {
    const server = http.listening
      ? http
      : await new Promise<typeof http>((done) => http.listen(0, '127.0.0.1', () => done(http)));
    const { port } = server.address() as AddressInfo;
    const report = await checkConventions(`http://127.0.0.1:${port}`, {
      resource: '/v1/users/1',
      origin: ORIGIN,
      probeLimit: 60,
      maxRequests: 120,
    });
    expect(report.summary.pass).toBeGreaterThan(50);
    expect(report.results.filter((result) => result.status === 'fail' && result.severity === 'must')).toEqual([]);
    // The two 404s are told apart (errors.not-found.distinct, a MUST).
    expect(report.results.find((result) => result.id === 'errors.not-found.distinct')?.status).toBe('pass');
    // The limit probe reached the 429, and its Retry-After holds.
    expect(report.results.find((result) => result.id === 'limits.retry-after')?.status).toBe('pass');
  }, 60_000);
});

describe('a NestJS app over its limit', () => {
  it('answers 429 with Retry-After, not a 500', async () => {
    const app = await createNestApp({ rateLimit: { limit: 2, windowSeconds: 60 } });
    try {
      const http = app.getHttpServer();
      for (let i = 0; i < 2; i++) expect((await request(http).get('/v1/users')).status).toBe(200);
      const res = await request(http).get('/v1/users');
      expect(res.status).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(first429(res.body)).toMatchObject({ code: 42900 });
    } finally {
      await app.close();
    }
  });
});

const first429 = (body: { errors: { code: number }[] }) => body.errors[0];

describe('a plain Express app whose own error handler ignores err.status', () => {
  // What many teams write: every error is a 500 with their own body.
  const teamHandler: ErrorRequestHandler = (_error, _req, res, _next) => {
    res.status(500).json({ oops: true });
  };
  const build = () => {
    const app = express();
    app.use(conventions({ corsPolicy: { origins: [ORIGIN] }, rateLimit: { limit: 1, windowSeconds: 60 } }));
    app.get('/v1/things', (_req, res) => {
      res.json({ things: [], hasNext: false });
    });
    app.use(teamHandler);
    return app;
  };

  it("gets the preset's 429 as 429", async () => {
    const app = build();
    await request(app).get('/v1/things').expect(200);
    const res = await request(app).get('/v1/things');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
    expect(res.body.errors[0].code).toBe(42900);
  });

  it("gets the preset's refused preflight as 403", async () => {
    const res = await request(build())
      .options('/v1/things')
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'POST');
    expect(res.status).toBe(403);
    expect(res.body.errors[0].code).toBe(40303);
  });

  it('still sees the errors of its routes', async () => {
    const app = express();
    app.use(conventions());
    app.get('/v1/broken', () => {
      throw new Error('route failure');
    });
    app.use(teamHandler);
    await request(app).get('/v1/broken').expect(500, { oops: true });
  });
});

describe('an ApiError reaching a handler written to http-errors', () => {
  it('carries status, statusCode and expose', async () => {
    const { apiError } = await import('../src/errors/index.js');
    const error = apiError('tooManyRequests');
    expect([error.status, error.statusCode, error.expose]).toEqual([429, 429, true]);
    expect(apiError('internal').expose).toBe(false);
  });
});

describe("the README's Express recipe in a NestJS app", () => {
  let app: INestApplication;
  let spy: jest.SpyInstance;
  beforeAll(async () => {
    spy = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    app = await createMisorderedNestApp();
  });
  afterAll(async () => {
    spy.mockRestore();
    await app.close();
  });
  const said = async (code: string) =>
    spy.mock.calls
      .map(([message, options]) => ({ message: String(message), code: (options as { code?: string } | undefined)?.code }))
      .filter((warning) => warning.code === code);

  it("says once that notFound() stands before the routes when a 405 names the request's own method", async () => {
    const res = await request(app.getHttpServer()).get('/v1/users');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    await request(app.getHttpServer()).get('/v1/users');
    const found = await said('EAC_NOT_FOUND_BEFORE_ROUTES');
    expect(found).toHaveLength(1);
    expect(found[0]?.message).toContain('notFound() is mounted before the routes');
    expect(found[0]?.message).toContain('docs/guides/nestjs.md');
  });

  it("points to the NestJS guide instead of the generic order warning when errorHandler() sees Nest's exception layer", async () => {
    await request(app.getHttpServer()).get('/v1/users/1');
    const found = await said('EAC_NESTJS_EXCEPTION_LAYER');
    expect(found).toHaveLength(1);
    expect(found[0]?.message).toContain('ConventionsExceptionFilter');
    expect(await said('EAC_ERROR_HANDLER_NOT_LAST')).toEqual([]);
  });
});

describe('the checker on a refusal that became a 500', () => {
  it('fails cors.look-alike-refused', async () => {
    const app = express();
    // What a foreign error layer made of a refused preflight before the filter existed.
    app.use((req, res, next) => {
      if (req.method === 'OPTIONS' && req.headers.origin !== ORIGIN) res.status(500).json({ statusCode: 500 });
      else next();
    });
    app.use(conventions({ corsPolicy: { origins: [ORIGIN] } }));
    app.get('/v1/users/:id', (_req, res) => {
      res.json({ id: 1 });
    });
    const report = await checkConventions(app, { resource: '/v1/users/1', origin: ORIGIN });
    const result = report.results.find((entry) => entry.id === 'cors.look-alike-refused');
    expect(result?.status).toBe('fail');
    expect(result?.evidence?.seen).toBe('status 500');
  }, 60_000);
});

describe('the checker on the misordered recipe', () => {
  it('says "mount order" when --resource answers 405', async () => {
    const spy = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const app = await createMisorderedNestApp();
    try {
      const target = app.getHttpAdapter().getInstance();
      const report = await checkConventions(target, { resource: '/v1/users/1' });
      const etag = report.results.find((entry) => entry.id === 'caching.etag');
      expect(etag?.status).toBe('fail');
      expect(etag?.evidence?.expected).toContain('mount order');
    } finally {
      spy.mockRestore();
      await app.close();
    }
  }, 60_000);
});

describe("the checker's rate-limit probe (probeLimit)", () => {
  it('fails limits.retry-after when the limit is answered with a 500', async () => {
    let count = 0;
    const app = express();
    // What a foreign error layer made of the preset's 429 before the filter existed.
    app.use((_req, res, next) => {
      if (++count > 5) res.status(500).json({ statusCode: 500, message: 'Internal server error' });
      else next();
    });
    app.use(conventions());
    app.get('/v1/users/:id', (_req, res) => {
      res.json({ id: 1 });
    });
    const report = await checkConventions(app, { resource: '/v1/users/1', probeLimit: 20 });
    const result = report.results.find((entry) => entry.id === 'limits.retry-after');
    expect(result?.status).toBe('fail');
    expect(result?.evidence?.seen).toBe('status 500');
  }, 60_000);
});
