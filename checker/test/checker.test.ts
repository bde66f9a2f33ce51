import express from 'express';
import { conventions, errorHandler, notFound } from 'express-api-conventions';
import {
  type CheckResult,
  CONFORMANCE_CHECK_IDS,
  CONFORMANCE_REQUEST_CAP,
  CONFORMANCE_SECTIONS,
  type ConformanceReport,
  checkConventions,
} from '../src/index.js';
import { ALLOWED_ORIGIN, compliantApp } from './fixtures/compliant-app.js';
import { conventionsApp } from './fixtures/conventions-app.js';
import { FIXTURE_OPTIONS } from './fixtures/options.js';
import { peerStackDefaultsApp } from './fixtures/peer-stack.js';
import { plainExpressApp } from './fixtures/plain-express.js';

const byId = (report: ConformanceReport, id: string): CheckResult => {
  const found = report.results.find((result) => result.id === id);
  if (!found) throw new Error(`no result for ${id}`);
  return found;
};

/** The status and evidence of a check, for whole-object assertions. */
const verdict = (report: ConformanceReport, id: string) => {
  const { status, evidence, reason } = byId(report, id);
  return { status, ...(evidence ? { evidence } : {}), ...(reason ? { reason } : {}) };
};

const fails = (expected: string, seen: string, request?: string) => ({
  status: 'fail',
  evidence: { ...(request ? { request } : {}), expected, seen },
});

