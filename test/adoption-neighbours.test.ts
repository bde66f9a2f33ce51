import cors from 'cors';
import express, { type Express } from 'express';
import express4 from 'express4';
import helmet from 'helmet';
import request from 'supertest';
import { corsPolicy } from '../src/cors/index.js';
import { type ConventionReport, errorHandler, notFound } from '../src/errors/index.js';
import { conventions } from '../src/preset.js';
import { crossSiteProtection } from '../src/security/index.js';

/**
 * The preset beside the neighbours an app already runs (helmet,
 * the `cors` package), in report-only mode and enforcing: report-only
 * refuses and limits nothing; an origin the CORS middleware in front
 * allowed is not refused as cross-site; what a developer must know is said
 * once, through the library's one warning channel.
 */

const APP_ORIGIN = 'https://app.example.com';
const EVIL = 'https://evil.example';

type Make = typeof express;

const collector = () => {
  const reports: ConventionReport[] = [];
  return { reports, log: (report: ConventionReport) => reports.push(report) };
};

/** The app: helmet and `cors` in front, then the preset on /api. */
function shop(make: Make, options: Parameters<typeof conventions>[0]): Express {
  const app = make();
  app.use(helmet());
  app.use(cors({ origin: [APP_ORIGIN], credentials: true }));
  app.use(make.json());
  app.use('/api', conventions({ responseLinter: false, ...options }));
  app.get('/api/v1/items', (_req, res) => {
    res.json({ items: [] });
  });
  app.all('/api/v1/items/1', (req, res) => {
    res.json({ method: req.method });
  });
  app.use('/api', notFound(), errorHandler({ production: false, log: false }));
  return app;
}

/** Captures the library's warnings (process.emitWarning) for one test. */
function warnings(): { codes: () => string[]; messages: () => string[]; restore: () => void } {
  const spy = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  const calls = () => spy.mock.calls as unknown as [string, { code: string }][];
  return {
    codes: () => calls().map(([, options]) => options.code),
    messages: () => calls().map(([message]) => message),
    restore: () => spy.mockRestore(),
  };
}

describe.each([
  ['Express 5', express],
  ['Express 4', express4 as unknown as Make],
])('%s: report-only changes nothing', (_name, make) => {
  it('lets a cross-site write through and reports what enforcing would answer, with the fix', async () => {
    const { reports, log } = collector();
    const app = shop(make, { reportOnly: { log } });
    const res = await request(app)
      .post('/api/v1/items/1')
      .set('Sec-Fetch-Site', 'cross-site')
      .set('Origin', EVIL)
      .send({ name: 'x' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ method: 'POST' });
    const report = reports.find((entry) => entry.middleware === 'crossSiteProtection');
    expect(report).toMatchObject({
      rule: '10.1',
      status: 403,
      code: 40305,
      enforced: 'answered 403 (code 40305)',
      method: 'POST',
      path: '/api/v1/items/1',
    });
    expect(report?.fix).toContain(`crossSiteProtection: { trustedOrigins: ['${EVIL}'] }`);
    expect(report?.fix).toContain("corsPolicy's origins");
  });

  it('lets a PUT that carries only Origin (an older browser) through, reported', async () => {
    const { reports, log } = collector();
    const res = await request(shop(make, { reportOnly: { log } }))
      .put('/api/v1/items/1')
      .set('Origin', EVIL)
      .send({ name: 'x' });
    expect(res.status).toBe(200);
    expect(reports.map((entry) => entry.code)).toEqual([40305]);
  });

  it('does not rate-limit: the 101st GET passes, and the report says 429 and how to fix it', async () => {
    const { reports, log } = collector();
    const app = shop(make, { reportOnly: { log }, rateLimit: { limit: 3 } });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await request(app).get('/api/v1/items')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(reports).toHaveLength(2);
    expect(reports[0]).toMatchObject({ rule: '12.1', middleware: 'rateLimit', status: 429, code: 42900 });
    expect(reports[0]?.fix).toContain("app.set('trust proxy', 1)");
  });

  it("a strict response linter's refusal is reported with its status, code and fix", async () => {
    const { reports, log } = collector();
    const app = make();
    app.use(conventions({ reportOnly: { log }, responseLinter: { strict: true, log: false } }));
    app.get('/v1/items/1', (_req, res) => {
      res.json({ item_name: 'x' });
    });
    const res = await request(app).get('/v1/items/1');
    expect(res.status).toBe(200);
    expect(reports).toEqual([
      expect.objectContaining({
        middleware: 'responseLinter',
        status: 500,
        code: 50002,
        fix: expect.stringContaining('responseLint'),
      }),
    ]);
  });

  it('enforcing, still limits: the request over the quota is a 429', async () => {
    const app = shop(make, { rateLimit: { limit: 1 } });
    expect((await request(app).get('/api/v1/items')).status).toBe(200);
    expect((await request(app).get('/api/v1/items')).status).toBe(429);
  });
});

