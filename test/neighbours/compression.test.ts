import { gunzipSync } from 'node:zlib';
import compression from 'compression';
import type { Express } from 'express';
import { freshStack, LAYOUTS, layoutApp, rawGet, serve, VERSIONS } from '../support/neighbours.js';
import { expectSpecHeaders } from '../support/spec-headers.js';

// compression replaces res.write/end and sets Content-Encoding and Vary from
// a per-response writeHead hook. With it, JSON still comes with every
// header of the conventions, and the gzip and identity bodies of one resource never
// share one strong ETag (RFC 9110 §8.8.3: a strong validator names one
// exact sequence of bytes); a conditional GET with either answers 304.

const USERS = Array.from({ length: 60 }, (_, i) => ({
  id: i + 1,
  name: `User number ${i + 1}`,
  email: `user${i + 1}@example.com`,
}));
const routes = (app: Express) => {
  app.get('/v1/users', (_req, res) => {
    res.json({ users: USERS, hasNext: false });
  });
};

const etagOf = (headers: Record<string, string | string[]>): string => String(headers.etag);

describe.each(VERSIONS)('on %s', (version) => {
  describe.each(LAYOUTS)('compression, with the %s', (layout) => {
    let served: Awaited<ReturnType<typeof serve>>;
    let base: string;
    beforeEach(async () => {
      const built = layoutApp(freshStack(version), layout, [compression()], routes);
      base = built.base;
      served = await serve(built.app);
    });
    afterEach(() => served.close());

    it('compresses the JSON, with every header of the conventions, on the first request and later ones', async () => {
      for (let i = 0; i < 2; i++) {
        const gzip = await rawGet(`${served.url}${base}/v1/users`, { 'accept-encoding': 'gzip' });
        expect(gzip.status).toBe(200);
        expect(gzip.headers['content-encoding']).toBe('gzip');
        expect(gzip.headers.vary).toMatch(/accept-encoding/i);
        expect(JSON.parse(gunzipSync(gzip.body).toString('utf8'))).toEqual({ users: USERS, hasNext: false });
        expect(gzip.body.length).toBeLessThan(Buffer.byteLength(JSON.stringify({ users: USERS, hasNext: false })));
        expectSpecHeaders(gzip.headers);
      }
      const identity = await rawGet(`${served.url}${base}/v1/users`, { 'accept-encoding': 'identity' });
      expect(identity.headers['content-encoding']).toBeUndefined();
      expect(JSON.parse(identity.text)).toEqual({ users: USERS, hasNext: false });
      expectSpecHeaders(identity.headers);
    });

    it('never gives the gzip and identity bodies one strong ETag', async () => {
      const gzip = await rawGet(`${served.url}${base}/v1/users`, { 'accept-encoding': 'gzip' });
      const identity = await rawGet(`${served.url}${base}/v1/users`, { 'accept-encoding': 'identity' });
      const tags = [etagOf(gzip.headers), etagOf(identity.headers)];
      for (const tag of tags) expect(tag).toMatch(/^(W\/)?"[^"]*"$/);
      const sharedStrong = tags[0] === tags[1] && !tags[0]?.startsWith('W/');
      expect({ tags, sharedStrong }).toEqual({ tags, sharedStrong: false });
    });

    it('answers 304 to a conditional GET with either ETag, with every header of the conventions and an empty body', async () => {
      const gzipTag = etagOf((await rawGet(`${served.url}${base}/v1/users`, { 'accept-encoding': 'gzip' })).headers);
      const identityTag = etagOf((await rawGet(`${served.url}${base}/v1/users`, { 'accept-encoding': 'identity' })).headers);
      for (const [encoding, tag] of [
        ['gzip', gzipTag],
        ['identity', identityTag],
        ['gzip', identityTag],
        ['identity', gzipTag],
      ] as const) {
        const again = await rawGet(`${served.url}${base}/v1/users`, { 'accept-encoding': encoding, 'if-none-match': tag });
        expect({ encoding, tag, status: again.status, length: again.body.length }).toEqual({
          encoding,
          tag,
          status: 304,
          length: 0,
        });
        expectSpecHeaders(again.headers, { json: false });
      }
    });
  });
});