describe('checkConventions()', () => {
  describe('on an app that follows the conventions in everything the checker probes', () => {
    let report: ConformanceReport;
    beforeAll(async () => {
      report = await checkConventions(compliantApp(), FIXTURE_OPTIONS);
    });

    it('reports no failure', () => {
      expect(report.failures).toEqual([]);
      expect(report.ok).toBe(true);
    });

    it('skips only the checks that need an answer the run cannot provoke safely', () => {
      expect(report.results.filter((result) => result.status === 'skip').map((result) => result.id)).toEqual([
        'common.location-on-3xx',
        // Without --openapi (checker/test/openapi-gaps.test.ts gives one).
        'common.openapi-statuses',
        'common.openapi-headers',
        'security.clear-site-data',
        'security.cookies',
        'limits.retry-after',
      ]);
    });

    it('counts its requests and reports every check once, grouped by section', () => {
      // 14 for the first checks; then a missing resource and HEAD, 5 for paging and fields,
      // 6 more for the token endpoint and 401/403, 6 writes.
      expect(report.requests).toBe(33);
      expect(report.results.map((result) => result.id)).toEqual(CONFORMANCE_CHECK_IDS);
      expect(report.summary).toEqual({
        pass: CONFORMANCE_CHECK_IDS.length - 6,
        fail: 0,
        skip: 6,
        accepted: 0,
        ignored: 0,
        must: 0,
        should: 0,
        advice: 0,
      });
      const sections = report.results.map((result) => result.section);
      expect([...new Set(sections)]).toEqual(CONFORMANCE_SECTIONS);
    });
  });

  describe('on a plain Express app', () => {
    let report: ConformanceReport;
    beforeAll(async () => {
      report = await checkConventions(plainExpressApp(), FIXTURE_OPTIONS);
    });

    it('fails on the HTML 404 of an unknown route', () => {
      const request = 'GET /v1/express-api-conventions-no-such-route -> 404';
      expect(verdict(report, 'errors.not-found.status')).toEqual({ status: 'pass' });
      expect(verdict(report, 'errors.not-found.json')).toEqual(
        fails('Content-Type "application/json; charset=utf-8"', 'Content-Type "text/html; charset=utf-8"', request),
      );
      expect(byId(report, 'errors.not-found.body').evidence?.seen).toMatch(/^a body that is not JSON: <!DOCTYPE html>/);
    });

    it('fails on a wrong method: 404 HTML instead of 405 with Allow', () => {
      const request = 'TRACE /v1/users/1 -> 404';
      expect(verdict(report, 'errors.method-not-allowed.status')).toEqual(fails('status 405', 'status 404', request));
      expect(verdict(report, 'errors.method-not-allowed.allow')).toEqual(
        fails('Allow: a comma list of the methods the path answers (not TRACE)', 'Allow (absent)', request),
      );
    });

    it('fails on X-Powered-By and on every missing security header', () => {
      expect(byId(report, 'common.no-x-powered-by').evidence?.seen).toBe('X-Powered-By "Express"');
      expect(byId(report, 'security.hsts').evidence).toMatchObject({
        expected: 'strict-transport-security: max-age=63072000; includeSubDomains',
        seen: 'strict-transport-security (absent)',
      });
      for (const id of [
        'security.frame-options',
        'security.referrer-policy',
        'security.coop',
        'security.corp',
        'security.coep',
      ]) {
        expect(byId(report, id).evidence?.seen).toMatch(/\(absent\)$/);
      }
      expect(byId(report, 'security.nosniff').evidence).toMatchObject({
        request: 'GET /v1/users/express-api-conventions-no-such-id -> 200 (and 21 more of 28 responses)',
      });
      expect(byId(report, 'security.cache-control').evidence?.seen).toBe('cache-control (absent)');
    });

    it("fails on Express's automatic OPTIONS answer instead of a CORS preflight", () => {
      const request = 'OPTIONS /v1/users/1 -> 200';
      expect(verdict(report, 'cors.preflight.content-length')).toEqual(
        fails('Content-Length: 0 and no body', 'Content-Length "9", 9 body bytes', request),
      );
      expect(verdict(report, 'cors.preflight.allow-origin')).toEqual(
        fails(
          `Access-Control-Allow-Origin "${ALLOWED_ORIGIN}" (or "*" without credentials)`,
          'Access-Control-Allow-Origin (absent)',
          request,
        ),
      );
      expect(byId(report, 'cors.preflight.max-age').status).toBe('fail');
    });

    it('passes conditional GET, which Express does itself', () => {
      for (const id of ['caching.etag', 'caching.last-modified', 'caching.if-none-match', 'caching.if-modified-since']) {
        expect(verdict(report, id)).toEqual({ status: 'pass' });
      }
    });

    it('fails on the unescaped < and > that res.json() writes back', () => {
      expect(verdict(report, 'json.escape-angle-brackets')).toEqual(
        fails(
          'the probe written as \\u003Ceac-probe\\u003E',
          '<eac-probe> unescaped',
          'GET /v1/users/search?q=%3Ceac-probe%3E -> 200 (probe "<eac-probe>")',
        ),
      );
    });

    it('fails on the token response and error shape, showing no secret', () => {
      expect(verdict(report, 'auth.token.response')).toEqual(
        fails(
          'status 200, JSON { access_token: string, token_type: "bearer", ... }',
          '{ access_token: string, token_type: "Bearer", expires_in: 3600, refresh_token: string }',
          'POST /v1/oauth2/token -> 200 (grant_type=password, client authenticated)',
        ),
      );
      expect(verdict(report, 'auth.token.error')).toEqual(
        fails(
          'status 400 (or 401), JSON { error: string, ... }',
          'Content-Type "text/html; charset=utf-8", a body without a string error',
          'POST /v1/oauth2/token -> 400',
        ),
      );
      // The grant works without client credentials: client authentication is optional, whatever the token's shape.
      expect(verdict(report, 'auth.token.client-optional')).toEqual({ status: 'pass' });
      const text = JSON.stringify(report);
      for (const secret of ['wonderland', 'web-app-secret', 'access-1', 'refresh-1']) expect(text).not.toContain(secret);
    });

    it('fails on an invalid_token answer without Cache-Control and Pragma', () => {
      expect(verdict(report, 'auth.invalid-token.status')).toEqual({ status: 'pass' });
      expect(verdict(report, 'auth.invalid-token.headers')).toEqual(
        fails(
          'Content-Type: application/json, Cache-Control: no-store, Pragma: no-cache',
          'Cache-Control (absent), Pragma (absent)',
          'GET /v1/users/me -> 401 (Authorization: Bearer <invalid>)',
        ),
      );
    });

    it('judges method override only against a PATCH that succeeds', () => {
      const reason = 'the PATCH of /v1/users/2 answered 404: give --change with fields it accepts';
      expect(verdict(report, 'methods.override-header')).toEqual({ status: 'skip', reason });
      expect(verdict(report, 'caching.changed')).toEqual({ status: 'skip', reason });
      // Its GET /v1/users/:id answers whatever the id: the missing resource is not told from a user.
      expect(verdict(report, 'errors.not-found.distinct')).toEqual(
        fails(
          'status 404 for a missing resource',
          'status 200',
          'GET /v1/users/express-api-conventions-no-such-id -> 200 and GET /v1/express-api-conventions-no-such-route -> 404',
        ),
      );
    });

    it('is not ok, and lists its failures', () => {
      expect(report.ok).toBe(false);
      expect(report.failures.every((result) => result.status === 'fail' && result.evidence !== undefined)).toBe(true);
      expect(report.summary.fail).toBe(report.failures.length);
    });
  });

  describe('on helmet + cors + express-rate-limit with their default options', () => {
    let report: ConformanceReport;
    beforeAll(async () => {
      report = await checkConventions(peerStackDefaultsApp(), { origin: ALLOWED_ORIGIN, resource: '/v1/users/1' });
    });

    it("fails on helmet's defaults where they differ from the conventions", () => {
      // Past its default limit of 5 a minute, the answers are 429s, with helmet's headers too.
      const request = 'GET /v1/express-api-conventions-no-such-route -> 404 (and 8 more of 9 responses)';
      expect(verdict(report, 'security.hsts')).toEqual(
        fails(
          'strict-transport-security: max-age=63072000; includeSubDomains',
          'strict-transport-security "max-age=31536000; includeSubDomains"',
          request,
        ),
      );
      // Express's final handler writes its own CSP on the HTML 404, over helmet's long default list.
      expect(verdict(report, 'security.csp')).toEqual(
        fails("content-security-policy: script-src 'self'", 'content-security-policy "default-src \'none\'"', request),
      );
      expect(verdict(report, 'security.frame-options')).toEqual(
        fails('x-frame-options: deny', 'x-frame-options "SAMEORIGIN"', request),
      );
      expect(verdict(report, 'security.coep')).toEqual(
        fails('cross-origin-embedder-policy: require-corp', 'cross-origin-embedder-policy (absent)', request),
      );
      expect(verdict(report, 'paths.no-x-prefix')).toEqual(
        fails(
          'no X- response header other than those the conventions name',
          'x-download-options',
          'GET /v1/express-api-conventions-no-such-route -> 404 (and 8 more of 9 responses)',
        ),
      );
    });

    it("passes helmet's defaults that are the conventions' values", () => {
      for (const id of [
        'security.nosniff',
        'security.referrer-policy',
        'security.cross-domain-policies',
        'security.dns-prefetch-control',
        'security.coop',
        'security.corp',
        'security.x-xss-protection',
      ]) {
        expect(verdict(report, id)).toEqual({ status: 'pass' });
      }
    });

    it("fails on cors's 204 preflight without Content-Type and Max-Age", () => {
      const request = 'OPTIONS /v1/users/1 -> 204';
      expect(verdict(report, 'cors.preflight.status')).toEqual(fails('status 200', 'status 204', request));
      expect(verdict(report, 'cors.preflight.content-type')).toEqual(
        fails('Content-Type: text/plain', 'Content-Type (absent)', request),
      );
      expect(verdict(report, 'cors.preflight.max-age')).toEqual(
        fails('Access-Control-Max-Age: an integer number of seconds', 'Access-Control-Max-Age (absent)', request),
      );
      expect(verdict(report, 'cors.preflight.allow-origin')).toEqual({ status: 'pass' });
      expect(verdict(report, 'cors.look-alike-refused')).toEqual({
        status: 'skip',
        reason: 'the API allows every origin ("*"), as docs/conventions.md §8.1 permits',
      });
    });

    it("fails on express-rate-limit's X-RateLimit-* headers, and checks Retry-After on the 429 it soon answers", () => {
      expect(verdict(report, 'limits.no-x-ratelimit')).toEqual(
        fails(
          'none of X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset',
          expect.stringMatching(
            /^x-ratelimit-limit "5", x-ratelimit-remaining "4", x-ratelimit-reset "\d+"$/,
          ) as unknown as string,
          'GET /v1/express-api-conventions-no-such-route -> 404 (and 7 more of 9 responses)',
        ),
      );
      // Its default limit is 5 requests a minute: the 6th answer is a 429 with Retry-After (a skip would say none was seen).
      expect(verdict(report, 'limits.retry-after')).toEqual({ status: 'pass' });
      expect(verdict(report, 'limits.policy-syntax').status).toBe('skip');
    });

    it('fails on the HTML 404 that none of the three libraries replaces', () => {
      expect(byId(report, 'errors.not-found.json').evidence?.seen).toBe('Content-Type "text/html; charset=utf-8"');
    });
  });

  describe("on an app built with this library's conventions(), notFound() and errorHandler()", () => {
    let report: ConformanceReport;
    beforeAll(async () => {
      report = await checkConventions(conventionsApp(), FIXTURE_OPTIONS);
    });

    const SKIPPED = [
      'common.location-on-3xx',
      'common.openapi-statuses',
      'common.openapi-headers',
      'security.clear-site-data',
      'security.cookies',
      'limits.retry-after',
    ];

    it.each(CONFORMANCE_CHECK_IDS.filter((id) => !SKIPPED.includes(id)))('passes %s', (id) => {
      expect(verdict(report, id)).toEqual({ status: 'pass' });
    });

    it('skips only what a safe run cannot provoke', () => {
      expect(report.results.filter((result) => result.status === 'skip').map((result) => result.id)).toEqual(SKIPPED);
    });

    it('fails nothing', () => {
      expect(report.failures).toEqual([]);
    });
  });

  describe('limits', () => {
    const withHeaders = (headers: Record<string, string>, status = 200) =>
      express().get('/v1/things', (_req, res) => {
        res.set(headers).status(status).json({ things: [] });
      });

    it('fails a draft-6 RateLimit-Policy whose item is not a quoted policy name', async () => {
      const report = await checkConventions(withHeaders({ 'RateLimit-Policy': '100;w=60' }), { paths: ['/v1/things'] });
      expect(verdict(report, 'limits.policy-syntax')).toEqual(
        fails(
          'RateLimit-Policy: "name";q=<integer>[;qu="unit"][;w=<seconds>][;pk=:key:], ...',
          '"100;w=60": an item that is not a quoted policy name ("100")',
          // The list is also asked for with limit, malformed paging and fields: 5 more answers.
          'GET /v1/things -> 200 (and 5 more of 6 responses)',
        ),
      );
    });

    it('fails a RateLimit without r, and one naming a policy that RateLimit-Policy lacks', async () => {
      const noR = await checkConventions(withHeaders({ 'RateLimit-Policy': '"a";q=10', RateLimit: '"a";t=5' }), {
        paths: ['/v1/things'],
      });
      expect(byId(noR, 'limits.state-syntax').evidence?.seen).toBe('"\\"a\\";t=5": policy "a" without r');
      const stray = await checkConventions(withHeaders({ 'RateLimit-Policy': '"a";q=10', RateLimit: '"b";r=1' }), {
        paths: ['/v1/things'],
      });
      expect(byId(stray, 'limits.state-syntax').evidence?.seen).toBe(
        '"\\"b\\";r=1": policy "b" is not in RateLimit-Policy "\\"a\\";q=10"',
      );
    });

    it("passes the 429 of this library's rate limiter: Retry-After in seconds, the same instant as t", async () => {
      const app = express();
      app.use(conventions({ rateLimit: { limit: 3 } }));
      app.get('/v1/things', (_req, res) => {
        res.json({ things: [] });
      });
      app.use(notFound(), errorHandler({ log: false }));
      const report = await checkConventions(app, { paths: ['/v1/things', '/v1/things', '/v1/things'] });
      expect(report.results.filter((result) => result.id.startsWith('limits.')).map(({ id, status }) => [id, status])).toEqual([
        ['limits.policy-syntax', 'pass'],
        ['limits.state-syntax', 'pass'],
        ['limits.policy-constant', 'pass'],
        ['limits.no-x-ratelimit', 'pass'],
        ['limits.retry-after', 'pass'],
      ]);
      expect(verdict(report, 'errors.json-bodies')).toEqual({ status: 'pass' });
    });

    it('fails a 429 whose Retry-After and RateLimit t point to different instants', async () => {
      const app = withHeaders({ 'RateLimit-Policy': '"a";q=10;w=60', RateLimit: '"a";r=0;t=30', 'Retry-After': '60' }, 429);
      const report = await checkConventions(app, { paths: ['/v1/things'] });
      expect(verdict(report, 'limits.retry-after')).toEqual(
        fails(
          'Retry-After: <seconds>, equal to the t of the exhausted RateLimit policy',
          'Retry-After "60" but RateLimit "\\"a\\";r=0;t=30"',
          'GET /v1/things -> 429',
        ),
      );
    });
  });

  describe('path rules on discovered paths, redirects and cookies', () => {
    let report: ConformanceReport;
    beforeAll(async () => {
      const app = express()
        .get('/v1/orders', (_req, res) => {
          res.cookie('session', 'secret-session-value', { httpOnly: true });
          res.json({ orders: [], hasNext: true, next: '/v1/orders/list?offset=20', self: '/v1/getOrders' });
        })
        .get('/v1/old-orders', (_req, res) => {
          res.status(301).end();
        })
        .get('/v1/logout', (_req, res) => {
          res.set('Clear-Site-Data', '"cache"').json({});
        });
      report = await checkConventions(app, { paths: ['/v1/orders', '/v1/old-orders', '/v1/logout'] });
    });

    it('lints the paths found in JSON bodies and says they were discovered', () => {
      expect(verdict(report, 'paths.no-list')).toEqual(
        fails(
          'every path follows the rule (5 checked)',
          '/v1/orders/list (discovered): "list" is a list segment; the collection itself is the list.',
        ),
      );
      expect(byId(report, 'paths.lowercase').evidence?.seen).toBe(
        '/v1/getOrders (discovered): "getOrders" has upper-case letters; paths are all lower case, words joined with "-".',
      );
      expect(byId(report, 'paths.no-verbs').evidence?.seen).toBe(
        '/v1/logout (given): "logout" is a verb; name the resource and let the HTTP method say the action.; ' +
          '/v1/getOrders (discovered): "getOrders" starts with the verb "get"; name the resource and let the HTTP method say the action.',
      );
    });

    it('fails a 3xx without Location', () => {
      expect(verdict(report, 'common.location-on-3xx')).toEqual(
        fails('Location: the new address', 'no Location', 'GET /v1/old-orders -> 301'),
      );
    });

    it('fails a cookie without Secure, naming the cookie but never showing its value', () => {
      expect(verdict(report, 'security.cookies')).toEqual(
        fails(
          'every Set-Cookie with Secure and HttpOnly',
          'cookie "session" with attributes "Path=/; HttpOnly"',
          'GET /v1/orders -> 200 (and 5 more of 6 responses)',
        ),
      );
      expect(JSON.stringify(report)).not.toContain('secret-session-value');
    });

    it('fails a Clear-Site-Data without cookies and storage', () => {
      expect(verdict(report, 'security.clear-site-data')).toEqual(
        fails('clear-site-data: "cache", "cookies", "storage"', 'clear-site-data "\\"cache\\""', 'GET /v1/logout -> 200'),
      );
    });
  });

  describe('the request budget and the write guard', () => {
    it('never sends more than maxRequests, and skips what it could not reach', async () => {
      let seen = 0;
      const app = express().use((_req, res) => {
        seen += 1;
        res.status(404).end();
      });
      const report = await checkConventions(app, { ...FIXTURE_OPTIONS, maxRequests: 3 });
      expect(seen).toBe(3);
      expect(report.requests).toBe(3);
      expect(verdict(report, 'auth.invalid-token.status')).toEqual({
        status: 'skip',
        reason: 'the request budget (3) was spent before this check; raise --max-requests',
      });
    });

    it('sends only GET, OPTIONS and TRACE without allowWrites, and says what the token checks need', async () => {
      const methods = new Set<string>();
      const app = express().use((req, res) => {
        methods.add(req.method);
        res.status(404).end();
      });
      const report = await checkConventions(app, { ...FIXTURE_OPTIONS, allowWrites: false });
      expect([...methods].sort()).toEqual(['GET', 'OPTIONS', 'TRACE']);
      expect(verdict(report, 'auth.token.response')).toEqual({
        status: 'skip',
        reason: 'a token request is a POST: give --allow-writes to send it',
      });
      for (const id of ['caching.changed', 'methods.override-header', 'methods.override-form', 'methods.override-post-only']) {
        expect(verdict(report, id)).toEqual({ status: 'skip', reason: 'changes a resource: give --allow-writes' });
      }
    });

    it('redacts a credential that an answer echoes', async () => {
      const app = express().post('/v1/oauth2/token', express.urlencoded({ extended: false }), (req, res) => {
        res.status(400).json({ error: `invalid_grant: no user with password ${(req.body as { password: string }).password}` });
      });
      const report = await checkConventions(app, {
        tokenEndpoint: '/v1/oauth2/token',
        allowWrites: true,
        credentials: { username: 'alice', password: 'wonderland' },
      });
      expect(byId(report, 'auth.token.response').evidence?.seen).toBe(
        'status 400 with error "invalid_grant: no user with password [redacted]"',
      );
    });

    it('refuses a budget above the hard cap before sending anything', async () => {
      await expect(checkConventions(plainExpressApp(), { maxRequests: CONFORMANCE_REQUEST_CAP + 1 })).rejects.toThrow(
        'checkConventions(options): `maxRequests` must be an integer from 1 to 200; received 201.',
      );
    });
  });

  describe('options', () => {
    it('names what each skipped check needs', async () => {
      const report = await checkConventions(conventionsApp());
      expect(verdict(report, 'caching.etag')).toEqual({
        status: 'skip',
        reason: 'needs a resource URL: give --resource /v1/<collection>/<id>',
      });
      expect(verdict(report, 'cors.preflight.status')).toEqual({
        status: 'skip',
        reason: 'needs an allowed origin: give --origin https://app.example',
      });
    });

    it('still runs an ignored check, and lists its failure as ignored rather than counting it', async () => {
      const report = await checkConventions(plainExpressApp(), { ignore: ['common.no-x-powered-by'] });
      expect(verdict(report, 'common.no-x-powered-by')).toMatchObject({ status: 'fail' });
      expect(report.ignored.map((result) => [result.id, result.suppressed])).toEqual([
        ['common.no-x-powered-by', { by: 'ignore', pattern: 'common.no-x-powered-by' }],
      ]);
      expect(report.failures.map((result) => result.id)).not.toContain('common.no-x-powered-by');
    });

    it.each([
      [{ ignore: ['security.hstss'] }, /`ignore` must be a check id or a pattern that names at least one check/],
      [{ origin: 'http://localhost:5173/app' }, /`origin` must be an origin/],
      [{ resource: 'v1/users/1' }, /`resource` must be a path starting with "\/"/],
      [{ maxRequest: 5 }, /unsupported option `maxRequest`\. Did you mean `maxRequests`\?/],
      [{ credentials: { clientId: 'only-the-id' } }, /clientId and clientSecret together/],
      [{ credentials: { limitedUsername: 'bob' } }, /limitedUsername and limitedPassword together/],
      [{ disposable: '/v1/users/2' }, /`change` must be the fields a PATCH of `disposable` sets/],
      [{ disposable: '/v1/users/2', change: { address: { city: 'x' } } }, /`change` must be an object of field names and string/],
      [{ limitedScope: 'users:write  exports' }, /`limitedScope` must be an RFC 6749 scope/],
      [{ forbidden: 'v1/exports/1' }, /`forbidden` must be a path starting with "\/"/],
    ])('refuses %j at once', async (options, message) => {
      await expect(checkConventions(plainExpressApp(), options as never)).rejects.toThrow(message);
    });

    it('refuses a path on another origin than the target', async () => {
      await expect(checkConventions('http://127.0.0.1:9/', { resource: 'http://example.com/v1/users/1' })).rejects.toThrow(
        /`paths` must be a path on the target's origin/,
      );
    });
  });
});
