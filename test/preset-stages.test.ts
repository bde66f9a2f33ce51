import { readFileSync } from 'node:fs';
import express, { type RequestHandler } from 'express';
import { tokenRouter } from 'express-api-conventions-authorization-server';
import request from 'supertest';
import { errorHandler, notFound } from '../src/errors/index.js';
import { pendingDefault } from '../src/http/response-headers.js';
import { conventions, STAGE_NAMES } from '../src/index.js';
import { PRESET_STAGES } from '../src/preset.js';
import { expectHeaders } from './helpers.js';
import { ALICE, AUDIENCE, ISSUER, KEYS, postToken, seedStores, testHasher } from './support/oauth2.js';

/** The preset: one ordered table of stages, one on/off rule, named insertion points. */

const ORIGIN = 'http://localhost:5173';

describe('PRESET_STAGES', () => {
  it('lists the stages in the order they run', () => {
    expect(STAGE_NAMES).toEqual([
      'tokenEndpointErrors',
      'commonHeaders',
      'securityHeaders',
      'caching',
      'corsPolicy',
      'secureCookies',
      'jsonResponses',
      'maintenance',
      'bearerAuth',
      'rateLimit',
      'crossSiteProtection',
      'parseBodies',
      'methodOverride',
      'csrfProtection',
      'responseLinter',
      'tokenRouter',
    ]);
    expect(PRESET_STAGES.map((stage) => stage.name)).toEqual(STAGE_NAMES);
  });

  it('runs every stage after the stages it needs', () => {
    for (const [index, stage] of PRESET_STAGES.entries()) {
      for (const earlier of stage.runsAfter) {
        expect([stage.name, STAGE_NAMES.indexOf(earlier as never)]).toEqual([stage.name, expect.any(Number)]);
        expect(STAGE_NAMES.indexOf(earlier as never)).toBeGreaterThanOrEqual(0);
        expect(STAGE_NAMES.indexOf(earlier as never)).toBeLessThan(index);
      }
    }
    expect(PRESET_STAGES.find((stage) => stage.name === 'rateLimit')?.runsAfter).toEqual(['bearerAuth']);
  });

  it('says which stages need configuration', () => {
    expect(PRESET_STAGES.filter((stage) => stage.default === 'off').map((stage) => stage.name)).toEqual([
      'tokenEndpointErrors',
      'corsPolicy',
      'maintenance',
      'bearerAuth',
      'csrfProtection',
      'tokenRouter',
    ]);
    expect(PRESET_STAGES.filter((stage) => stage.default === 'outside production').map((stage) => stage.name)).toEqual([
      'responseLinter',
    ]);
  });

  it('holds what the preset knows of a stage in its row: counting, report-only, options derived from another stage', () => {
    const named = (has: (stage: (typeof PRESET_STAGES)[number]) => unknown) =>
      PRESET_STAGES.filter(has).map((stage) => stage.name);
    expect(named((stage) => stage.refusalsCountedFirst)).toEqual(['corsPolicy', 'bearerAuth']);
    expect(named((stage) => stage.counts)).toEqual(['rateLimit']);
    expect(named((stage) => stage.reportOnly)).toEqual(['securityHeaders']);
    expect(named((stage) => stage.derive)).toEqual(['tokenEndpointErrors', 'crossSiteProtection']);
  });
});

describe('docs/preset.md', () => {
  it('shows the table: every stage, in order, with its default and what runs before it', () => {
    const rows = readFileSync('docs/preset.md', 'utf8')
      .split('\n')
      .filter((line) => /^\|\s*\d+\s*\|/.test(line))
      .map((line) =>
        line
          .split('|')
          .slice(2, 5)
          .map((cell) => cell.trim()),
      );
    expect(rows).toEqual(
      PRESET_STAGES.map((stage) => [
        `\`${stage.name}\``,
        stage.default,
        stage.runsAfter.map((name) => `\`${name}\``).join(', ') || '–',
      ]),
    );
  });
});

