import express from 'express';
import { parseList } from 'structured-headers';
import request from 'supertest';
import { errorHandler } from '../src/errors/index.js';
import { conventions } from '../src/index.js';
import { fixedSecurityHeaders, SECURITY_HEADER_TABLE } from '../src/security/defaults.js';
import { clearSiteData, secureCookies, securityHeaders } from '../src/security/index.js';
import { appWith, expectHeaders } from './helpers.js';
import { SPEC_SECURITY_HEADERS } from './support/spec-headers.js';

const SPEC_HEADERS = SPEC_SECURITY_HEADERS;

const NEVER = {
  'X-XSS-Protection': null,
  'Public-Key-Pins': null,
  'Expect-CT': null,
  'Feature-Policy': null,
  Pragma: null,
  'X-Powered-By': null,
  'X-Download-Options': null,
  'Origin-Agent-Cluster': null,
  'Permissions-Policy': null,
};

describe('securityHeaders() (section 11)', () => {
  const app = appWith(
    [
      (_req, res, next) => {
        // A header rule 11.13 says is not sent, set by something mounted earlier.
        res.setHeader('Expect-CT', 'max-age=0');
        res.setHeader('X-XSS-Protection', '1; mode=block');
        next();
      },
      securityHeaders(),
    ],
    (a) => {
      a.get('/v1/users', (_req, res) => res.json({ users: [] }));
      a.get('/v1/fails', () => {
        throw new Error('boom');
      });
      a.use(errorHandler({ log: false }));
    },
  );

  it('sends exactly the table, value by value', async () => {
    const res = await request(app).get('/v1/users');
    expectHeaders(res, SPEC_HEADERS);
  });

  it('sends none of the headers rule 11.13 says are not sent', async () => {
    const res = await request(app).get('/v1/users');
    expectHeaders(res, NEVER);
  });

  it('puts them on error answers too', async () => {
    const res = await request(app).get('/v1/fails');
    expect(res.status).toBe(500);
    expectHeaders(res, { ...SPEC_HEADERS, Pragma: null });
  });

  it('exports the table as constants', () => {
    const table = Object.fromEntries(fixedSecurityHeaders(SECURITY_HEADER_TABLE).map((row) => [row.header, row.value]));
    expect(table).toEqual(SPEC_HEADERS);
  });

  describe('options', () => {
    it('take a CSP directive computed per request (a nonce) and write it fresh on each response', async () => {
      let count = 0;
      const perRequest = appWith(
        securityHeaders({
          contentSecurityPolicy: {
            useDefaults: false,
            directives: { defaultSrc: ["'self'"], scriptSrc: ["'self'", () => `'nonce-n${++count}'`] },
          },
        }),
        (a) => a.get('/v1/x', (_req, res) => res.json({})),
      );
      const first = await request(perRequest).get('/v1/x');
      const second = await request(perRequest).get('/v1/x');
      expectHeaders(first, {
        'Content-Security-Policy': "default-src 'self';script-src 'self' 'nonce-n1'",
        'X-Frame-Options': 'deny',
      });
      expectHeaders(second, {
        'Content-Security-Policy': "default-src 'self';script-src 'self' 'nonce-n2'",
        'X-Frame-Options': 'deny',
      });
    });

    it('change any value, leave a header out, and set Permissions-Policy', async () => {
      const custom = appWith(
        securityHeaders({
          contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], scriptSrc: ["'self'"] } },
          strictTransportSecurity: { maxAge: 300 },
          xFrameOptions: 'sameorigin',
          crossOriginEmbedderPolicy: false,
          referrerPolicy: { policy: 'same-origin' },
          permissionsPolicy: 'camera=(), geolocation=()',
          originAgentCluster: true,
        }),
        (a) => a.get('/v1/x', (_req, res) => res.json({})),
      );
      const res = await request(custom).get('/v1/x');
      expectHeaders(res, {
        'Content-Security-Policy': "default-src 'none';script-src 'self'",
        'Strict-Transport-Security': 'max-age=300; includeSubDomains',
        'X-Frame-Options': 'sameorigin',
        'Cross-Origin-Embedder-Policy': null,
        'Referrer-Policy': 'same-origin',
        'Permissions-Policy': 'camera=(), geolocation=()',
        'Origin-Agent-Cluster': '?1',
        'Cross-Origin-Opener-Policy': 'same-origin',
      });
    });

    it('are checked at start-up, helmet’s own findings included', () => {
      expect(() => securityHeaders({ xFrameOptions: 'allow' as never })).toThrow(
        "securityHeaders(options): `xFrameOptions` must be 'deny', 'sameorigin' or false",
      );
      expect(() => securityHeaders({ strictTransportSecurity: { maxAge: -1 } })).toThrow(
        'securityHeaders(options): Strict-Transport-Security: -1 is not a valid value for maxAge',
      );
      expect(() => securityHeaders({ referrerPolicy: 'no-referrer' as never })).toThrow('`referrerPolicy` must be');
      expect(() => securityHeaders({ permissionsPolicy: '' })).toThrow('`permissionsPolicy` must be');
      expect(() => securityHeaders({ hsts: {} } as never)).toThrow('received an unsupported option `hsts`');
    });

    it('catch app.use(securityHeaders) written for app.use(securityHeaders())', async () => {
      const wrong = express();
      wrong.use(securityHeaders as never);
      wrong.use(errorHandler({ log: false }));
      const res = await request(wrong).get('/');
      expect(res.status).toBe(500);
    });
  });
});

