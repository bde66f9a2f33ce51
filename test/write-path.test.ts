import http from 'node:http';
import { Writable } from 'node:stream';
import compression from 'compression';
import express, { type Express, type RequestHandler } from 'express';
import session from 'express-session';
import express4 from 'express4';
import morgan from 'morgan';
import onHeaders from 'on-headers';
import { pinoHttp } from 'pino-http';
import { apiError, conventions, errorHandler } from '../src/index.js';
import { closeServer, listen } from './support/services.js';
import { SPEC_SECURITY_HEADERS } from './support/spec-headers.js';

// The preset's headers reach the wire whatever wrapped writeHead before or
// after it (the on-headers pattern of morgan, express-session, compression,
// response-time), on the first request of a fresh app and on later ones, in
// an app and in a sub-app; header reads after the answer went out answer what
// was sent and never throw.

const SPEC_HEADERS: Record<string, string> = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store, max-age=0',
  ...Object.fromEntries(Object.entries(SPEC_SECURITY_HEADERS).map(([name, value]) => [name.toLowerCase(), value])),
};

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  rawNames: string[];
  body: string;
}

/** `count` GETs of `path` on one keep-alive connection, answers as sent. */
async function answers(
  app: http.RequestListener,
  path: string,
  count = 3,
  headers: http.OutgoingHttpHeaders = {},
): Promise<Answer[]> {
  const { server, url } = await listen(app);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const out: Answer[] = [];
    for (let i = 0; i < count; i++) {
      out.push(
        await new Promise<Answer>((resolve, reject) => {
          http
            .get(`${url}${path}`, { agent, headers }, (res) => {
              let body = '';
              res.setEncoding('latin1');
              res.on('data', (chunk: string) => {
                body += chunk;
              });
              res.on('end', () =>
                resolve({
                  status: res.statusCode ?? 0,
                  headers: res.headers,
                  rawNames: res.rawHeaders.filter((_, j) => j % 2 === 0).map((name) => name.toLowerCase()),
                  body,
                }),
              );
            })
            .on('error', reject);
        }),
      );
    }
    return out;
  } finally {
    agent.destroy();
    await closeServer(server);
  }
}

function expectSpecHeaders(answer: Answer, except: string[] = []): void {
  for (const [name, value] of Object.entries(SPEC_HEADERS)) {
    if (except.includes(name)) continue;
    expect({ name, value: answer.headers[name] }).toEqual({ name, value });
  }
  expect(answer.headers.ratelimit).toMatch(/^"user";r=\d+;t=\d+/);
  expect(answer.headers['ratelimit-policy']).toMatch(/^"user";q=100;w=60/);
  // Each header once.
  expect(new Set(answer.rawNames).size).toBe(answer.rawNames.length);
}

const nullStream = (): Writable =>
  new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });

const sessionMiddleware = (): RequestHandler =>
  session({ secret: 'test-secret', resave: false, saveUninitialized: true, cookie: { httpOnly: true } }) as RequestHandler;

type Factory = typeof express;

/** An on-headers hook that only wraps writeHead, as response-time or a metrics middleware does. */
const hookOnly: RequestHandler = (_req, res, next) => {
  onHeaders(res, () => undefined);
  next();
};

const layouts = (make: Factory) => ({
  /** The neighbours, then the preset, in one app. */
  inApp(neighbours: RequestHandler[]): Express {
    const app = make();
    app.use(...neighbours);
    app.use(conventions());
    app.get('/api/thing', (_req, res) => {
      res.json({ id: 1 });
    });
    return app as Express;
  },
  /** The neighbours in the parent, the preset in a sub-app at /api. */
  inSubApp(neighbours: RequestHandler[]): Express {
    const app = make();
    app.use(...neighbours);
    const api = make();
    api.use(conventions());
    api.get('/thing', (_req, res) => {
      res.json({ id: 1 });
    });
    app.use('/api', api);
    return app as Express;
  },
});