describe('conventions() runs the table in order', () => {
  it('names the stages that are on, in the table’s order', () => {
    const [preset] = conventions({ corsPolicy: { origins: [ORIGIN] }, methodOverride: false });
    expect(preset?.stages).toEqual(
      STAGE_NAMES.filter(
        (name) =>
          !['tokenEndpointErrors', 'maintenance', 'bearerAuth', 'methodOverride', 'csrfProtection', 'tokenRouter'].includes(name),
      ),
    );
  });

  it('runs caching before CORS: the preflight that CORS answers carries no-store', async () => {
    const app = express();
    app.use(conventions({ corsPolicy: { origins: [ORIGIN] } }));
    app.get('/v1/things', (_req, res) => res.json({}));
    const res = await request(app).options('/v1/things').set('Origin', ORIGIN).set('Access-Control-Request-Method', 'GET');
    expect(res.status).toBe(200);
    expectHeaders(res, { 'Access-Control-Allow-Origin': ORIGIN, 'Cache-Control': 'no-store, max-age=0' });
  });

  it('runs the stages and the insertion points around them in the table’s order', async () => {
    const seen: string[] = [];
    // What a probe sees tells which stages ran before it (the fixed defaults
    // are set by their stage; Cache-Control's is registered for the head).
    const probe =
      (point: string): RequestHandler =>
      (req, res, next) => {
        const facts = [
          res.getHeader('x-content-type-options') === undefined ? '' : 'nosniff',
          res.getHeader('x-frame-options') === undefined ? '' : 'helmet',
          pendingDefault(res, 'cache-control') === undefined ? '' : 'cached',
          res.getHeader('access-control-allow-origin') === undefined ? '' : 'cors',
          res.getHeader('ratelimit') === undefined ? '' : 'counted',
          req.body === undefined ? '' : 'parsed',
          req.method === 'POST' ? '' : 'overridden',
        ].filter(Boolean);
        seen.push(`${point} [${facts.join(' ')}]`);
        next();
      };
    const everywhere = (point: string) => Object.fromEntries(STAGE_NAMES.map((name) => [name, [probe(`${point} ${name}`)]]));
    const app = express();
    app.use(
      conventions({
        corsPolicy: { origins: [ORIGIN] },
        responseLinter: {},
        before: everywhere('before'),
        after: everywhere('after'),
      }),
    );
    app.put('/v1/things', (_req, res) => res.json({}));
    app.use(notFound(), errorHandler({ log: false }));
    const res = await request(app)
      .post('/v1/things')
      .set('Origin', ORIGIN)
      .set('X-HTTP-Method-Override', 'PUT')
      .send({ name: 'Ada' });
    expect(res.status).toBe(200);
    expect(seen).toEqual([
      'before tokenEndpointErrors []',
      'after tokenEndpointErrors []',
      'before commonHeaders []',
      'after commonHeaders [nosniff]',
      'before securityHeaders [nosniff]',
      'after securityHeaders [nosniff helmet]',
      'before caching [nosniff helmet]',
      'after caching [nosniff helmet cached]',
      'before corsPolicy [nosniff helmet cached]',
      'after corsPolicy [nosniff helmet cached cors]',
      'before secureCookies [nosniff helmet cached cors]',
      'after secureCookies [nosniff helmet cached cors]',
      'before jsonResponses [nosniff helmet cached cors]',
      'after jsonResponses [nosniff helmet cached cors]',
      'before maintenance [nosniff helmet cached cors]',
      'after maintenance [nosniff helmet cached cors]',
      'before bearerAuth [nosniff helmet cached cors]',
      'after bearerAuth [nosniff helmet cached cors]',
      'before rateLimit [nosniff helmet cached cors]',
      'after rateLimit [nosniff helmet cached cors counted]',
      'before crossSiteProtection [nosniff helmet cached cors counted]',
      'after crossSiteProtection [nosniff helmet cached cors counted]',
      'before parseBodies [nosniff helmet cached cors counted]',
      'after parseBodies [nosniff helmet cached cors counted parsed]',
      'before methodOverride [nosniff helmet cached cors counted parsed]',
      'after methodOverride [nosniff helmet cached cors counted parsed overridden]',
      'before csrfProtection [nosniff helmet cached cors counted parsed overridden]',
      'after csrfProtection [nosniff helmet cached cors counted parsed overridden]',
      'before responseLinter [nosniff helmet cached cors counted parsed overridden]',
      'after responseLinter [nosniff helmet cached cors counted parsed overridden]',
      'before tokenRouter [nosniff helmet cached cors counted parsed overridden]',
      'after tokenRouter [nosniff helmet cached cors counted parsed overridden]',
    ]);
  });
});

