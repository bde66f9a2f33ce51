import http, { type IncomingHttpHeaders } from 'node:http';
import express, { type Express, type RequestHandler } from 'express';
import request from 'supertest';
import { caching } from '../src/caching/index.js';
import { conventions } from '../src/index.js';
import { rateLimit } from '../src/rate-limit/index.js';
import { securityHeaders } from '../src/security/index.js';
import { closeServer, listen } from './support/services.js';

// The preset writes its headers with setHeader() while the response is open,
// and its head defaults with the head (src/http/response-headers.ts). Routes
// and other middlewares read, replace and remove them as usual, a default
// yields to a value set by the time of the head, the head carries each header
// once, and after the answer went out a logger still reads what was sent.

const USER = { id: 7, name: 'Ada' };

/** The preset with its defaults, then `route` at GET /thing. */
function presetApp(route: RequestHandler, before: RequestHandler[] = []): Express {
  const app = express();
  if (before.length > 0) app.use(...before);
  app.use(conventions({ corsPolicy: { origins: ['https://app.example'] } }));
  app.get('/thing', route);
  return app;
}

interface RawAnswer {
  status: number;
  /** Name and value of every header line, in the order sent. */
  lines: [string, string][];
  headers: IncomingHttpHeaders;
  body: string;
}

/** Three requests on one keep-alive connection (the first differs: Express's X-Powered-By), answers as sent. */
async function rawAnswers(app: Express, path = '/thing', count = 3): Promise<RawAnswer[]> {
  const { server, url } = await listen(app);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const answers: RawAnswer[] = [];
    for (let i = 0; i < count; i++) {
      answers.push(
        await new Promise<RawAnswer>((resolve, reject) => {
          http
            .get(`${url}${path}`, { agent, headers: { Origin: 'https://app.example' } }, (res) => {
              let body = '';
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => {
                body += chunk;
              });
              res.on('end', () => {
                const lines: [string, string][] = [];
                for (let j = 0; j < res.rawHeaders.length; j += 2)
                  lines.push([res.rawHeaders[j] as string, res.rawHeaders[j + 1] as string]);
                resolve({ status: res.statusCode ?? 0, lines, headers: res.headers, body });
              });
            })
            .on('error', reject);
        }),
      );
    }
    return answers;
  } finally {
    agent.destroy();
    await closeServer(server);
  }
}

const namesOf = (answer: RawAnswer): string[] => answer.lines.map(([name]) => name.toLowerCase());

