import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Express } from 'express';
import serveStatic from 'serve-static';
import { freshStack, layoutApp, rawGet, serve, VERSIONS } from '../support/neighbours.js';
import { expectSpecHeaders, PRESENT } from '../support/spec-headers.js';

// Static files through the preset come with their bytes, their validators,
// 304 and ranges, and the Cache-Control their server was told to send: the
// preset's `no-store, max-age=0` is a default, and yields to it. Every other
// header of the conventions is on them.

const dir = mkdtempSync(join(tmpdir(), 'eac-static-'));
const BYTES = randomBytes(20_000);
writeFileSync(join(dir, 'report.bin'), BYTES);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A static server mounted before the preset answers without it: mount it after.
const LAYOUTS = ['preset before the neighbour'] as const;

describe.each(VERSIONS)('on %s', (version) => {
  describe.each(LAYOUTS)('with the %s', (layout) => {
    const cases = [
      {
        name: "serve-static({ maxAge: '1h', immutable: true })",
        mount: (_stack: ReturnType<typeof freshStack>) => serveStatic(dir, { maxAge: '1h', immutable: true }),
        path: '/assets/report.bin',
        cacheControl: 'public, max-age=3600, immutable',
      },
      {
        name: 'express.static() with its defaults',
        mount: (stack: ReturnType<typeof freshStack>) => stack.express.static(dir),
        path: '/assets/report.bin',
        cacheControl: 'public, max-age=0',
      },
    ];
    describe.each(cases)('$name', ({ mount, path, cacheControl }) => {
      let served: Awaited<ReturnType<typeof serve>>;
      beforeEach(async () => {
        const stack = freshStack(version);
        const { app } = layoutApp(stack, layout, [], (target: Express) => {
          target.use('/assets', mount(stack));
        });
        served = await serve(app);
      });
      afterEach(() => served.close());

      it('serves the bytes with its own Cache-Control and every header of the conventions', async () => {
        for (let i = 0; i < 2; i++) {
          const got = await rawGet(`${served.url}${path}`);
          expect(got.status).toBe(200);
          expect(got.body.equals(BYTES)).toBe(true);
          expect(got.headers['content-type']).toBe('application/octet-stream');
          expectSpecHeaders(got.headers, { json: false, cacheControl });
        }
      });

      it('answers 304 to its own ETag and 206 to a range', async () => {
        const first = await rawGet(`${served.url}${path}`);
        const tag = String(first.headers.etag);
        expect(tag).toMatch(/^(W\/)?"[^"]+"$/);
        const again = await rawGet(`${served.url}${path}`, { 'if-none-match': tag });
        expect(again.status).toBe(304);
        expect(again.body.length).toBe(0);
        expectSpecHeaders(again.headers, { json: false, cacheControl });
        const range = await rawGet(`${served.url}${path}`, { range: 'bytes=100-199' });
        expect(range.status).toBe(206);
        expect(range.headers['content-range']).toBe(`bytes 100-199/${BYTES.length}`);
        expect(range.body.equals(BYTES.subarray(100, 200))).toBe(true);
        expectSpecHeaders(range.headers, { json: false, cacheControl });
      });
    });
  });

  describe('res.sendFile() and res.download() in a route after the preset', () => {
    let served: Awaited<ReturnType<typeof serve>>;
    beforeEach(async () => {
      const { app } = layoutApp(freshStack(version), 'neighbour before the preset', [], (target: Express) => {
        target.get('/v1/reports/latest', (_req, res, next) => {
          res.sendFile(join(dir, 'report.bin'), { maxAge: 60_000 }, (error) => error && next(error));
        });
        target.get('/v1/reports/latest/download', (_req, res, next) => {
          res.download(join(dir, 'report.bin'), 'report.bin', (error) => error && next(error));
        });
      });
      served = await serve(app);
    });
    afterEach(() => served.close());

    it('sendFile keeps its public, max-age and sends the bytes, 304 and ranges', async () => {
      const got = await rawGet(`${served.url}/v1/reports/latest`);
      expect(got.status).toBe(200);
      expect(got.body.equals(BYTES)).toBe(true);
      expectSpecHeaders(got.headers, { json: false, cacheControl: 'public, max-age=60' });
      const again = await rawGet(`${served.url}/v1/reports/latest`, { 'if-none-match': String(got.headers.etag) });
      expect(again.status).toBe(304);
      expectSpecHeaders(again.headers, { json: false, cacheControl: 'public, max-age=60' });
      const range = await rawGet(`${served.url}/v1/reports/latest`, { range: 'bytes=0-9' });
      expect(range.status).toBe(206);
      expect(range.body.equals(BYTES.subarray(0, 10))).toBe(true);
    });

    it('download sends the bytes as an attachment with every header of the conventions', async () => {
      const got = await rawGet(`${served.url}/v1/reports/latest/download`);
      expect(got.status).toBe(200);
      // content-disposition quotes the name only where it must (a token needs no quotes).
      expect(got.headers['content-disposition']).toMatch(/^attachment; filename=("report\.bin"|report\.bin)$/);
      expect(got.body.equals(BYTES)).toBe(true);
      expectSpecHeaders(got.headers, { json: false, cacheControl: PRESENT });
    });
  });
});
