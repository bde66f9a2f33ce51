import cookieParser from 'cookie-parser';
import type { Express, Request, RequestHandler } from 'express';
import session from 'express-session';
import pino from 'pino';
import { pinoHttp } from 'pino-http';
import { freshStack, LAYOUTS, layoutApp, serve, VERSIONS } from '../support/neighbours.js';
import { cookieHeader, cookieLines, expectSpecHeaders } from '../support/spec-headers.js';
import { waitUntil } from '../support/timing.js';

// express-session writes its cookie from a per-response writeHead hook
// (on-headers); cookie-parser reads what the client sends back. Under the
// preset, sessions persist, and every Set-Cookie that leaves carries Secure
// and HttpOnly (docs/conventions.md rule 11.14),
// whoever wrote it.

/** express-session's session, seen past the library's own `req.session` type (`{ id, data }`). */
const sessionOf = (req: Request) => req.session as unknown as { user?: string };

const sessions = (): RequestHandler =>
  session({ secret: 'neighbours-suite-secret', resave: false, saveUninitialized: false, name: 'sid' });

const routes = (app: Express) => {
  app.post('/v1/sessions', (req, res) => {
    sessionOf(req).user = 'ada';
    res.status(201).json({ user: 'ada' });
  });
  app.get('/v1/sessions/current', (req, res) => {
    res.json({ user: sessionOf(req).user ?? null });
  });
  app.get('/v1/preferences', (req, res) => {
    res.cookie('theme', 'dark', { signed: true });
    res.json({ theme: (req.signedCookies as Record<string, string>).theme ?? null });
  });
};

describe.each(VERSIONS)('on %s', (version) => {
  describe.each(LAYOUTS)('with the %s', (layout) => {
    describe('express-session', () => {
      it('keeps the session across requests; its cookie is Secure and HttpOnly; every header of the conventions is sent', async () => {
        const { app, base } = layoutApp(freshStack(version), layout, [sessions()], routes);
        const served = await serve(app);
        try {
          const signIn = await served.fetch(`${base}/v1/sessions`, { method: 'POST' });
          expect(signIn.status).toBe(201);
          expect(cookieLines(signIn.headers).map((line) => line.split('=')[0])).toEqual(['sid']);
          expectSpecHeaders(signIn.headers);
          const cookie = cookieHeader(signIn.headers);
          for (let i = 0; i < 2; i++) {
            const current = await served.fetch(`${base}/v1/sessions/current`, { headers: { cookie } });
            expect(current.status).toBe(200);
            expect(JSON.parse(current.text)).toEqual({ user: 'ada' });
            expectSpecHeaders(current.headers);
          }
        } finally {
          await served.close();
        }
      });

      it('does not crash with pino-http in front, which reads res.getHeaders() after finish', async () => {
        const lines: string[] = [];
        const logger = pinoHttp({ logger: pino({}, { write: (line: string) => lines.push(line) }) });
        const { app, base } = layoutApp(freshStack(version), layout, [logger as unknown as RequestHandler, sessions()], routes);
        const served = await serve(app);
        const crashes: unknown[] = [];
        const onCrash = (error: unknown) => crashes.push(error);
        process.on('uncaughtException', onCrash);
        try {
          const signIn = await served.fetch(`${base}/v1/sessions`, { method: 'POST' });
          expect(signIn.status).toBe(201);
          expectSpecHeaders(signIn.headers);
          const cookie = cookieHeader(signIn.headers);
          const current = await served.fetch(`${base}/v1/sessions/current`, { headers: { cookie } });
          expect(JSON.parse(current.text)).toEqual({ user: 'ada' });
          expectSpecHeaders(current.headers);
          await waitUntil(() => lines.length >= 2, 'two log lines');
          const logged = lines.map(
            (line) => JSON.parse(line) as { res: { statusCode: number; headers: Record<string, unknown> } },
          );
          expect(logged.map((entry) => entry.res.statusCode)).toEqual([201, 200]);
          expect(logged[0]?.res.headers['set-cookie']).toEqual(signIn.headers['set-cookie']);
          expect(logged[1]?.res.headers['content-type']).toBe('application/json; charset=utf-8');
          expect(crashes).toEqual([]);
        } finally {
          process.off('uncaughtException', onCrash);
          await served.close();
        }
      });
    });

    describe('cookie-parser', () => {
      it('reads back a signed cookie set through res.cookie(); the cookie is Secure and HttpOnly', async () => {
        const { app, base } = layoutApp(freshStack(version), layout, [cookieParser('cookie-secret')], routes);
        const served = await serve(app);
        try {
          const first = await served.fetch(`${base}/v1/preferences`);
          expect(JSON.parse(first.text)).toEqual({ theme: null });
          expectSpecHeaders(first.headers);
          const second = await served.fetch(`${base}/v1/preferences`, { headers: { cookie: cookieHeader(first.headers) } });
          expect(JSON.parse(second.text)).toEqual({ theme: 'dark' });
          expectSpecHeaders(second.headers);
        } finally {
          await served.close();
        }
      });
    });
  });
});
