import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import { createProxyMiddleware, fixRequestBody } from 'http-proxy-middleware';
import type { ConventionsOptions } from '../../src/index.js';
import { freshStack, serve, VERSIONS } from '../support/neighbours.js';
import { closeServer, freePort } from '../support/services.js';
import { expectSpecHeaders } from '../support/spec-headers.js';

// http-proxy-middleware streams the request body to the upstream; the
// preset's body parsers must not have read it first. Two ways, both through
// a real proxy to a real upstream on 127.0.0.1: the preset told to leave the
// proxied paths unparsed, or http-proxy-middleware's own fixRequestBody,
// which writes the parsed body again.

// ADAPT HERE (the one place): the parseBodies option that leaves the bodies
// of some paths unparsed. Its name is not final in the library yet.
const LEAVE_PROXIED_UNPARSED: ConventionsOptions = { parseBodies: { unparsedPaths: ['/proxied'] } };

const ORDER = { id: 42, items: [{ sku: 'a-1', quantity: 2 }], note: 'fragile <glass>' };

let upstream: Server;
let upstreamUrl: string;
beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received = Buffer.concat(chunks).toString('utf8');
      res.writeHead(201, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-cache' });
      res.end(JSON.stringify({ method: req.method, path: req.url, contentType: req.headers['content-type'], received }));
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => upstream.listen(port, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${port}`;
});
afterAll(() => closeServer(upstream));

const post = (body: string) => ({
  method: 'POST',
  body,
  headers: { 'content-type': 'application/json' },
  signal: AbortSignal.timeout(5_000),
});

describe.each(VERSIONS)('on %s', (version) => {
  const appWith = (options: ConventionsOptions, onProxyReq?: typeof fixRequestBody): Express => {
    const { express, library } = freshStack(version);
    const app = express();
    app.use(library.conventions(options));
    app.use('/proxied', createProxyMiddleware({ target: upstreamUrl, on: onProxyReq ? { proxyReq: onProxyReq } : {} }));
    app.post('/v1/local', (req, res) => {
      res.status(201).json({ parsed: req.body });
    });
    app.use(library.notFound(), library.errorHandler({ log: false }));
    return app;
  };

  it("passes a JSON POST intact when the preset leaves the proxied paths unparsed, and still parses the app's own", async () => {
    const served = await serve(appWith(LEAVE_PROXIED_UNPARSED));
    try {
      const body = JSON.stringify(ORDER);
      const res = await served.fetch('/proxied/v1/orders', post(body));
      expect(res.status).toBe(201);
      expect(JSON.parse(res.text)).toEqual({
        method: 'POST',
        path: '/v1/orders',
        contentType: 'application/json',
        received: body,
      });
      expectSpecHeaders(res.headers, { cacheControl: 'no-cache' });
      const local = await served.fetch('/v1/local', post(body));
      expect(JSON.parse(local.text)).toEqual({ parsed: ORDER });
    } finally {
      await served.close();
    }
  });

  it("passes a JSON POST intact with http-proxy-middleware's fixRequestBody", async () => {
    const served = await serve(appWith({}, fixRequestBody));
    try {
      const res = await served.fetch('/proxied/v1/orders', post(JSON.stringify(ORDER)));
      expect(res.status).toBe(201);
      const echoed = JSON.parse(res.text) as { received: string; path: string };
      expect(echoed.path).toBe('/v1/orders');
      expect(JSON.parse(echoed.received)).toEqual(ORDER);
      expectSpecHeaders(res.headers, { cacheControl: 'no-cache' });
    } finally {
      await served.close();
    }
  });
});
