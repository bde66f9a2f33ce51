import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { launchChromium } from '../support/chromium.js';
import { CHROMIUM, closeServer, describeWith, listen } from '../support/services.js';
import { verifierAndChallenge } from './authorization.js';
import { DEMO } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * The user's journey of the authorization code flow in headless Chromium,
 * against the reference server: the authorization request, the sign-in page,
 * the consent page (approve and deny), and the callback, served by a tiny
 * client on a loopback port (RFC 8252 §7.3). Chromium enforces the CSP,
 * SameSite and Secure; no page of the journey may break the CSP.
 */

const escapeHtml = (text: string) => text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');

/**
 * The client's side: its callback pages record what they were sent; `/start`
 * is a page of the client's own site with a link to the authorization request.
 */
function clientApp(callbacks: URL[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    if (url.pathname === '/start') {
      res.end(
        `<!doctype html><title>Client</title><a id="go" href="${escapeHtml(url.searchParams.get('to') ?? '')}">Sign in with the API</a>`,
      );
      return;
    }
    if (url.pathname === '/favicon.ico') {
      res.statusCode = 404;
      res.end();
      return;
    }
    callbacks.push(url);
    res.end('<!doctype html><title>Callback</title><p>Back at the client.</p>');
  };
}

describeWith(CHROMIUM, 'the authorization code flow in Chromium', () => {
  let api: RunningProcess;
  let client: { server: Server; url: string };
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const callbacks: URL[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    api = await startServer();
    client = await listen(clientApp(callbacks));
    browser = await launchChromium();
    context = await browser.newContext();
    page = await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to (execute|load|apply)/i.test(message.text())) cspViolations.push(message.text());
    });
  });

  afterAll(async () => {
    await browser?.close();
    if (client) await closeServer(client.server);
    await api?.stop();
  });

  const clientPort = () => new URL(client.url).port;

  /** An authorization request of `clientId`, its redirect URI on the client's port. */
  function authorizationRequest(clientId: string, path: string, scope: string) {
    const { verifier, challenge } = verifierAndChallenge();
    const state = randomBytes(16).toString('base64url');
    const redirectUri = `http://127.0.0.1:${clientPort()}${path}`;
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope,
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    return { url: `${api.url}/v1/oauth2/authorize?${query}`, redirectUri, state, verifier };
  }

  /** What the callback was sent, as a plain object. */
  async function landedWith(redirectUri: string): Promise<Record<string, string>> {
    await page.waitForURL((url) => url.href.startsWith(`${redirectUri}?`));
    const landed = callbacks.at(-1);
    expect(landed?.pathname).toBe(new URL(redirectUri).pathname);
    return Object.fromEntries(landed?.searchParams ?? []);
  }

  it('demo-partner, denied: the sign-in page, then the consent page naming the client and scopes; deny sends access_denied', async () => {
    const journey = authorizationRequest('demo-partner', '/partner/callback', 'users:write');
    await page.goto(journey.url);
    await page.waitForURL(/\/sign-in\?returnTo=/);
    await page.fill('input[name=username]', DEMO.username);
    await page.fill('input[name=password]', DEMO.password);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/consent\?request=/);
    expect(await page.textContent('h1')).toBe('Allow Demo Partner?');
    expect(await page.$$eval('li code', (items) => items.map((item) => item.textContent))).toEqual(['users:write']);
    await page.click('button[value=deny]');
    expect(await landedWith(journey.redirectUri)).toEqual({
      error: 'access_denied',
      error_description: 'The user denied the request.',
      state: journey.state,
      iss: api.url,
    });
  });

  it('demo-partner, approved: signed in already, straight to the consent page; the callback gets code, state and iss; the code exchanges', async () => {
    const journey = authorizationRequest('demo-partner', '/partner/callback', 'users:write');
    await page.goto(journey.url);
    await page.waitForURL(/\/consent\?request=/);
    await page.click('button[value=approve]');
    const params = await landedWith(journey.redirectUri);
    expect(params).toEqual({ code: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), state: journey.state, iss: api.url });
    const tokens = await request(api.url).post('/v1/oauth2/token').auth('demo-partner', 'partner-secret').type('form').send({
      grant_type: 'authorization_code',
      code: params.code,
      redirect_uri: journey.redirectUri,
      code_verifier: journey.verifier,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.token_type).toBe('bearer');
  });

  it('demo-spa from a link on another site: the Lax session rides the navigation, no sign-in and no consent, a code at once', async () => {
    const journey = authorizationRequest('demo-spa', '/callback', 'users:write');
    // localhost and 127.0.0.1 are different sites: the click is a cross-site top-level navigation.
    await page.goto(`http://localhost:${clientPort()}/start?${new URLSearchParams({ to: journey.url })}`);
    const visited: string[] = [];
    const onRequest = (sent: { url(): string; isNavigationRequest(): boolean }) => {
      if (sent.isNavigationRequest()) visited.push(new URL(sent.url()).pathname);
    };
    page.on('request', onRequest);
    await page.click('#go');
    const params = await landedWith(journey.redirectUri);
    page.off('request', onRequest);
    expect(params).toEqual({ code: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), state: journey.state, iss: api.url });
    expect(visited).toEqual(['/v1/oauth2/authorize', '/callback']);
  });

  it('no page of the journey broke the CSP', () => {
    expect(cspViolations).toEqual([]);
  });
});
