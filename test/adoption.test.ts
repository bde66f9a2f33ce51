import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import express4 from 'express4';
import request from 'supertest';
import { ConfigurationError } from '../src/config/index.js';
import { requireXhr } from '../src/cors/index.js';
import { type ConventionReport, conventionExceptions, errorHandler, notFound, reportOnly } from '../src/errors/index.js';
import { conventions } from '../src/preset.js';
import { cookieValue, csrfTokens, reportOnlySecurityHeaders } from '../src/security/index.js';
import { expectHeaders } from './helpers.js';
import { SPEC_SECURITY_HEADERS } from './support/spec-headers.js';

/**
 * Adopting the conventions in an app that already runs: report-only mode
 * (reported, not refused or changed), per-route exceptions with a reason,
 * refusals that name their fix, and a warning for an error middleware that
 * can never run (docs/guides/existing-app.md).
 */

const JSON_TYPE = 'application/json; charset=utf-8';

/** Collects reports as a metrics hook would. */
const collector = () => {
  const reports: ConventionReport[] = [];
  return { reports, log: (report: ConventionReport) => reports.push(report) };
};

const arrayApp = (preset: Parameters<typeof conventions>[0], ...route: express.RequestHandler[]): Express => {
  const app = express();
  app.use(conventions({ rateLimit: false, responseLinter: false, ...preset }));
  app.get('/v1/tags', ...route, (_req, res) => {
    res.json(['a', '<b>']);
  });
  app.use(notFound(), errorHandler({ production: false, log: false }));
  return app;
};

