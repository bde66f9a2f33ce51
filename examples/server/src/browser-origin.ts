import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { errorHandler, notFound } from 'express-api-conventions';
import { commonHeaders } from 'express-api-conventions/service';
import { BROWSER_PAGE_CLIENT_ID } from './auth.js';
import { SettingsError } from './settings.js';

/**
 * The browser page's own origin (`npm run start:browser`): serves
 * examples/browser on another port than the API, so that signing in and
 * listing users from it are cross-origin requests, with credentials.
 *
 * Settings: BROWSER_PORT (5173), HOST (127.0.0.1), API_URL
 * (http://localhost:3000), DEMO_USERNAME and DEMO_PASSWORD (the server's
 * defaults, shown on the page). The page and the API are two origins of one
 * site (localhost, two ports): the session cookie (SameSite=Strict) goes
 * with the page's credentialed calls, and CORS decides what a script reads.
 * The same page on 127.0.0.1 is an origin the API does not allow.
 */

const PAGE = fileURLToPath(new URL('../../browser/', import.meta.url));

function setting(name: string, fallback: string): string {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : value;
}

function readPort(): number {
  const value = setting('BROWSER_PORT', '5173');
  if (!/^[0-9]+$/.test(value) || Number(value) > 65535) {
    throw new SettingsError(`BROWSER_PORT=${JSON.stringify(value)} is not valid: expected a whole number from 0 to 65535.`);
  }
  return Number(value);
}

try {
  const port = readPort();
  const host = setting('HOST', '127.0.0.1');
  const config = {
    apiUrl: setting('API_URL', 'http://localhost:3000'),
    clientId: BROWSER_PAGE_CLIENT_ID,
    // A demonstration: the seeded user's credentials are shown on the page.
    demo: { username: setting('DEMO_USERNAME', 'alice'), password: setting('DEMO_PASSWORD', 'wonderland-rabbit-hole') },
  };

  const app = express();
  app.disable('x-powered-by');
  app.use(commonHeaders());
  // Rule 11.2 (docs/conventions.md): the page runs only its own script files.
  app.use(function pagePolicyMiddleware(_req, res, next) {
    res.setHeader('Content-Security-Policy', "script-src 'self'");
    next();
  });
  app.get('/config.json', (_req, res) => {
    res.json(config);
  });
  app.use(express.static(PAGE, { index: 'index.html' }));
  app.use(notFound(), errorHandler());

  const server = app.listen(port, host, () => {
    const { port: actual } = server.address() as AddressInfo;
    console.log(`browser page on http://localhost:${actual} (API at ${config.apiUrl})`);
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
  process.once('SIGINT', () => server.close(() => process.exit(0)));
} catch (error) {
  console.error(`browser page: cannot start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
