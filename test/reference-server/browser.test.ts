import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.js';
import { CHROMIUM, describeWith, freePort } from '../support/services.js';
import { DEMO } from './client.js';
import { type RunningProcess, startBrowserOrigin, startServer } from './harness.js';

/**
 * The browser page (examples/browser) in headless Chromium: the live
 * demonstration of the conventions. Served from its own origin
 * (localhost:<port>), it calls the API (localhost:<other port>, the same
 * site) with credentials; Chromium enforces CORS, the CSP, SameSite and
 * Secure. Each step shows the answer's status and readable headers.
 */
describeWith(CHROMIUM, 'the browser page in Chromium', () => {
  let browser: Browser;
  let api: RunningProcess;
  let pageOrigin: RunningProcess;
  let allowed: string;
  let page: Page;

  beforeAll(async () => {
    const pagePort = await freePort();
    allowed = `http://localhost:${pagePort}`;
    api = await startServer({ CORS_ORIGINS: allowed });
    pageOrigin = await startBrowserOrigin({
      BROWSER_PORT: String(pagePort),
      API_URL: api.url.replace('127.0.0.1', 'localhost'),
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(`${allowed}/`);
    await page.waitForSelector('body[data-ready="true"]');
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([api?.stop(), pageOrigin?.stop()]);
  });

  const answer = (id: string): Promise<string> => page.textContent(`#answer-${id}`).then((text) => text ?? '');
  const waitForAnswer = (id: string, text: string) =>
    page.waitForFunction(
      ([selector, expected]) =>
        (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document
          .querySelector(selector as string)
          ?.textContent?.includes(expected as string) ?? false,
      [`#answer-${id}`, text],
    );

  it('shows the demo credentials, filled in', async () => {
    expect(await page.textContent('#demo-username')).toBe(DEMO.username);
    expect(await page.textContent('#demo-password')).toBe(DEMO.password);
    expect(await page.inputValue('#sign-in [name=username]')).toBe(DEMO.username);
  });

  it('signs in: 201, a CSRF token in the body, then the first page of users', async () => {
    await page.click('#sign-in button[type=submit]');
    await page.waitForFunction(() =>
      (globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }).document
        .getElementById('status')
        .textContent.startsWith('Signed in'),
    );
    expect(await answer('sign-in')).toMatch(/^POST \/v1\/sessions\n→ 201 Created\n/);
    expect(await answer('sign-in')).toContain('"csrfToken": "');
    await waitForAnswer('users', 'GET /v1/users?offset=0&limit=5&fields=id%2Cname%2Cemail');
    const header = await page.$$eval('#users thead th', (cells) => cells.map((cell) => cell.textContent));
    expect(header).toEqual(['id_str', 'name', 'email']);
    expect(await page.$$eval('#users tbody tr', (rows) => rows.length)).toBe(5);
    expect(await answer('users')).toContain('"hasNext": true');
    expect(await page.textContent('#users tbody tr:first-child td:first-child')).toMatch(/^\d{19}$/);
    expect(await answer('users')).toMatch(/\nlink: <\/v1\/users\?[^>]*\boffset=5\b[^>]*>; rel="next"\n/);
  });

  it('pages forward and back', async () => {
    const firstId = await page.textContent('#users tbody tr:first-child td:first-child');
    await page.click('#next');
    await waitForAnswer('users', 'GET /v1/users?offset=5&limit=5');
    expect(await page.textContent('#page-info')).toBe('offset 5, limit 5, hasNext true');
    expect(await page.textContent('#users tbody tr:first-child td:first-child')).not.toBe(firstId);
    await page.click('#previous');
    await waitForAnswer('users', 'GET /v1/users?offset=0&limit=5');
    expect(await page.textContent('#users tbody tr:first-child td:first-child')).toBe(firstId);
    expect(await page.isDisabled('#previous')).toBe(true);
  });

  it('selects fields: only the checked ones come back', async () => {
    await page.uncheck('#fields input[value=email]');
    await page.check('#fields input[value=gender]');
    await waitForAnswer('users', 'fields=id%2Cname%2Cgender');
    expect(await page.$$eval('#users thead th', (cells) => cells.map((cell) => cell.textContent))).toEqual([
      'id_str',
      'name',
      'gender',
    ]);
    expect(await page.textContent('#users tbody tr:first-child td:nth-child(3)')).toMatch(/^(male|female)$/);
  });

  it('answers a repeated GET with If-None-Match by 304 and no body', async () => {
    await page.click('#get-user');
    await waitForAnswer('conditional', '→ 200');
    const first = await answer('conditional');
    const etag = /\netag: ("[^"]+")\n/.exec(first)?.[1];
    expect(etag).toBeDefined();
    expect(first).toMatch(/\nlast-modified: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT\n/);
    await page.click('#get-user-again');
    await waitForAnswer('conditional', '→ 304');
    const second = await answer('conditional');
    expect(second).toContain(`If-None-Match: ${etag}\n→ 304 Not Modified`);
    expect(second).not.toContain('"name"');
  });

  it('edits with the CSRF token and If-Match (200, a new ETag), then answers the stale ETag with 412', async () => {
    await page.fill('#edit [name=name]', 'Alice Pleasance Liddell');
    await page.click('#edit button[type=submit]');
    await waitForAnswer('edit', '→ 200');
    const saved = await answer('edit');
    expect(saved).toContain('"name": "Alice Pleasance Liddell"');
    await page.click('#save-stale');
    await waitForAnswer('edit', '→ 412');
    const stale = await answer('edit');
    expect(stale).toContain('"code": 41200');
  });

  it('shows the RateLimit state of the last answer', async () => {
    const text = await answer('rate-limit');
    expect(text).toMatch(/\nratelimit-policy: "[a-z]+";q=100;w=60/);
    expect(text).toMatch(/\nratelimit: "[a-z]+";r=\d+;t=\d+/);
  });

  it('shows a call from an origin the API does not allow, refused by the browser', async () => {
    await page.click('#cross-origin');
    await waitForAnswer('cross-origin', '→ ');
    expect(await answer('cross-origin')).toContain('→ TypeError: Failed to fetch');
  });

  it('signs out: 204 with Clear-Site-Data on the wire, after which the session is gone', async () => {
    const signOut = page.waitForResponse((response) => response.request().method() === 'DELETE');
    await page.click('#sign-out');
    const wire = await signOut;
    expect(wire.status()).toBe(204);
    expect((await wire.allHeaders())['clear-site-data']).toBe('"cache", "cookies", "storage"');
    await waitForAnswer('sign-out', 'afterwards');
    expect(await answer('sign-out')).toMatch(/^DELETE \/v1\/sessions\/current\n→ 204 No Content\n/);
    expect(await answer('sign-out')).toContain('GET /v1/sessions/current afterwards → 401');
    expect(await page.textContent('#status')).toBe('Signed out.');
  });

  // UPDATE_SCREENSHOT=1 writes the one docs/guides/browser-page.md shows.
  it('takes a screenshot of the whole page, every step answered', async () => {
    const path = process.env.UPDATE_SCREENSHOT
      ? 'docs/images/browser-page.jpg'
      : join(mkdtempSync(join(tmpdir(), 'eac-browser-')), 'browser-page.jpg');
    await page.screenshot({ path, fullPage: true, scale: 'css', type: 'jpeg', quality: 70 });
    expect(statSync(path).size).toBeGreaterThan(10_000);
  });
});