describe('conventions() options', () => {
  it('switches a stage off with false and on with an object, and refuses anything else', () => {
    expect(conventions({ rateLimit: false })[0]?.stages).not.toContain('rateLimit');
    expect(conventions({ maintenance: {} })[0]?.stages).toContain('maintenance');
    expect(() => conventions({ maintenance: true } as never)).toThrow(
      'conventions(options): `maintenance` must be an object of its options, or false; received true.',
    );
  });

  it('puts a session lookup before the rate limiter, which then counts its user', async () => {
    const sessionLookup: RequestHandler = (req, _res, next) => {
      if (req.get('cookie') === 'sid=ann') req.auth = { subject: 'ann', scopes: [] };
      next();
    };
    const app = express();
    app.use(conventions({ before: { rateLimit: sessionLookup }, rateLimit: { limit: 5, partitionSecret: 's' } }));
    app.get('/v1/things', (_req, res) => res.json({}));
    const anonymous = await request(app).get('/v1/things');
    const ann = await request(app).get('/v1/things').set('Cookie', 'sid=ann');
    const user = (res: request.Response) => String(res.headers.ratelimit).split(', ')[0];
    expect(user(anonymous)).toMatch(/^"user";r=4;t=60;pk=/);
    expect(user(ann)).toMatch(/^"user";r=4;t=60;pk=/);
    expect(user(ann)).not.toBe(user(anonymous));
  });

  it('keeps an insertion point when its stage is off', async () => {
    const app = express();
    const marker: RequestHandler = (_req, res, next) => {
      res.set('X-Marker', 'ran');
      next();
    };
    app.use(conventions({ rateLimit: false, after: { rateLimit: [marker] } }));
    app.get('/v1/things', (_req, res) => res.json({}));
    expectHeaders(await request(app).get('/v1/things'), { 'X-Marker': 'ran', RateLimit: null });
  });

  it('refuses an unknown stage name at start-up, with the closest one', () => {
    expect(() => conventions({ before: { ratelimit: [] } } as never)).toThrow(
      'conventions(options): `before` names no stage `ratelimit`. Did you mean `rateLimit`?',
    );
    expect(() => conventions({ after: { sessions: [] } } as never)).toThrow(
      'conventions(options): `after` names no stage `sessions`. Stages: tokenEndpointErrors, commonHeaders, securityHeaders,',
    );
    expect(() => conventions({ before: { rateLimit: ['x'] } } as never)).toThrow(
      'conventions(options): `before.rateLimit[0]` must be a middleware function; received "x".',
    );
  });

  it('refuses a stage under a name other than its factory, naming the key to use', () => {
    expect(() => conventions({ bodies: { limit: '10b' } } as never)).toThrow(
      'conventions(options): received an unsupported option `bodies`. It is `parseBodies`, after the factory it configures.',
    );
    expect(() => conventions({ cors: { origins: ['https://app.example'] } } as never)).toThrow(
      'conventions(options): received an unsupported option `cors`. It is `corsPolicy`, after the factory it configures.',
    );
  });
});

describe('the token path in the preset', () => {
  const tokenPreset = async (rateLimit: { limit: number }) => {
    const stores = await seedStores();
    const app = express();
    app.use(
      conventions({
        rateLimit,
        parseBodies: { limit: '1kb' },
        tokenRouter: tokenRouter({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, passwordHasher: testHasher, ...stores }),
      }),
    );
    app.get('/v1/things', (_req, res) => res.json({}));
    app.use(notFound(), errorHandler({ production: true, log: false }));
    return app;
  };

  it('keeps RFC 6749’s shape for a 413 of the body parsers on the token path, and the conventions’ elsewhere', async () => {
    const app = await tokenPreset({ limit: 100 });
    const big = { ...ALICE, padding: 'x'.repeat(2048) };
    const res = await postToken(app, big);
    expect(res.status).toBe(413);
    expectHeaders(res, { 'Cache-Control': 'no-store, max-age=0', Pragma: 'no-cache' });
    expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    const elsewhere = await request(app).post('/v1/things').type('form').send(big);
    expect(elsewhere.status).toBe(413);
    expect(elsewhere.body).toEqual({ errors: [{ message: expect.any(String), code: expect.any(Number) }] });
  });

  it('keeps RFC 6749’s shape for a 429 of the rate limiter on the token path, with Retry-After', async () => {
    const app = await tokenPreset({ limit: 1 });
    expect((await postToken(app, { grant_type: 'password' })).status).toBe(400);
    const res = await postToken(app, ALICE);
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expectHeaders(res, { Pragma: 'no-cache', 'Cache-Control': 'no-store, max-age=0' });
    expect(res.body).toEqual({ error: 'too_many_requests', error_description: expect.any(String) });
  });
});