describe.each([
  ['Express 5', express],
  ['Express 4', express4 as unknown as Make],
])('%s: an origin the CORS middleware in front allowed', (_name, make) => {
  it('passes enforcing crossSiteProtection: a credentialed POST with Sec-Fetch-Site, and a PUT with only Origin', async () => {
    const app = shop(make, {});
    const post = await request(app)
      .post('/api/v1/items/1')
      .set('Sec-Fetch-Site', 'cross-site')
      .set('Origin', APP_ORIGIN)
      .set('Cookie', 'connect.sid=s%3Aabc')
      .send({ name: 'x' });
    expect(post.status).toBe(200);
    expect(post.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    const put = await request(app).put('/api/v1/items/1').set('Origin', APP_ORIGIN).send({ name: 'x' });
    expect(put.status).toBe(200);
  });

  it('an origin nobody allowed is still refused, and the body names the fix', async () => {
    const res = await request(shop(make, {}))
      .put('/api/v1/items/1')
      .set('Sec-Fetch-Site', 'cross-site')
      .set('Origin', EVIL)
      .send({ name: 'x' });
    expect(res.status).toBe(403);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.body.errors[0]).toMatchObject({
      message: 'A state-changing request from another site is not allowed.',
      code: 40305,
      detail: { secFetchSite: 'cross-site', origin: EVIL },
    });
    expect(res.body.errors[0].detail.fix).toContain(`crossSiteProtection: { trustedOrigins: ['${EVIL}'] }`);
  });
});

describe('which CORS decisions count', () => {
  const guarded = (allowOrigin: string | undefined, options?: Parameters<typeof crossSiteProtection>[0]): Express => {
    const app = express();
    app.use((_req, res, next) => {
      if (allowOrigin !== undefined) res.setHeader('Access-Control-Allow-Origin', allowOrigin);
      next();
    });
    app.use(crossSiteProtection(options));
    app.post('/v1/items', (_req, res) => {
      res.status(201).json({ ok: true });
    });
    app.use(errorHandler({ production: true, log: false }));
    return app;
  };
  const post = (app: Express, origin: string) =>
    request(app).post('/v1/items').set('Sec-Fetch-Site', 'cross-site').set('Origin', origin);

  it("`Access-Control-Allow-Origin` naming the request's own origin, set by the app's own middleware, counts", async () => {
    expect((await post(guarded(APP_ORIGIN), APP_ORIGIN)).status).toBe(201);
  });

  it('`*` does not count: it names no one and carries no credentials', async () => {
    expect((await post(guarded('*'), EVIL)).status).toBe(403);
  });

  it('another origin, or none, does not count', async () => {
    expect((await post(guarded(APP_ORIGIN), EVIL)).status).toBe(403);
    expect((await post(guarded(undefined), APP_ORIGIN)).status).toBe(403);
  });

  it('`Origin: null` never counts, even reflected', async () => {
    expect((await post(guarded('null'), 'null')).status).toBe(403);
  });

  it('`followCors: false`: only trustedOrigins decide', async () => {
    expect((await post(guarded(APP_ORIGIN, { followCors: false }), APP_ORIGIN)).status).toBe(403);
    expect(() => crossSiteProtection({ followCors: 'yes' as never })).toThrow(/followCors/);
  });

  it('the production body carries no detail', async () => {
    const res = await post(guarded(undefined), EVIL);
    expect(res.body).toEqual({
      errors: [{ message: 'A state-changing request from another site is not allowed.', code: 40305 }],
    });
  });
});