describe.each([
  ['Express 5', express],
  ['Express 4', express4 as unknown as Factory],
])('the preset after writeHead wrappers (%s)', (_major, make) => {
  const { inApp, inSubApp } = layouts(make);
  const wrappers: [string, () => RequestHandler[]][] = [
    ['on-headers', () => [hookOnly]],
    ['morgan', () => [morgan('tiny', { stream: nullStream() })]],
    ['express-session', () => [sessionMiddleware()]],
    ['compression', () => [compression() as RequestHandler]],
  ];

  it.each(wrappers)(
    'sends every header of the conventions with %s in front, first request and later ones',
    async (_name, neighbours) => {
      for (const app of [inApp(neighbours()), inSubApp(neighbours())]) {
        for (const answer of await answers(app, '/api/thing')) {
          expect(answer.status).toBe(200);
          expectSpecHeaders(answer);
          expect(answer.body).toBe('{"id":1}');
        }
      }
    },
  );

  it('keeps the process up with pino-http and express-session in front, and logs what was sent', async () => {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    });
    const neighbours = (): RequestHandler[] => [pinoHttp({ stream }) as unknown as RequestHandler, sessionMiddleware()];
    for (const app of [inApp(neighbours()), inSubApp(neighbours())]) {
      for (const answer of await answers(app, '/api/thing')) expectSpecHeaders(answer);
    }
    expect(lines).toHaveLength(6);
    for (const line of lines) {
      const res = line.res as { statusCode: number; headers: Record<string, unknown> };
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('logs with morgan the Content-Type that was sent', async () => {
    const logged: string[] = [];
    const log = morgan(':status :res[content-type]', { stream: { write: (line: string) => logged.push(line.trim()) } });
    for (const app of [inApp([log]), inSubApp([log])]) await answers(app, '/api/thing', 2);
    expect(logged).toEqual(Array(4).fill('200 application/json; charset=utf-8'));
  });
});

describe('header reads after the answer went out', () => {
  it('never throw, and answer what was sent', async () => {
    const seen: unknown[] = [];
    const errors: unknown[] = [];
    const app = express();
    app.use((_req, res, next) => {
      res.on('finish', () => {
        try {
          seen.push({ headers: res.getHeaders(), names: res.getHeaderNames(), type: res.getHeader('content-type') });
        } catch (error) {
          errors.push(error);
        }
      });
      next();
    });
    app.use(hookOnly);
    app.use(conventions());
    app.get('/thing', (_req, res) => {
      res.json({ id: 1 });
    });
    const sent = await answers(app, '/thing', 2);
    expect(errors).toEqual([]);
    expect(seen).toHaveLength(2);
    for (const [i, read] of (seen as { headers: Record<string, unknown>; type: unknown }[]).entries()) {
      expect(read.type).toBe(sent[i]?.headers['content-type']);
      expect(read.headers['x-frame-options']).toBe('deny');
    }
  });
});

describe('wrappers after the preset, and writers that go around it', () => {
  it('sends the headers a wrapper mounted after the preset sets in its hook, with every header of the conventions', async () => {
    const app = express();
    app.use(conventions());
    app.use((_req, res, next) => {
      onHeaders(res, function (this: typeof res) {
        this.setHeader('Server-Timing', 'app;dur=1');
      });
      next();
    });
    app.get('/thing', (_req, res) => {
      res.json({ id: 1 });
    });
    for (const answer of await answers(app, '/thing', 2)) {
      expectSpecHeaders(answer);
      expect(answer.headers['server-timing']).toBe('app;dur=1');
    }
  });

  it('secures a cookie a route writes with its own writeHead(status, headers)', async () => {
    const app = express();
    app.use(conventions());
    app.get('/thing', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Set-Cookie': 'pref=dark; Path=/' });
      res.end('ok');
    });
    const [answer] = await answers(app, '/thing', 1);
    expect(answer?.headers['set-cookie']).toEqual(['pref=dark; Path=/; Secure; HttpOnly']);
    expect(answer?.headers['x-frame-options']).toBe('deny');
  });

  it('secures a cookie an error carries, written by errorHandler()', async () => {
    const app = express();
    app.use(conventions());
    app.get('/thing', () => {
      throw apiError('unauthenticated', { headers: { 'Set-Cookie': 'sid=; Max-Age=0; Path=/' } });
    });
    app.use(errorHandler({ log: false }));
    for (const answer of await answers(app, '/thing', 2)) {
      expect(answer.status).toBe(401);
      expect(answer.headers['set-cookie']).toEqual(['sid=; Max-Age=0; Path=/; Secure; HttpOnly']);
      expect(answer.headers['x-frame-options']).toBe('deny');
    }
  });

  it('never throws when a middleware writes the head around the preset, and says so once', async () => {
    const emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const app = express();
      app.use(conventions());
      app.use((_req, res, next) => {
        // Replaces writeHead without calling the one it found: Node's own, straight.
        res.writeHead = function (this: typeof res, status: number) {
          return http.ServerResponse.prototype.writeHead.call(this, status);
        } as typeof res.writeHead;
        next();
      });
      const reads: unknown[] = [];
      app.get('/thing', (_req, res) => {
        res.on('finish', () => reads.push(res.getHeaders()));
        res.json({ id: 1 });
      });
      const [answer] = await answers(app, '/thing', 1);
      expect(answer?.status).toBe(200);
      await new Promise((resolve) => setImmediate(resolve));
      expect(reads).toHaveLength(1);
      expect(emitWarning).toHaveBeenCalledWith(expect.stringContaining('without calling the one it found'), {
        code: 'EAC_HEAD_WENT_AROUND',
      });
    } finally {
      emitWarning.mockRestore();
    }
  });
});