describe('conventions() security defaults', () => {
  const app = express();
  app.use(conventions());
  app.get('/v1/me', (_req, res) => res.json({ name: 'alice' }));

  it('every answer carries the security table and Cache-Control: no-store, max-age=0', async () => {
    const res = await request(app).get('/v1/me');
    expectHeaders(res, { ...SPEC_HEADERS, ...NEVER, 'Cache-Control': 'no-store, max-age=0' });
  });
});

describe('clearSiteData()', () => {
  it('sends Clear-Site-Data: "cache", "cookies", "storage" on a sign-out', async () => {
    const app = express();
    app.delete('/v1/sessions/current', clearSiteData(), (_req, res) => res.status(204).end());
    const res = await request(app).delete('/v1/sessions/current');
    expect(res.status).toBe(204);
    expectHeaders(res, { 'Clear-Site-Data': '"cache", "cookies", "storage"' });
    // "each a quoted string": a structured-field list of three strings.
    expect(parseList(res.headers['clear-site-data'] as string)).toEqual([
      ['cache', new Map()],
      ['cookies', new Map()],
      ['storage', new Map()],
    ]);
  });

  it('takes other types, checked at start-up', async () => {
    const app = appWith(clearSiteData({ types: ['cookies'] }), (a) => a.get('/x', (_req, res) => res.end()));
    expectHeaders(await request(app).get('/x'), { 'Clear-Site-Data': '"cookies"' });
    expect(() => clearSiteData({ types: ['everything'] })).toThrow('clearSiteData(options): `types` must be a non-empty array');
    expect(() => clearSiteData({ types: [] })).toThrow('`types` must be');
  });
});

describe('secureCookies() (rule 11.14: cookies are Secure and HttpOnly)', () => {
  const app = appWith(secureCookies(), (a) => {
    a.post('/v1/sessions', (_req, res) => {
      res.cookie('sid', 'abc', { maxAge: 60_000 });
      res.status(201).json({});
    });
    a.post('/v1/theme', (_req, res) => {
      res.cookie('theme', 'dark', { httpOnly: false, optOutReason: 'read by the page script to pick colours' });
      res.status(204).end();
    });
    a.post('/v1/theme-and-more', (_req, res) => {
      res.cookie('theme', 'dark', { httpOnly: false, optOutReason: 'read by the page script to pick colours' });
      res.append('Set-Cookie', 'other=1; Path=/');
      res.status(204).end();
    });
    a.post('/v1/careless', (_req, res) => {
      res.cookie('theme', 'dark', { httpOnly: false });
      res.status(204).end();
    });
    a.post('/v1/strict', (_req, res) => {
      res.cookie('sid', 'abc', { sameSite: 'strict' });
      res.status(204).end();
    });
    a.delete('/v1/sessions/current', (_req, res) => {
      res.clearCookie('sid');
      res.status(204).end();
    });
    a.use(errorHandler({ log: false }));
  });

  it('every cookie carries Secure, HttpOnly and SameSite=Lax', async () => {
    const res = await request(app).post('/v1/sessions');
    const [cookie] = res.headers['set-cookie'] as unknown as string[];
    expect(cookie).toMatch(/^sid=abc; Max-Age=60; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$/);
  });

  it('a cleared cookie carries them too', async () => {
    const res = await request(app).delete('/v1/sessions/current');
    const [cookie] = res.headers['set-cookie'] as unknown as string[];
    expect(cookie).toMatch(/^sid=; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Lax$/);
  });

  it('a route can tighten SameSite', async () => {
    const res = await request(app).post('/v1/strict');
    expect((res.headers['set-cookie'] as unknown as string[])[0]).toBe('sid=abc; Path=/; HttpOnly; Secure; SameSite=Strict');
  });

  it('keeps a stated opt-out when a later write of Set-Cookie resends the line, and secures the new one', async () => {
    const res = await request(app).post('/v1/theme-and-more');
    expect(res.headers['set-cookie']).toEqual(['theme=dark; Path=/; Secure; SameSite=Lax', 'other=1; Path=/; Secure; HttpOnly']);
  });

  it('a route may opt out only with a reason, which is never sent', async () => {
    const res = await request(app).post('/v1/theme');
    expect((res.headers['set-cookie'] as unknown as string[])[0]).toBe('theme=dark; Path=/; Secure; SameSite=Lax');
  });

  it('an opt-out without a reason is a programming error (500), and no cookie is sent', async () => {
    const res = await request(app).post('/v1/careless');
    expect(res.status).toBe(500);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('refuses SameSite=None as a default', () => {
    expect(() => secureCookies({ sameSite: 'none' as never })).toThrow(
      'secureCookies(options): `sameSite` must be one of "strict", "lax"',
    );
  });
});
