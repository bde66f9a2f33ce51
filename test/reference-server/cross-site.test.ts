import { createServer, type Server } from 'node:http';
import type { Browser, Response } from 'playwright-core';
import request from 'supertest';
import { launchChromium } from '../support/chromium.js';
import { CHROMIUM, closeServer, describeWith, freePort } from '../support/services.js';
import { DEMO, signIn } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/** A sign-in form aimed at `action`, as a page of any site can write it. */
const signInForm = (action: string) => `<!doctype html><html><body>
<form method="post" action="${action}">
<input name="username" value="${DEMO.username}"><input name="password" value="${DEMO.password}">
<button type="submit">Sign in</button></form></body></html>`;

/**
 * Login CSRF in a real browser: a page of another site posts the sign-in
 * form of the reference server. Chromium sends `Sec-Fetch-Site: cross-site`
 * and its `Origin`; the server refuses it, and serves the same form posted
 * from its own origin.
 */
describeWith(CHROMIUM, 'cross-site sign-in in Chromium (POST /v1/sessions)', () => {
  let browser: Browser;
  let api: RunningProcess;
  let evil: Server;
  let evilOrigin: string;
  let trustedOrigin: string;

  beforeAll(async () => {
    const evilPort = await freePort();
    // localhost and 127.0.0.1 are two sites: the page is cross-site to the API.
    evilOrigin = `http://localhost:${evilPort}`;
    trustedOrigin = `http://localhost:${await freePort()}`;
    api = await startServer({ CORS_ORIGINS: trustedOrigin });
    evil = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(signInForm(`${api.url}/v1/sessions`));
    });
    await new Promise<void>((resolve) => evil.listen(evilPort, '127.0.0.1', resolve));
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    if (evil) await closeServer(evil);
    await api?.stop();
  });

  async function submit(pageUrl: string, prepare?: (page: import('playwright-core').Page) => Promise<void>) {
    const page = await browser.newPage();
    try {
      await page.goto(pageUrl);
      await prepare?.(page);
      const answer = page.waitForResponse((res: Response) => res.url() === `${api.url}/v1/sessions`, { timeout: 10_000 });
      await page.click('button[type="submit"]');
      const res = await answer;
      return {
        status: res.status(),
        type: res.headers()['content-type'],
        body: await res.text(),
        cookie: res.headers()['set-cookie'],
      };
    } finally {
      await page.close();
    }
  }

  it('refuses the form posted from a page of another site with 403 JSON and sets no cookie', async () => {
    const res = await submit(`${evilOrigin}/`);
    expect(res.status).toBe(403);
    expect(res.type).toBe('application/json; charset=utf-8');
    // Development detail: what Chromium sent.
    expect(JSON.parse(res.body)).toEqual({
      errors: [
        {
          message: 'A state-changing request from another site is not allowed.',
          code: 40305,
          detail: {
            secFetchSite: 'cross-site',
            origin: evilOrigin,
            fix: `conventions({ crossSiteProtection: { trustedOrigins: ['${evilOrigin}'] } }), or corsPolicy's origins`,
          },
        },
      ],
    });
    expect(res.cookie).toBeUndefined();
  });

  it('signs in with the same form posted from its own origin', async () => {
    // A page of the API's own origin (any of its JSON answers), given the same form.
    const res = await submit(`${api.url}/v1/users?limit=1`, async (page) => {
      await page.setContent(signInForm('/v1/sessions'));
    });
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body)).toEqual({ csrfToken: expect.any(String) });
  });

  describe('the same doors without a browser (supertest)', () => {
    it.each([
      ['Sec-Fetch-Site: cross-site', { 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' }],
      ['Origin: null', { Origin: 'null' }],
      ['Origin of another site, no Fetch Metadata', { Origin: 'https://evil.example' }],
      // A sibling subdomain is no trusted site, and the scheme is part of the origin.
      ['Sec-Fetch-Site: same-site from a sibling', { 'Sec-Fetch-Site': 'same-site', Origin: 'http://blog.localhost' }],
      ['Origin of this host on another scheme, no Fetch Metadata', { Origin: 'https://HOST' }],
    ])('POST /v1/sessions with %s: 403', async (_name, given) => {
      const headers = { ...given } as Record<string, string>;
      if (headers.Origin === 'https://HOST') headers.Origin = api.url.replace('http://', 'https://');
      const res = await request(api.url)
        .post('/v1/sessions')
        .set(headers)
        .type('form')
        .send({ username: DEMO.username, password: DEMO.password });
      expect(res.status).toBe(403);
      expect(res.body.errors[0].code).toBe(40305);
      expect(res.headers['set-cookie']).toBeUndefined();
    });

    it('POST /v1/oauth2/token and POST /v1/users with Sec-Fetch-Site: cross-site: 403', async () => {
      const token = await request(api.url)
        .post('/v1/oauth2/token')
        .set({ 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' })
        .type('form')
        .send({
          grant_type: 'password',
          username: DEMO.username,
          password: DEMO.password,
          client_id: DEMO.clientId,
          client_secret: DEMO.clientSecret,
        });
      expect(token.status).toBe(403);
      const session = await signIn(api.url);
      const create = await request(api.url)
        .post('/v1/users')
        .set({
          Cookie: session.cookie,
          'CSRF-Token': session.csrfToken,
          'Sec-Fetch-Site': 'cross-site',
          Origin: 'https://evil.example',
        })
        .send({ name: 'Mallory', email: 'mallory@example.com', gender: 'female' });
      expect(create.status).toBe(403);
      expect(create.body.errors[0].code).toBe(40305);
    });

    it('a CORS-allowed origin still signs in cross-site, with credentials', async () => {
      const res = await request(api.url)
        .post('/v1/sessions')
        .set({ 'Sec-Fetch-Site': 'cross-site', Origin: trustedOrigin })
        .type('form')
        .send({ username: DEMO.username, password: DEMO.password });
      expect(res.status).toBe(201);
      expect(res.headers['access-control-allow-origin']).toBe(trustedOrigin);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
    });

    it('a client that sends neither header (not a browser) signs in as before', async () => {
      const res = await request(api.url)
        .post('/v1/sessions')
        .type('form')
        .send({ username: DEMO.username, password: DEMO.password });
      expect(res.status).toBe(201);
    });
  });
});