describe('one-time development lines (process warnings)', () => {
  let captured: ReturnType<typeof warnings>;
  const environment = process.env.NODE_ENV;
  beforeEach(() => {
    captured = warnings();
  });
  afterEach(() => {
    captured.restore();
    process.env.NODE_ENV = environment;
  });

  it('the first cross-site refusal says that such writes are refused and which origins are trusted, once', async () => {
    process.env.NODE_ENV = 'development';
    // A fresh process, as far as the library's modules go: the line is said once per process.
    let fresh = crossSiteProtection;
    jest.isolateModules(() => {
      fresh = (require('../src/security/cross-site.js') as typeof import('../src/security/cross-site.js')).crossSiteProtection;
    });
    const app = express();
    app.use(fresh({ trustedOrigins: ['https://partner.example'] }));
    app.post('/v1/items', (_req, res) => {
      res.status(201).json({ ok: true });
    });
    for (let i = 0; i < 3; i++) await request(app).post('/v1/items').set('Sec-Fetch-Site', 'cross-site').set('Origin', EVIL);
    expect(captured.codes()).toEqual(['EAC_CROSS_SITE_REFUSED']);
    const [message] = captured.messages();
    expect(message).toContain('Trusted origins: https://partner.example');
    expect(message).toContain(`trustedOrigins: ['${EVIL}']`);
  });

  it('says nothing in production', async () => {
    process.env.NODE_ENV = 'production';
    const app = express();
    app.use(crossSiteProtection());
    app.post('/v1/items', (_req, res) => {
      res.status(201).json({ ok: true });
    });
    await request(app).post('/v1/items').set('Sec-Fetch-Site', 'cross-site');
    expect(captured.codes()).toEqual([]);
  });

  it("X-Forwarded-For without Express's trust proxy: two forwarded clients share one counter, and it is said once", async () => {
    process.env.NODE_ENV = 'production';
    const app = express();
    app.use(conventions({ rateLimit: { limit: 1 }, responseLinter: false }));
    app.get('/v1/items', (_req, res) => {
      res.json({ items: [] });
    });
    const first = await request(app).get('/v1/items').set('X-Forwarded-For', '203.0.113.1');
    const second = await request(app).get('/v1/items').set('X-Forwarded-For', '203.0.113.2');
    expect([first.status, second.status]).toEqual([200, 429]);
    expect(captured.codes()).toEqual(['EAC_UNTRUSTED_X_FORWARDED_FOR']);
    expect(captured.messages()[0]).toContain("app.set('trust proxy', 1)");
  });

  it('with trust proxy set, the forwarded clients are counted apart and nothing is said', async () => {
    const app = express();
    app.set('trust proxy', 1);
    app.use(conventions({ rateLimit: { limit: 1 }, responseLinter: false }));
    app.get('/v1/items', (_req, res) => {
      res.json({ items: [] });
    });
    const first = await request(app).get('/v1/items').set('X-Forwarded-For', '203.0.113.1');
    const second = await request(app).get('/v1/items').set('X-Forwarded-For', '203.0.113.2');
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(captured.codes()).toEqual([]);
  });

  it('corsPolicy: a preflight asking for an unlisted header is answered as before, and the header is named once', async () => {
    process.env.NODE_ENV = 'development';
    const app = express();
    app.use(corsPolicy({ origins: [APP_ORIGIN] }));
    const preflight = () =>
      request(app)
        .options('/v1/items/1')
        .set('Origin', APP_ORIGIN)
        .set('Access-Control-Request-Method', 'PUT')
        .set('Access-Control-Request-Headers', 'content-type, x-client-version');
    const res = await preflight();
    await preflight();
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-headers']).not.toMatch(/x-client-version/i);
    expect(captured.codes()).toEqual(['EAC_CORS_HEADER_NOT_ALLOWED']);
    expect(captured.messages()[0]).toContain('x-client-version');
    expect(captured.messages()[0]).toContain('allowedHeaders');
  });
});

