import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.js';
import { CHROMIUM, describeWith, freePort } from '../support/services.js';
import { DEMO } from './client.js';
import { type RunningProcess, startBrowserOrigin, startServer } from './harness.js';

/**
 * The browser page (examples/browser) in headless Chromium: served from its
 * own origin, it signs in through the token endpoint and lists users with
 * a credentialed cross-origin fetch. Chromium enforces CORS and the CSP.
 */
describeWith(CHROMIUM, 'the browser page in Chromium', () => {
  let browser: Browser;
  let api: RunningProcess;
  let pageOrigin: RunningProcess;
  let allowed: string;
  let refused: string;

  beforeAll(async () => {
    const pagePort = await freePort();
    // One page server under two names: two origins, only one of them allowed.
    allowed = `http://localhost:${pagePort}`;
    refused = `http://127.0.0.1:${pagePort}`;
    api = await startServer({ CORS_ORIGINS: allowed });
    pageOrigin = await startBrowserOrigin({ BROWSER_PORT: String(pagePort), API_URL: api.url });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([api?.stop(), pageOrigin?.stop()]);
  });

  async function signIn(origin: string, password: string = DEMO.password): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.fill('input[name="username"]', DEMO.username);
    await page.fill('input[name="password"]', password);
    await page.click('button[type="submit"]');
    await page.waitForFunction(() => {
      const text = (
        globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }
      ).document.getElementById('status').textContent;
      return text.startsWith('Signed in') || text.startsWith('Failed');
    });
    return page;
  }

  it('from an allowed origin: signs in through the token endpoint and lists users with credentials', async () => {
    const page = await signIn(allowed);
    try {
      expect(await page.textContent('#status')).toBe('Signed in. 10 users shown.');
      const firstRow = await page.$$eval('#users tbody tr:first-child td', (cells) => cells.map((cell) => cell.textContent));
      expect(firstRow).toEqual([
        '4611686018427387911',
        'Alice Liddell',
        'alice@example.com',
        'female',
        '2026-01-05T09:30:00.000Z',
      ]);
      expect(await page.isVisible('#more')).toBe(true);
    } finally {
      await page.close();
    }
  });

  it('shows the token endpoint error for a wrong password', async () => {
    const page = await signIn(allowed, 'not-the-password');
    try {
      expect(await page.textContent('#status')).toBe('Failed: The username or password is not correct.');
      expect(await page.isVisible('#users')).toBe(false);
    } finally {
      await page.close();
    }
  });

  it('from an origin that is not allowed: the browser blocks the cross-origin calls', async () => {
    const page = await signIn(refused);
    try {
      expect(await page.textContent('#status')).toBe('Failed: Failed to fetch');
    } finally {
      await page.close();
    }
  });
});