describe('a top-level array (rule 2.1)', () => {
  describe('enforced (the default)', () => {
    it('answers 500 with code 50001 and a detail that names sendList() and conventionExceptions()', async () => {
      const res = await request(arrayApp({})).get('/v1/tags');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        errors: [
          {
            message: 'The response body must be a JSON object.',
            code: 50001,
            detail: {
              received: 'an array',
              rule: 'docs/conventions.md §2.1: a JSON body is an object at the top level',
              fix: "wrap the list: sendList(res, 'items', { items, hasNext }) or res.json({ items, hasNext })",
              exception: "for an old client that reads an array: conventionExceptions({ topLevelArray: 'why' }) on the route",
            },
          },
        ],
      });
    });

    it('names the wrapping for a bare value', async () => {
      const app = express();
      app.use(conventions({ rateLimit: false, responseLinter: false }));
      app.get('/v1/count', (_req, res) => {
        res.json(3);
      });
      app.use(errorHandler({ production: false, log: false }));
      const res = await request(app).get('/v1/count');
      expect(res.status).toBe(500);
      expect(res.body.errors[0].detail).toEqual({
        received: 'a number',
        rule: 'docs/conventions.md §2.1: a JSON body is an object at the top level',
        fix: 'wrap the value: res.json({ value })',
      });
    });
  });

  describe('with conventionExceptions({ topLevelArray }) on the route', () => {
    it('sends the array as JSON, escaped as every body is', async () => {
      const app = arrayApp({}, conventionExceptions({ topLevelArray: 'app 2.x reads an array; until its end of life' }));
      const res = await request(app).get('/v1/tags');
      expect(res.status).toBe(200);
      expectHeaders(res, { 'Content-Type': JSON_TYPE, 'X-Content-Type-Options': 'nosniff' });
      expect(res.text).toBe('["a","\\u003Cb\\u003E"]');
    });

    it('is not a finding of the response linter either, even in strict mode', async () => {
      const findings: unknown[] = [];
      const app = express();
      app.use(conventions({ rateLimit: false, responseLinter: { strict: true, log: (report) => findings.push(report) } }));
      app.get('/v1/tags', conventionExceptions({ topLevelArray: 'old client' }), (_req, res) => {
        res.json(['a']);
      });
      app.get('/v1/labels', (_req, res) => {
        res.json({ labels: ['a'], hasNext: false, label_count: 1 });
      });
      app.use(errorHandler({ production: false, log: false }));
      const excepted = await request(app).get('/v1/tags');
      expect(excepted.status).toBe(200);
      expect(findings).toEqual([]);
      // The linter still reads the other routes: a snake_case key there is refused.
      const control = await request(app).get('/v1/labels');
      expect(control.status).toBe(500);
      expect(control.body.errors[0].code).toBe(50002);
    });

    it('leaves other routes enforced', async () => {
      const app = express();
      app.use(conventions({ rateLimit: false, responseLinter: false }));
      app.get('/v1/old', conventionExceptions({ topLevelArray: 'old client' }), (_req, res) => {
        res.json([1]);
      });
      app.get('/v1/new', (_req, res) => {
        res.json([1]);
      });
      app.use(errorHandler({ log: false }));
      expect((await request(app).get('/v1/old')).status).toBe(200);
      expect((await request(app).get('/v1/new')).status).toBe(500);
    });

    it.each([
      [{}, 'conventionExceptions(options): `exceptions` must be an object naming at least one exception'],
      [{ topLevelArray: '' }, 'conventionExceptions(options): `topLevelArray` must be a non-empty string; received'],
      [
        { topLevelArrays: 'x' },
        'conventionExceptions(options): received an unsupported option `topLevelArrays`. Did you mean `topLevelArray`?',
      ],
    ])('refuses %j at start-up, without a reason or with a typo', (given, message) => {
      expect(() => conventionExceptions(given as never)).toThrow(ConfigurationError);
      expect(() => conventionExceptions(given as never)).toThrow(message);
    });
  });

  describe('in report-only mode', () => {
    it('sends the array as the route wrote it and reports rule 2.1 with the fix', async () => {
      const { reports, log } = collector();
      const res = await request(arrayApp({ reportOnly: { log } })).get('/v1/tags?x=1');
      expect(res.status).toBe(200);
      expect(res.text).toBe('["a","\\u003Cb\\u003E"]');
      expect(reports).toEqual([
        {
          rule: '2.1',
          middleware: 'jsonResponses',
          enforced: 'answered 500 (code 50001)',
          message: expect.stringContaining('conventionExceptions({ topLevelArray'),
          method: 'GET',
          path: '/v1/tags',
        },
      ]);
    });

    it('writes one JSON line on stderr by default', async () => {
      const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
      try {
        const res = await request(arrayApp({ reportOnly: true })).get('/v1/tags');
        expect(res.status).toBe(200);
        const lines = write.mock.calls.map(([chunk]) => String(chunk)).filter((line) => line.includes('convention_report_only'));
        expect(lines).toHaveLength(1);
        expect(JSON.parse(lines[0] as string)).toEqual({
          level: 'warn',
          event: 'convention_report_only',
          rule: '2.1',
          middleware: 'jsonResponses',
          enforced: 'answered 500 (code 50001)',
          message: expect.any(String),
          method: 'GET',
          path: '/v1/tags',
        });
      } finally {
        write.mockRestore();
      }
    });

    it('applies route by route: reportOnly() on one route, enforced elsewhere', async () => {
      const { reports, log } = collector();
      const app = express();
      app.use(conventions({ rateLimit: false, responseLinter: false }));
      app.get('/v1/old', reportOnly({ log }), (_req, res) => {
        res.json([1]);
      });
      app.get('/v1/new', (_req, res) => {
        res.json([1]);
      });
      app.use(errorHandler({ log: false }));
      expect((await request(app).get('/v1/old')).status).toBe(200);
      expect((await request(app).get('/v1/new')).status).toBe(500);
      expect(reports.map((r) => r.path)).toEqual(['/v1/old']);
    });
  });
});