describe('the response headers of the preset', () => {
  it('sends every header of the preset once, on the first response of a connection and on later ones', async () => {
    const answers = await rawAnswers(presetApp((_req, res) => res.json(USER)));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      const names = namesOf(answer);
      expect(new Set(names).size).toBe(names.length);
      expect(names).not.toContain('x-powered-by');
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers['x-frame-options']).toBe('deny');
      expect(answer.headers['cache-control']).toBe('no-store, max-age=0');
      expect(answer.headers.vary).toBe('Origin');
      expect(answer.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(answer.body)));
      expect(answer.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(answer.headers.date).toBeDefined();
      expect(JSON.parse(answer.body)).toEqual(USER);
    }
    // The same headers in the same order on the first response (Express had set X-Powered-By) and later.
    expect(namesOf(answers[0] as RawAnswer)).toEqual(namesOf(answers[2] as RawAnswer));
  });

  it("removes X-Powered-By from every answer and leaves the app's x-powered-by setting as the app set it", async () => {
    const app = presetApp((_req, res) => res.json(USER));
    expect(app.enabled('x-powered-by')).toBe(true);
    for (let i = 0; i < 2; i++) {
      const answer = await request(app).get('/thing').expect(200);
      expect(answer.headers['x-powered-by']).toBeUndefined();
    }
    expect(app.enabled('x-powered-by')).toBe(true);
  });

  it("lets a route read the preset's facts and fixed defaults in any case of the name; Cache-Control's default only once the head is written", async () => {
    const seen: Record<string, unknown> = {};
    const app = presetApp((_req, res) => {
      seen.cacheControl = res.getHeader('Cache-Control');
      seen.lower = res.get('cache-control');
      seen.vary = res.getHeader('VARY');
      seen.frame = res.getHeader('x-frame-options');
      seen.hasNosniff = res.hasHeader('X-Content-Type-Options');
      seen.hasMissing = res.hasHeader('X-Not-There');
      seen.rateLimit = res.getHeader('RateLimit');
      res.json(USER);
    });
    const answer = await request(app).get('/thing').set('Origin', 'https://app.example').expect(200);
    expect(seen).toEqual({
      cacheControl: undefined,
      lower: undefined,
      vary: 'Origin',
      frame: 'deny',
      hasNosniff: true,
      hasMissing: false,
      rateLimit: expect.stringMatching(/^"user";r=\d+;t=\d+;pk=:[^:]+:, "application";r=\d+;t=\d+;pk=:[^:]+:$/),
    });
    expect(answer.headers['cache-control']).toBe('no-store, max-age=0');
    expect(answer.headers['x-frame-options']).toBe('deny');
  });

  it("lets a route replace, append to and remove the preset's headers", async () => {
    const app = presetApp((_req, res) => {
      res.set('Cache-Control', 'public, max-age=60');
      res.removeHeader('X-Frame-Options');
      res.vary('Accept-Language');
      res.append('RateLimit', '"extra";r=1;t=1');
      res.json(USER);
    });
    const [answer] = await rawAnswers(app, '/thing', 1);
    expect(answer?.headers['cache-control']).toBe('public, max-age=60');
    expect(answer?.headers['x-frame-options']).toBeUndefined();
    expect(answer?.headers.vary).toBe('Origin, Accept-Language');
    const rateLimitLines = answer?.lines.filter(([name]) => name === 'RateLimit').map(([, value]) => value);
    expect(rateLimitLines).toEqual([expect.stringMatching(/^"user";/), '"extra";r=1;t=1']);
    expect(answer?.headers.etag).toMatch(/^"/);
  });

  it("keeps a route's own value of a default header, and a default it removed stays off", async () => {
    const app = presetApp((_req, res) => {
      res.setHeader('X-Frame-Options', 'sameorigin');
      res.removeHeader('Referrer-Policy');
      res.removeHeader('Cross-Origin-Embedder-Policy');
      res.setHeader('Referrer-Policy', 'same-origin');
      res.json(USER);
    });
    const [answer] = await rawAnswers(app, '/thing', 1);
    expect(answer?.headers['x-frame-options']).toBe('sameorigin');
    expect(answer?.headers['referrer-policy']).toBe('same-origin');
    expect(answer?.headers['cross-origin-embedder-policy']).toBeUndefined();
    expect(answer?.headers['cache-control']).toBe('no-store, max-age=0');
    expect(new Set(namesOf(answer as RawAnswer)).size).toBe(answer?.lines.length);
  });

  it("gives getHeaders() and getHeaderNames() the preset's facts with the route's own (Cache-Control's default comes with the head)", async () => {
    let names: string[] = [];
    let headers: Record<string, unknown> = {};
    const app = presetApp((_req, res) => {
      res.setHeader('X-Route', 'yes');
      names = res.getHeaderNames();
      headers = res.getHeaders();
      res.json(USER);
    });
    await request(app).get('/thing').set('Origin', 'https://app.example').expect(200);
    expect(names).toEqual(expect.arrayContaining(['vary', 'ratelimit', 'x-route']));
    expect(names).not.toContain('cache-control');
    expect(headers).toMatchObject({ 'x-route': 'yes', vary: 'Origin' });
  });

  it('lets a logger read what was sent once the answer is out', async () => {
    const after: Record<string, unknown>[] = [];
    const logger: RequestHandler = (_req, res, next) => {
      res.on('finish', () => {
        after.push({
          length: res.getHeader('content-length'),
          type: res.getHeader('Content-Type'),
          has: res.hasHeader('etag'),
          names: res.getHeaderNames(),
          // Node 18.15+; not in the @types/node this project builds with.
          raw: (res as unknown as { getRawHeaderNames(): string[] }).getRawHeaderNames(),
          headers: res.getHeaders(),
        });
      });
      next();
    };
    const answers = await rawAnswers(
      presetApp((_req, res) => res.json(USER), [logger]),
      '/thing',
      2,
    );
    expect(after).toHaveLength(2);
    for (const [i, seen] of after.entries()) {
      const answer = answers[i] as RawAnswer;
      // As Node answers once the head went through setHeader(): the length as a number.
      expect(seen.length).toBe(Number(answer.headers['content-length']));
      expect(seen.type).toBe('application/json; charset=utf-8');
      expect(seen.has).toBe(true);
      expect(seen.raw).toEqual(
        answer.lines.map(([name]) => name).filter((name) => name !== 'Date' && name !== 'Connection' && name !== 'Keep-Alive'),
      );
      expect(seen.names).toEqual((seen.raw as string[]).map((name) => name.toLowerCase()));
      expect((seen.headers as Record<string, unknown>)['cache-control']).toBe('no-store, max-age=0');
    }
  });

  it("sends the preset's headers with a route's own writeHead(status, headers)", async () => {
    const app = presetApp((_req, res) => {
      res.writeHead(202, { 'X-Route': 'yes', 'Cache-Control': 'no-cache' });
      res.end('accepted');
    });
    const [answer] = await rawAnswers(app, '/thing', 1);
    expect(answer?.status).toBe(202);
    expect(answer?.headers['x-route']).toBe('yes');
    expect(answer?.headers['cache-control']).toBe('no-cache');
    expect(answer?.headers['x-frame-options']).toBe('deny');
    expect(answer?.body).toBe('accepted');
  });

  it("sends the preset's headers with Express's res.send() and res.end() alone", async () => {
    const app = express();
    app.use(conventions());
    app.get('/send', (_req, res) => {
      res.type('text/plain').send('plain');
    });
    app.get('/end', (_req, res) => {
      res.end();
    });
    for (const path of ['/send', '/end']) {
      const [answer] = await rawAnswers(app, path, 1);
      expect(answer?.status).toBe(200);
      expect(answer?.headers['x-content-type-options']).toBe('nosniff');
      expect(answer?.headers['strict-transport-security']).toBe('max-age=63072000; includeSubDomains');
      expect(answer?.headers['cache-control']).toBe('no-store, max-age=0');
      expect(new Set(namesOf(answer as RawAnswer)).size).toBe(answer?.lines.length);
    }
  });

  it("keeps a header a middleware before it set over the preset's default", async () => {
    const early: RequestHandler = (_req, res, next) => {
      res.setHeader('Cache-Control', 'public, max-age=600');
      res.setHeader('X-Request-Id', 'abc');
      next();
    };
    const [answer] = await rawAnswers(
      presetApp((_req, res) => res.json(USER), [early]),
      '/thing',
      1,
    );
    expect(answer?.headers['cache-control']).toBe('public, max-age=600');
    expect(answer?.headers['x-frame-options']).toBe('deny');
    expect(answer?.headers['x-request-id']).toBe('abc');
    expect(new Set(namesOf(answer as RawAnswer)).size).toBe(answer?.lines.length);
  });

  it('composes two rate limiters into one field line each, as res.append() does', async () => {
    const app = express();
    app.use(rateLimit({ user: { name: 'a', limit: 10 }, application: false }));
    app.use(rateLimit({ user: { name: 'b', limit: 20 }, application: false }));
    app.get('/thing', (_req, res) => {
      res.json(USER);
    });
    const [answer] = await rawAnswers(app, '/thing', 1);
    const policies = answer?.lines.filter(([name]) => name === 'RateLimit-Policy').map(([, value]) => value);
    expect(policies).toEqual([expect.stringMatching(/^"a";q=10;w=60/), expect.stringMatching(/^"b";q=20;w=60/)]);
  });

  it('works in a mounted sub-app and leaves responses that never passed the preset alone', async () => {
    const api = express();
    api.use(conventions());
    api.get('/thing', (_req, res) => {
      res.json(USER);
    });
    const app = express();
    app.get('/outside', (_req, res) => {
      res.setHeader('X-Outside', '1');
      res.send('outside');
    });
    app.use('/api', api);
    const [inside] = await rawAnswers(app, '/api/thing', 1);
    expect(inside?.headers['x-frame-options']).toBe('deny');
    expect(inside?.headers['content-type']).toBe('application/json; charset=utf-8');
    const outside = await request(app).get('/outside').expect(200);
    expect(outside.headers['x-outside']).toBe('1');
    expect(outside.headers['x-frame-options']).toBeUndefined();
  });

  it('writes straight to the response when it was not made by an Express app', async () => {
    const headersOnly = securityHeaders();
    const cache = caching();
    const handler: http.RequestListener = (req, res) => {
      headersOnly(req as never, res as never, () => {
        cache(req as never, res as never, () => {
          res.end('{}');
        });
      });
    };
    const { server, url } = await listen(handler);
    try {
      const answer = await fetch(`${url}/`);
      expect(answer.headers.get('cache-control')).toBe('no-store, max-age=0');
      expect(answer.headers.get('x-frame-options')).toBe('deny');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    } finally {
      await closeServer(server);
    }
  });

  it('compares names as Node does: ASCII letters without case, nothing else', async () => {
    const app = presetApp((_req, res) => {
      res.json({
        upper: res.getHeader('RATELIMIT-POLICY'),
        mixed: res.getHeader('rAtElImIt-PoLiCy'),
        // '-' and '\r' differ by 0x20 as letters of two cases do.
        folded: res.hasHeader('RateLimit\rPolicy'),
      });
    });
    const answer = await request(app).get('/thing').expect(200);
    const policy = answer.headers['ratelimit-policy'];
    expect(answer.body).toEqual({ upper: policy, mixed: policy, folded: false });
  });
});
