import type { Server } from 'node:http';
import express from 'express';
import type { Browser } from 'playwright-core';
import { cacheControl, entityTag, notModified, setValidators } from '../src/caching/index.js';
import { requireXhr } from '../src/cors/index.js';
import { errorHandler, notFound } from '../src/errors/index.js';
import { conventions } from '../src/index.js';
import { launchChromium } from './support/chromium.js';
import { CHROMIUM, describeWith, freePort } from './support/services.js';

/**
 * The whole chain in a real browser: an API on one origin, pages on other
 * origins, Chromium enforcing CORS, CSP and its HTTP cache.
 */

interface Seen {
  method: string;
  path: string;
  origin?: string;
  ifNoneMatch?: string;
  status: number;
}

const listen = (app: express.Express, port: number): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = app.listen(port, '127.0.0.1', () => resolve(server));
    server.once('error', reject);
  });

const close = (server: Server | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (!server) return resolve();
    server.closeAllConnections();
    server.close(() => resolve());
  });

describeWith(CHROMIUM, 'in a real browser (Chromium)', () => {
  const UPDATED_AT = new Date('2026-11-20T10:00:00.000Z');
  let browser: Browser;
  let api: Server;
  let pages: Server;
  let apiOrigin: string;
  let allowedOrigin: string;
  let otherOrigin: string;
  const seen: Seen[] = [];

  beforeAll(async () => {
    const [apiPort, pagePort] = [await freePort(), await freePort()];
    apiOrigin = `http://127.0.0.1:${apiPort}`;
    // The same page server under two names: two origins, one allowed.
    allowedOrigin = `http://localhost:${pagePort}`;
    otherOrigin = `http://127.0.0.1:${pagePort}`;

    const app = express();
    app.use((req, res, next) => {
      res.on('finish', () => {
        seen.push({
          method: req.method,
          path: req.path,
          origin: req.headers.origin,
          ifNoneMatch: req.headers['if-none-match'],
          status: res.statusCode,
        });
      });
      next();
    });
    app.use(conventions({ corsPolicy: { origins: [allowedOrigin] } }));
    app.get('/v1/sessions/current', requireXhr(), (_req, res) => res.json({ name: 'alice' }));
    app.get('/v1/users/1', cacheControl('no-cache'), (req, res) => {
      setValidators(res, { etag: entityTag(UPDATED_AT), lastModified: UPDATED_AT });
      if (notModified(req, res)) return;
      res.json({ id: 1, name: 'Ada' });
    });
    app.get('/csp', (_req, res) => {
      res
        .type('html')
        .send(
          '<!doctype html><html><head><title>start</title></head><body>' +
            '<script>document.title = "inline ran";</script>' +
            '<script src="/self.js"></script></body></html>',
        );
    });
    app.get('/self.js', (_req, res) => {
      res.type('js').send('document.body.dataset.self = "ran";');
    });
    app.use(notFound(), errorHandler({ log: false }));

    const pageApp = express();
    pageApp.get('/', (_req, res) => {
      res.type('html').send('<!doctype html><html><head><title>client</title></head><body></body></html>');
    });

    api = await listen(app, apiPort);
    pages = await listen(pageApp, pagePort);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await close(api);
    await close(pages);
  });

  beforeEach(() => {
    seen.length = 0;
  });

  // Only the API's own paths: a browser may also ask for /favicon.ico on its own schedule.
  const apiCalls = (): Seen[] => seen.filter((call) => call.path.startsWith('/v1/'));

  /** Runs `fetch` in a page of `origin` and reports what the script could see. */
  async function fetchFrom(origin: string, path: string, init: RequestInit) {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${origin}/`);
      return await page.evaluate(
        async ({ url, init }) => {
          try {
            const res = await fetch(url, init);
            return { ok: true, status: res.status, body: await res.json() };
          } catch (error) {
            return { ok: false, error: String(error) };
          }
        },
        { url: `${apiOrigin}${path}`, init: init as Record<string, unknown> },
      );
    } finally {
      await context.close();
    }
  }

  const credentialedXhr: RequestInit = { credentials: 'include', headers: { 'X-Requested-With': 'XMLHttpRequest' } };

  it('an allowed origin’s credentialed fetch with a custom header passes its preflight and reads the JSON', async () => {
    const result = await fetchFrom(allowedOrigin, '/v1/sessions/current', credentialedXhr);
    expect(result).toEqual({ ok: true, status: 200, body: { name: 'alice' } });
    expect(apiCalls().map(({ method, path, origin, status }) => ({ method, path, origin, status }))).toEqual([
      { method: 'OPTIONS', path: '/v1/sessions/current', origin: allowedOrigin, status: 200 },
      { method: 'GET', path: '/v1/sessions/current', origin: allowedOrigin, status: 200 },
    ]);
  });

  it('a disallowed origin’s fetch is blocked by the browser at the preflight', async () => {
    const result = await fetchFrom(otherOrigin, '/v1/sessions/current', credentialedXhr);
    expect(result).toEqual({ ok: false, error: 'TypeError: Failed to fetch' });
    expect(apiCalls().map(({ method, origin, status }) => ({ method, origin, status }))).toEqual([
      { method: 'OPTIONS', origin: otherOrigin, status: 403 },
    ]);
  });

  it('a disallowed origin cannot read even a simple GET that the server answered', async () => {
    const result = await fetchFrom(otherOrigin, '/v1/users/1', { credentials: 'include' });
    expect(result).toEqual({ ok: false, error: 'TypeError: Failed to fetch' });
    expect(apiCalls().map(({ method, status }) => ({ method, status }))).toEqual([{ method: 'GET', status: 200 }]);
  });

  it('the CSP blocks an inline script and lets the same-origin one run', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      // The browser's own report of each blocked script (CSP Level 3 §5.3),
      // recorded by a script the test injects outside the page's policy.
      // Page-side code is given as text: the tests compile without the DOM library.
      await page.addInitScript(`
        window.violations = [];
        document.addEventListener('securitypolicyviolation', (event) => {
          window.violations.push(event.effectiveDirective + ' ' + event.blockedURI + ' ' + event.disposition);
        });
      `);
      const response = await page.goto(`${apiOrigin}/csp`);
      expect(response?.headers()['content-security-policy']).toBe("script-src 'self'");
      await page.waitForFunction('document.body.dataset.self === "ran"');
      await page.waitForFunction('window.violations.length > 0');
      expect(await page.title()).toBe('start');
      expect(await page.evaluate('window.violations')).toEqual(['script-src-elem inline enforce']);
    } finally {
      await context.close();
    }
  });

  it('the browser cache revalidates with If-None-Match and gets 304', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${allowedOrigin}/`);
      const bodies = await page.evaluate(async (url) => {
        const first = await fetch(url, { credentials: 'include' });
        const firstBody = await first.json();
        const second = await fetch(url, { credentials: 'include' });
        return [first.status, firstBody, second.status, await second.json()];
      }, `${apiOrigin}/v1/users/1`);
      // The script sees two 200s; the network saw a 200, then a 304 served from the cache.
      expect(bodies).toEqual([200, { id: 1, name: 'Ada' }, 200, { id: 1, name: 'Ada' }]);
      const tag = entityTag(UPDATED_AT);
      expect(apiCalls().map(({ method, ifNoneMatch, status }) => ({ method, ifNoneMatch, status }))).toEqual([
        { method: 'GET', ifNoneMatch: undefined, status: 200 },
        { method: 'GET', ifNoneMatch: tag, status: 304 },
      ]);
    } finally {
      await context.close();
    }
  });
});