describe('security headers in report-only mode', () => {
  const headersApp = (preset: Parameters<typeof conventions>[0]): Express => {
    const app = express();
    app.use(conventions({ rateLimit: false, responseLinter: false, ...preset }));
    app.get('/v1/things', (_req, res) => {
      res.json({ ok: true });
    });
    app.get('/legacy/page', (_req, res) => {
      res.json({ ok: true });
    });
    app.use(notFound(), errorHandler({ log: false }));
    return app;
  };

  it('sends CSP and COEP as their -Report-Only variants, every other header as enforced', async () => {
    const res = await request(headersApp({ reportOnly: true })).get('/v1/things');
    expect(res.status).toBe(200);
    expectHeaders(res, {
      ...SPEC_SECURITY_HEADERS,
      'Content-Security-Policy': null,
      'Content-Security-Policy-Report-Only': SPEC_SECURITY_HEADERS['Content-Security-Policy'],
      'Cross-Origin-Embedder-Policy': null,
      'Cross-Origin-Embedder-Policy-Report-Only': SPEC_SECURITY_HEADERS['Cross-Origin-Embedder-Policy'],
    });
  });

  it('keeps a CSP of the app in report-only form', async () => {
    const res = await request(
      headersApp({
        reportOnly: true,
        securityHeaders: {
          contentSecurityPolicy: {
            useDefaults: false,
            directives: { defaultSrc: ["'self'"], scriptSrc: ["'self'", 'cdn.example'] },
          },
        },
      }),
    ).get('/v1/things');
    expectHeaders(res, {
      'Content-Security-Policy': null,
      'Content-Security-Policy-Report-Only': "default-src 'self';script-src 'self' cdn.example",
    });
  });

  it('softens only the requests `when` selects', async () => {
    const app = headersApp({ reportOnly: { when: (req) => req.path.startsWith('/legacy/'), log: false } });
    const legacy = await request(app).get('/legacy/page');
    const api = await request(app).get('/v1/things');
    expectHeaders(legacy, {
      'Content-Security-Policy': null,
      'Content-Security-Policy-Report-Only': "script-src 'self'",
      'Cross-Origin-Embedder-Policy': null,
    });
    expectHeaders(api, {
      'Content-Security-Policy': "script-src 'self'",
      'Content-Security-Policy-Report-Only': null,
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cross-Origin-Embedder-Policy-Report-Only': null,
    });
  });

  it('reportOnlySecurityHeaders() alone: the same headers, CSP and COEP as -Report-Only, a route value kept', async () => {
    const app = express();
    app.use(reportOnlySecurityHeaders());
    app.get('/v1/things', (_req, res) => {
      res.json({ ok: true });
    });
    app.get('/v1/embeddable', (_req, res) => {
      res.setHeader('Cross-Origin-Embedder-Policy-Report-Only', 'credentialless');
      res.json({ ok: true });
    });
    const res = await request(app).get('/v1/things');
    expectHeaders(res, {
      'Content-Security-Policy': null,
      'Content-Security-Policy-Report-Only': "script-src 'self'",
      'Cross-Origin-Embedder-Policy': null,
      'Cross-Origin-Embedder-Policy-Report-Only': 'require-corp',
      'X-Frame-Options': 'deny',
      'Referrer-Policy': 'no-referrer',
    });
    const own = await request(app).get('/v1/embeddable');
    expectHeaders(own, { 'Cross-Origin-Embedder-Policy-Report-Only': 'credentialless' });
  });

  it('reportOnlySecurityHeaders() checks its options as securityHeaders() does, at start-up', () => {
    expect(() => reportOnlySecurityHeaders({ crossOriginEmbedderPolicy: 'bogus' as never })).toThrow(ConfigurationError);
    expect(() => reportOnlySecurityHeaders({ crossOriginEmbedderPolicy: { policy: 'nope' as never } })).toThrow(
      ConfigurationError,
    );
    expect(() => reportOnlySecurityHeaders({ frameguard: false } as never)).toThrow(ConfigurationError);
  });

  it('refuses a reportOnly that is not true, false or an object, at start-up', () => {
    expect(() => conventions({ reportOnly: 'yes' as never })).toThrow(
      'conventions(options): `reportOnly` must be true, false, or an object { log, when }; received "yes".',
    );
    expect(() => conventions({ reportOnly: { when: 'legacy' as never } })).toThrow(ConfigurationError);
  });
});

