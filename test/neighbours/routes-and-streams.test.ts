import http from 'node:http';
import { Readable } from 'node:stream';
import cors from 'cors';
import type { Express } from 'express';
import promBundle from 'express-prom-bundle';
import { body, validationResult } from 'express-validator';
import helmet from 'helmet';
import promClient from 'prom-client';
import swaggerUi from 'swagger-ui-express';
import { freshStack, layoutApp, rawGet, serve, VERSIONS } from '../support/neighbours.js';
import { expectSpecHeaders, PRESENT } from '../support/spec-headers.js';

// The rest of what teams run next to the preset: validators, API docs,
// server-sent events, large streamed answers, metrics, and helmet and cors
// mounted again by a team that already had them.

describe.each(VERSIONS)('on %s', (version) => {
  describe('express-validator', () => {
    it('refuses an invalid body with 400 in the error shape, and takes a valid one', async () => {
      const { app } = layoutApp(freshStack(version), 'neighbour before the preset', [], (target: Express) => {
        target.post('/v1/users', body('email').isEmail(), (req, res) => {
          const result = validationResult(req);
          if (!result.isEmpty()) {
            res.status(400).json({ errors: result.array().map((e) => ({ message: String(e.msg), code: 40000 })) });
            return;
          }
          res.status(201).json({ email: (req.body as { email: string }).email });
        });
      });
      const served = await serve(app);
      try {
        const json = { 'content-type': 'application/json' };
        const bad = await served.fetch('/v1/users', { method: 'POST', body: '{"email":"nope"}', headers: json });
        expect(bad.status).toBe(400);
        expect(JSON.parse(bad.text)).toEqual({ errors: [{ message: 'Invalid value', code: 40000 }] });
        expectSpecHeaders(bad.headers);
        const good = await served.fetch('/v1/users', { method: 'POST', body: '{"email":"ada@example.com"}', headers: json });
        expect(good.status).toBe(201);
        expectSpecHeaders(good.headers);
      } finally {
        await served.close();
      }
    });
  });

  describe('swagger-ui-express', () => {
    it("serves its page and scripts from 'self', with every header of the conventions", async () => {
      const spec = { openapi: '3.0.3', info: { title: 'Neighbours', version: '1' }, paths: {} };
      const { app } = layoutApp(freshStack(version), 'neighbour before the preset', [], (target: Express) => {
        target.use('/docs', swaggerUi.serve, swaggerUi.setup(spec));
      });
      const served = await serve(app);
      try {
        const page = await served.fetch('/docs/');
        expect(page.status).toBe(200);
        expect(page.headers['content-type']).toMatch(/^text\/html/);
        expect(page.text).toContain('swagger-ui-bundle.js');
        // CSP script-src 'self': the page may load scripts from itself, never inline ones.
        expect(page.text).not.toMatch(/<script>(?!\s*<\/script>)/);
        expectSpecHeaders(page.headers, { json: false, cacheControl: PRESENT });
        const init = await served.fetch('/docs/swagger-ui-init.js');
        expect(init.status).toBe(200);
        expect(init.text).toContain('"title": "Neighbours"');
        expectSpecHeaders(init.headers, { json: false, cacheControl: PRESENT });
      } finally {
        await served.close();
      }
    });
  });

  describe('server-sent events with flushHeaders()', () => {
    it('streams the events, and the head flushed first carries every header of the conventions', async () => {
      const { app } = layoutApp(freshStack(version), 'neighbour before the preset', [], (target: Express) => {
        target.get('/v1/events', (_req, res) => {
          res.setHeader('Content-Type', 'text/event-stream');
          res.setHeader('Cache-Control', 'no-cache');
          res.flushHeaders();
          let sent = 0;
          const timer = setInterval(() => {
            sent++;
            res.write(`id: ${sent}\ndata: {"n":${sent}}\n\n`);
            if (sent === 3) {
              clearInterval(timer);
              res.end();
            }
          }, 20);
        });
      });
      const served = await serve(app);
      try {
        const { headers, events } = await new Promise<{ headers: http.IncomingHttpHeaders; events: string[] }>(
          (resolve, reject) => {
            const req = http.get(`${served.url}/v1/events`, { timeout: 5_000 }, (res) => {
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => {
                text += chunk;
              });
              res.on('end', () => resolve({ headers: res.headers, events: text.split('\n\n').filter(Boolean) }));
            });
            req.on('timeout', () => req.destroy(new Error('no events in 5 s')));
            req.on('error', reject);
          },
        );
        expect(events).toEqual(['id: 1\ndata: {"n":1}', 'id: 2\ndata: {"n":2}', 'id: 3\ndata: {"n":3}']);
        expect(headers['content-type']).toBe('text/event-stream');
        expectSpecHeaders(headers, { json: false, cacheControl: 'no-cache' });
      } finally {
        await served.close();
      }
    });
  });

  describe('a large streamed response', () => {
    it('arrives whole (8 MiB in 64 KiB chunks), with every header of the conventions', async () => {
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const count = 128;
      const { app } = layoutApp(freshStack(version), 'neighbour before the preset', [], (target: Express) => {
        target.get('/v1/exports/big', (_req, res) => {
          res.setHeader('Content-Type', 'application/octet-stream');
          Readable.from(
            (function* chunks() {
              for (let i = 0; i < count; i++) yield chunk;
            })(),
          ).pipe(res);
        });
      });
      const served = await serve(app);
      try {
        const got = await rawGet(`${served.url}/v1/exports/big`);
        expect(got.status).toBe(200);
        expect(got.body.length).toBe(chunk.length * count);
        expect(got.headers['transfer-encoding']).toBe('chunked');
        expectSpecHeaders(got.headers, { json: false });
      } finally {
        await served.close();
      }
    });
  });

  describe('express-prom-bundle (prom-client)', () => {
    it('counts answers by status and route, and its answers carry every header of the conventions', async () => {
      promClient.register.clear();
      const metrics = promBundle({ includeMethod: true, includePath: true });
      const { app } = layoutApp(freshStack(version), 'neighbour before the preset', [metrics], (target: Express) => {
        target.get('/v1/users/:id', (_req, res) => {
          res.json({ id: 1 });
        });
      });
      const served = await serve(app);
      try {
        for (let i = 0; i < 2; i++) expectSpecHeaders((await served.fetch('/v1/users/1')).headers);
        const scraped = await served.fetch('/metrics');
        expect(scraped.status).toBe(200);
        expect(scraped.text).toMatch(/http_request_duration_seconds_count\{[^}]*status_code="200"[^}]*\} 2/);
      } finally {
        await served.close();
      }
    });
  });

  describe('helmet and cors mounted again by the team', () => {
    // Order means precedence: helmet in front (the team's own, with its defaults) is replaced by the
    // conventions' values, in the app and when the preset runs in a sub-app under the helmet of the parent.
    it.each(['neighbour before the preset', 'preset in a sub-app, neighbour in the parent'] as const)(
      "%s: the conventions' security values replace helmet's, from the first request; CORS answers",
      async (layout) => {
        const origin = 'https://app.example';
        const { app, base } = layoutApp(
          freshStack(version),
          layout,
          [helmet(), cors({ origin, credentials: true })],
          (target: Express) => {
            target.get('/v1/users/:id', (_req, res) => {
              res.json({ id: 1 });
            });
          },
        );
        const served = await serve(app);
        try {
          for (let i = 0; i < 2; i++) {
            const res = await served.fetch(`${base}/v1/users/1`, { headers: { origin } });
            expect(res.status).toBe(200);
            expect(res.headers['access-control-allow-origin']).toBe(origin);
            expect(res.headers['access-control-allow-credentials']).toBe('true');
            expectSpecHeaders(res.headers);
          }
        } finally {
          await served.close();
        }
      },
    );

    it("lets a route's own Content-Security-Policy win, helmet in front or not", async () => {
      for (const neighbours of [[], [helmet()]]) {
        const { app } = layoutApp(freshStack(version), 'neighbour before the preset', neighbours, (target: Express) => {
          target.get('/v1/widgets/:id', (_req, res) => {
            res.set('Content-Security-Policy', "default-src 'none'");
            res.json({ id: 1 });
          });
        });
        const served = await serve(app);
        try {
          const res = await served.fetch('/v1/widgets/1');
          expectSpecHeaders(res.headers, { security: { 'Content-Security-Policy': "default-src 'none'" } });
        } finally {
          await served.close();
        }
      }
    });
  });
});