describe('order means precedence: helmet in front', () => {
  /** A fresh copy of the library, so that its once-per-process warnings are not said yet. */
  const freshPreset = (): typeof conventions => {
    let fresh: typeof conventions | undefined;
    jest.isolateModules(() => {
      fresh = (require('../src/preset.js') as typeof import('../src/preset.js')).conventions;
    });
    return fresh as typeof conventions;
  };

  const enforcing = (make: Make, preset: typeof conventions): Express => {
    const app = make();
    app.use(helmet());
    app.use('/api', preset({ responseLinter: false }));
    app.get('/api/v1/items', (_req, res) => {
      res.json({ items: [] });
    });
    return app;
  };

  it.each([
    ['Express 5', express],
    ['Express 4', express4 as unknown as Make],
  ])(
    "%s: the conventions' values replace helmet's, and each replaced value is said once with how to keep it",
    async (_name, make) => {
      const captured = warnings();
      try {
        const app = enforcing(make, freshPreset());
        for (let i = 0; i < 2; i++) {
          const res = await request(app).get('/api/v1/items');
          expect(res.status).toBe(200);
          expect(res.headers['content-security-policy']).toBe("script-src 'self'");
          expect(res.headers['strict-transport-security']).toBe('max-age=63072000; includeSubDomains');
          expect(res.headers['x-frame-options']).toBe('deny');
          expect(res.headers['cross-origin-embedder-policy']).toBe('require-corp');
          expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
        }
        const replaced = captured.codes().filter((code) => code === 'EAC_HEADER_REPLACED');
        // helmet's defaults differ from the conventions' in CSP, HSTS, X-Frame-Options and X-XSS-Protection
        // (the last is removed, not replaced): three lines, once each over two requests.
        expect(replaced).toHaveLength(3);
        const csp = captured.messages().find((message) => message.includes('replaced Content-Security-Policy:'));
        expect(csp).toContain("default-src 'self'"); // helmet's default policy, named as it was
        expect(csp).toContain("with the conventions' script-src 'self'");
        expect(csp).toContain('`securityHeaders: { contentSecurityPolicy: … }`');
        expect(csp).toContain('`securityHeaders: false`');
        const frame = captured.messages().find((message) => message.includes('replaced X-Frame-Options:'));
        expect(frame).toContain('SAMEORIGIN');
      } finally {
        captured.restore();
      }
    },
  );

  it('says each replaced value also when the CSP is made per request (a nonce directive)', async () => {
    const captured = warnings();
    try {
      const preset = freshPreset();
      const app = express();
      app.use(helmet());
      const nonce = () => "'nonce-n0nce'";
      app.use(
        '/api',
        preset({
          responseLinter: false,
          securityHeaders: {
            contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], scriptSrc: ["'self'", nonce] } },
          },
        }),
      );
      app.get('/api/v1/items', (_req, res) => {
        res.json({ items: [] });
      });
      for (let i = 0; i < 2; i++) {
        const res = await request(app).get('/api/v1/items');
        expect(res.headers['content-security-policy']).toBe("default-src 'none';script-src 'self' 'nonce-n0nce'");
        expect(res.headers['x-frame-options']).toBe('deny');
      }
      const replaced = captured.messages().filter((_message, i) => captured.codes()[i] === 'EAC_HEADER_REPLACED');
      expect(replaced).toHaveLength(3);
      expect(replaced.find((message) => message.includes('replaced Content-Security-Policy:'))).toContain("default-src 'self'");
      expect(replaced.find((message) => message.includes('replaced X-Frame-Options:'))).toContain('SAMEORIGIN');
      expect(replaced.find((message) => message.includes('replaced Strict-Transport-Security:'))).toContain('31536000');
    } finally {
      captured.restore();
    }
  });

  it('says nothing in production, and still sends the conventions’ values', async () => {
    const was = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    const captured = warnings();
    try {
      const res = await request(enforcing(express, freshPreset())).get('/api/v1/items');
      expect(res.headers['content-security-policy']).toBe("script-src 'self'");
      expect(captured.codes()).not.toContain('EAC_HEADER_REPLACED');
    } finally {
      captured.restore();
      process.env.NODE_ENV = was;
    }
  });
});

describe('report-only beside helmet in front: the values set in front stay', () => {
  const freshPreset = (): typeof conventions => {
    let fresh: typeof conventions | undefined;
    jest.isolateModules(() => {
      fresh = (require('../src/preset.js') as typeof import('../src/preset.js')).conventions;
    });
    return fresh as typeof conventions;
  };

  it.each([
    ['Express 5', express],
    ['Express 4', express4 as unknown as Make],
  ])("%s: helmet's X-Frame-Options and HSTS go out as set, and what enforcing would send is said once", async (_name, make) => {
    const captured = warnings();
    try {
      const app = make();
      app.use(helmet());
      app.use('/api', freshPreset()({ responseLinter: false, reportOnly: { log: () => undefined } }));
      app.get('/api/v1/items', (_req, res) => {
        res.json({ items: [] });
      });
      for (let i = 0; i < 2; i++) {
        const res = await request(app).get('/api/v1/items');
        expect(res.status).toBe(200);
        expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
        expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
        // The conventions' own policies as reports only, beside what the app enforced before.
        expect(res.headers['content-security-policy-report-only']).toBe("script-src 'self'");
        expect(res.headers['cross-origin-embedder-policy-report-only']).toBe('require-corp');
      }
      expect(captured.codes()).not.toContain('EAC_HEADER_REPLACED');
      const kept = captured.messages().filter((message) => message.includes('report-only kept'));
      expect(kept).toHaveLength(2);
      expect(kept.find((message) => message.includes('X-Frame-Options: SAMEORIGIN'))).toContain('enforcing sends deny');
    } finally {
      captured.restore();
    }
  });
});