describe('refusals in report-only mode', () => {
  const secret = 'a-csrf-secret-of-at-least-32-bytes-long!';

  it('lets a cookie-session POST without a CSRF token through, reporting rule 10.1', async () => {
    const { reports, log } = collector();
    const app = express();
    app.use(
      conventions({
        rateLimit: false,
        reportOnly: { log },
        csrfProtection: { tokens: csrfTokens({ secret }), sessionOf: (req) => cookieValue(req, 'sid') },
      }),
    );
    app.post('/v1/notes', (_req, res) => {
      res.status(201).json({ saved: true });
    });
    app.use(errorHandler({ log: false }));
    const res = await request(app).post('/v1/notes').set('Cookie', 'sid=s1').send({ text: 'x' });
    expect(res.status).toBe(201);
    expect(reports).toEqual([
      {
        rule: '10.1',
        middleware: 'csrfProtection',
        enforced: 'answered 403 (code 40302)',
        message: 'The CSRF token is missing or not valid.',
        status: 403,
        code: 40302,
        fix: "Send the token csrfTokens() issued for this session: in the request header (`header`, default 'CSRF-Token') or the form field (`field`, default '_csrf').",
        method: 'POST',
        path: '/v1/notes',
      },
    ]);
  });

  it('enforces CSRF without report-only (the control)', async () => {
    const app = express();
    app.use(
      conventions({
        rateLimit: false,
        csrfProtection: { tokens: csrfTokens({ secret }), sessionOf: (req) => cookieValue(req, 'sid') },
      }),
    );
    app.post('/v1/notes', (_req, res) => {
      res.status(201).json({ saved: true });
    });
    app.use(errorHandler({ log: false }));
    const res = await request(app).post('/v1/notes').set('Cookie', 'sid=s1').send({ text: 'x' });
    expect(res.status).toBe(403);
    expect(res.body.errors[0].code).toBe(40302);
  });

  it('lets a request without X-Requested-With reach a requireXhr() route, reporting rule 8.4', async () => {
    const { reports, log } = collector();
    const app = express();
    app.use(conventions({ rateLimit: false }));
    app.get('/v1/sessions/current', reportOnly({ log }), requireXhr(), (_req, res) => {
      res.json({ user: 'alice' });
    });
    app.use(errorHandler({ log: false }));
    const res = await request(app).get('/v1/sessions/current');
    expect(res.status).toBe(200);
    expect(reports.map(({ rule, middleware, enforced }) => ({ rule, middleware, enforced }))).toEqual([
      { rule: '8.4', middleware: 'requireXhr', enforced: 'answered 403 (code 40301)' },
    ]);
  });

  it('answers a refused method override as the request it is, reporting rule 4.7', async () => {
    const { reports, log } = collector();
    const app = express();
    app.use(conventions({ rateLimit: false, reportOnly: { log } }));
    app.get('/v1/notes', (req, res) => {
      res.json({ method: req.method });
    });
    app.use(errorHandler({ log: false }));
    const res = await request(app).get('/v1/notes').set('X-HTTP-Method-Override', 'DELETE');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ method: 'GET' });
    expect(reports.map((r) => [r.rule, r.middleware, r.enforced])).toEqual([
      ['4.7', 'methodOverride', 'answered 400 (code 40002)'],
    ]);
  });

  it('names the fix when it enforces a method override refusal', async () => {
    const app = express();
    app.use(conventions({ rateLimit: false }));
    app.get('/v1/notes', (_req, res) => {
      res.json({});
    });
    app.use(errorHandler({ log: false }));
    const res = await request(app).get('/v1/notes').set('X-HTTP-Method-Override', 'DELETE');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toBe(
      'The method override is not allowed: only a POST can be overridden, this request is a GET. ' +
        'Send the method itself, or POST with X-HTTP-Method-Override (methodOverride({ methods }) lists the ones allowed).',
    );
  });

  it('does not refuse a strict lint finding, and reports it', async () => {
    const { reports, log } = collector();
    const app = express();
    app.use(conventions({ rateLimit: false, reportOnly: { log }, responseLinter: { strict: true, log: false } }));
    app.get('/v1/users/:id', (_req, res) => {
      res.json({ user_name: 'a' });
    });
    app.use(errorHandler({ log: false }));
    const res = await request(app).get('/v1/users/1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ user_name: 'a' });
    expect(reports.map((r) => [r.rule, r.middleware, r.enforced])).toEqual([
      ['2', 'responseLinter', 'answered 500 (code 50002)'],
    ]);
  });
});

describe('an error middleware mounted after errorHandler()', () => {
  /** Runs `scenario` and returns the EAC_ERROR_HANDLER_NOT_LAST warnings it raised. */
  async function notLastWarnings(scenario: () => Promise<void>): Promise<string[]> {
    const spy = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      await scenario();
      return spy.mock.calls
        .filter(([, options]) => (options as { code?: string } | undefined)?.code === 'EAC_ERROR_HANDLER_NOT_LAST')
        .map(([message]) => String(message));
    } finally {
      spy.mockRestore();
    }
  }

  /** An app whose `/v1/boom` throws `boom`. */
  const boomApp = (makeApp: () => express.Express): express.Express => {
    const app = makeApp();
    app.get('/v1/boom', () => {
      throw new Error('boom');
    });
    return app;
  };

  describe.each([
    ['Express 5', express],
    ['Express 4', express4 as unknown as typeof express],
  ])('on %s', (_name, makeApp) => {
    it('never runs, and the first error rendered warns once, naming it', async () => {
      const seen: unknown[] = [];
      const warnings = await notLastWarnings(async () => {
        const app = boomApp(makeApp);
        app.use(errorHandler({ production: false, log: false }));
        app.use(function reportToSentry(error: unknown, _req: Request, _res: Response, next: NextFunction) {
          seen.push(error);
          next(error);
        });
        const first = await request(app).get('/v1/boom');
        await request(app).get('/v1/boom');
        expect(first.status).toBe(500);
      });
      expect(seen).toEqual([]);
      expect(warnings).toEqual([
        'errorHandler() answers every error, so the error middleware mounted after it never runs: reportToSentry. ' +
          'Mount your own error middleware before errorHandler() and end it with next(error), so errors keep one JSON ' +
          'shape (docs/errors.md#your-own-error-middleware).',
      ]);
    });

    it('runs when mounted before errorHandler() and passing the error on: the shape is kept, no warning', async () => {
      const seen: string[] = [];
      const warnings = await notLastWarnings(async () => {
        const app = boomApp(makeApp);
        app.use((error: Error, _req: Request, _res: Response, next: NextFunction) => {
          seen.push(error.message);
          next(error);
        });
        app.use(errorHandler({ production: true, log: false }));
        const res = await request(app).get('/v1/boom');
        expect(res.status).toBe(500);
        expect(res.body).toEqual({ errors: [{ message: 'An internal error occurred.', code: 50000 }] });
      });
      expect(seen).toEqual(['boom']);
      expect(warnings).toEqual([]);
    });
  });

  it('says nothing of a page handler after an errorHandler() scoped to /api: it still runs for the pages', async () => {
    const warnings = await notLastWarnings(async () => {
      const app = express();
      app.get('/api/v1/boom', () => {
        throw new Error('boom');
      });
      app.get('/page', () => {
        throw new Error('page');
      });
      app.use('/api', errorHandler({ production: false, log: false }));
      app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
        res.status(500).type('html').send('<h1>Sorry</h1>');
      });
      const api = await request(app).get('/api/v1/boom');
      const page = await request(app).get('/page');
      expect(api.body.errors[0].code).toBe(50000);
      expect(page.text).toBe('<h1>Sorry</h1>');
    });
    expect(warnings).toEqual([]);
  });

  it('says nothing in production', async () => {
    const warnings = await notLastWarnings(async () => {
      const app = boomApp(() => express());
      app.use(errorHandler({ production: true, log: false }));
      app.use((error: unknown, _req: Request, _res: Response, next: NextFunction) => next(error));
      await request(app).get('/v1/boom');
    });
    expect(warnings).toEqual([]);
  });
});
