import { hash } from 'node:crypto';
import http from 'node:http';
import express from 'express';
import express4 from 'express4';
import request from 'supertest';
import { bodyEntityTag } from '../src/caching/entity-tag.js';
import {
  cacheControl,
  caching,
  checkPreconditions,
  entityTag,
  notModified,
  preconditions,
  setCacheControl,
  setValidators,
  varyOn,
} from '../src/caching/index.js';
import { listMatches } from '../src/caching/preconditions.js';
import { errorHandler, notFound } from '../src/errors/index.js';
import { conventions } from '../src/index.js';
import { jsonResponses } from '../src/json/index.js';
import { expectHeaders, HTTP_DATE } from './helpers.js';
import { closeServer, listen } from './support/services.js';

const UPDATED_AT = new Date('2026-11-20T10:00:00.000Z');
const LAST_MODIFIED = 'Fri, 20 Nov 2026 10:00:00 GMT';
const USER = { id: 1, name: 'Ada' };
const USER_TEXT = '{"id":1,"name":"Ada"}';
const USER_TAG = `"${hash('sha1', USER_TEXT, 'base64url')}"`;

/** An app with caching() and JSON output, as the preset mounts them. */
function cachedApp(routes: (app: express.Express) => void, options?: Parameters<typeof caching>[0]): express.Express {
  const app = express();
  app.use(caching(options), jsonResponses());
  routes(app);
  app.use(errorHandler({ log: false }));
  return app;
}

describe('caching()', () => {
  describe('a JSON answer to GET', () => {
    const app = cachedApp((a) => {
      a.get('/v1/users/1', (_req, res) => {
        res.json(USER);
      });
    });

    it('carries a strong ETag computed from the body, and no-store by default', async () => {
      const res = await request(app).get('/v1/users/1');
      expect(res.status).toBe(200);
      expect(res.text).toBe(USER_TEXT);
      expectHeaders(res, { ETag: USER_TAG, 'Cache-Control': 'no-store, max-age=0', Pragma: null, Expires: null });
    });

    it('answers HEAD as GET does, without a body', async () => {
      const res = await request(app).head('/v1/users/1');
      expect(res.status).toBe(200);
      expect(res.text).toBeUndefined();
      expectHeaders(res, { ETag: USER_TAG, 'Content-Length': String(USER_TEXT.length) });
    });

    it('gives Content-Length in bytes of the UTF-8 text, not in characters', async () => {
      const utf8 = cachedApp((a) => {
        a.get('/v1/users/2', (_req, res) => {
          res.json({ name: 'Zoë Æthelflæd' });
        });
      });
      const res = await request(utf8).get('/v1/users/2');
      expect(res.text).toBe('{"name":"Zoë Æthelflæd"}');
      expectHeaders(res, {
        'Content-Length': String(Buffer.byteLength(res.text)),
        'Content-Type': 'application/json; charset=utf-8',
      });
      expect(Buffer.byteLength(res.text)).toBeGreaterThan(res.text.length);
    });

    describe('when If-None-Match names the current tag', () => {
      it('answers 304 with an empty body', async () => {
        const res = await request(app).get('/v1/users/1').set('If-None-Match', USER_TAG);
        expect(res.status).toBe(304);
        expect(res.text).toBe('');
        expectHeaders(res, { ETag: USER_TAG, 'Content-Type': null, 'Content-Length': null });
      });

      it('also when the tag is one of a list, or weak-compared (RFC 9110 §13.1.2)', async () => {
        for (const field of [`"old", ${USER_TAG}`, `W/${USER_TAG}`, '*']) {
          const res = await request(app).get('/v1/users/1').set('If-None-Match', field);
          expect(res.status).toBe(304);
        }
      });

      it('answers HEAD with 304 too', async () => {
        const res = await request(app).head('/v1/users/1').set('If-None-Match', USER_TAG);
        expect(res.status).toBe(304);
        expectHeaders(res, { ETag: USER_TAG, 'Content-Type': null, 'Content-Length': null });
      });
    });

    describe('when If-None-Match names another tag', () => {
      it('answers 200 with the body and the current tag', async () => {
        const res = await request(app).get('/v1/users/1').set('If-None-Match', '"stale"');
        expect(res.status).toBe(200);
        expect(res.body).toEqual(USER);
        expectHeaders(res, { ETag: USER_TAG });
      });
    });
  });

  describe('a route that supplies its own validators', () => {
    let user = { ...USER, updatedAt: UPDATED_AT };
    const app = cachedApp((a) => {
      a.get('/v1/users/1', cacheControl('no-cache'), (req, res) => {
        setValidators(res, { etag: entityTag(user.updatedAt), lastModified: user.updatedAt });
        if (notModified(req, res)) return;
        res.json(user);
      });
    });
    afterEach(() => {
      user = { ...USER, updatedAt: UPDATED_AT };
    });

    it('sends its ETag and Last-Modified (HTTP-date) and the no-cache intent', async () => {
      const res = await request(app).get('/v1/users/1');
      expect(res.status).toBe(200);
      expectHeaders(res, { ETag: `"${UPDATED_AT.getTime()}"`, 'Last-Modified': LAST_MODIFIED, 'Cache-Control': 'no-cache' });
      expect(res.headers['last-modified']).toMatch(HTTP_DATE);
    });

    describe('conditional GET with If-Modified-Since (rule 7.6)', () => {
      it('answers 304 with an empty body when the resource is unchanged', async () => {
        const res = await request(app).get('/v1/users/1').set('If-Modified-Since', LAST_MODIFIED);
        expect(res.status).toBe(304);
        expect(res.text).toBe('');
      });

      it('answers 200 with the new content, Last-Modified and entity tag when it changed', async () => {
        const later = new Date('2026-11-21T08:30:00.000Z');
        user = { ...user, name: 'Ada L.', updatedAt: later };
        const res = await request(app).get('/v1/users/1').set('If-Modified-Since', LAST_MODIFIED);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ id: 1, name: 'Ada L.', updatedAt: '2026-11-21T08:30:00.000Z' });
        expectHeaders(res, { 'Last-Modified': 'Sat, 21 Nov 2026 08:30:00 GMT', ETag: `"${later.getTime()}"` });
      });

      it('lets If-None-Match decide when both are sent (RFC 9110 §13.1.3)', async () => {
        // If-Modified-Since alone would answer 304 (the test above); the
        // non-matching If-None-Match wins and the full answer is sent.
        const res = await request(app).get('/v1/users/1').set('If-None-Match', '"other"').set('If-Modified-Since', LAST_MODIFIED);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ ...USER, updatedAt: UPDATED_AT.toISOString() });
        expectHeaders(res, { ETag: `"${UPDATED_AT.getTime()}"` });
        const matching = await request(app)
          .get('/v1/users/1')
          .set('If-None-Match', `"${UPDATED_AT.getTime()}"`)
          .set('If-Modified-Since', 'Thu, 01 Jan 1970 00:00:00 GMT');
        expect(matching.status).toBe(304);
      });

      it('ignores an If-Modified-Since that is not a date', async () => {
        const res = await request(app).get('/v1/users/1').set('If-Modified-Since', 'yesterday');
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ ...USER, updatedAt: UPDATED_AT.toISOString() });
        expectHeaders(res, { 'Last-Modified': LAST_MODIFIED });
      });
    });
  });

  describe('answers that are not tagged', () => {
    const app = cachedApp((a) => {
      a.post('/v1/users', (_req, res) => {
        res.status(201).json(USER);
      });
      a.get('/v1/missing', (_req, res) => {
        res.status(404).json({ errors: [] });
      });
    });

    it('a 201 to POST gets no body-hash ETag of ours, and no weak tag of Express', async () => {
      const res = await request(app).post('/v1/users');
      expect(res.status).toBe(201);
      expect(res.body).toEqual(USER);
      expectHeaders(res, { ETag: null });
    });

    it('a non-200 GET gets no ETag of ours, and no weak tag of Express', async () => {
      const res = await request(app).get('/v1/missing');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ errors: [] });
      expectHeaders(res, { ETag: null });
    });
  });

  describe('options', () => {
    it('writes weak tags with etag: "weak"', async () => {
      const app = cachedApp(
        (a) =>
          a.get('/v1/users/1', (_req, res) => {
            res.json(USER);
          }),
        { etag: 'weak' },
      );
      const res = await request(app).get('/v1/users/1');
      expectHeaders(res, { ETag: `W/${USER_TAG}` });
    });

    it('adds no tag with etag: false (a tag the route set still answers 304), and no Cache-Control with defaultCacheControl: false', async () => {
      const app = cachedApp(
        (a) => {
          a.get('/v1/users/1', (_req, res) => {
            res.json(USER);
          });
          a.get('/v1/users/2', (_req, res) => {
            setValidators(res, { etag: '"v2"' });
            res.json(USER);
          });
        },
        { etag: false, defaultCacheControl: false },
      );
      const res = await request(app).get('/v1/users/1');
      expect(res.status).toBe(200);
      expectHeaders(res, { ETag: null, 'Cache-Control': null });
      const own = await request(app).get('/v1/users/2').set('If-None-Match', '"v2"');
      expect(own.status).toBe(304);
      expectHeaders(own, { ETag: '"v2"' });
    });

    it('refuses wrong options at start-up', () => {
      expect(() => caching({ etag: 'strongest' as never })).toThrow("caching(options): `etag` must be 'strong', 'weak' or false");
      expect(() => caching({ defaultCacheControl: '' })).toThrow('`defaultCacheControl` must be a Cache-Control value or false');
      expect(() => caching({ etags: 'weak' } as never)).toThrow('Did you mean `etag`?');
    });
  });
});

describe('Cache-Control intents (rule 7.2)', () => {
  const app = cachedApp((a) => {
    a.get('/v1/no-cache', cacheControl('no-cache'), (_req, res) => res.json({}));
    a.get('/v1/period', cacheControl({ maxAgeSeconds: 300 }), (_req, res) => res.json({}));
    a.get('/v1/secret', cacheControl('no-store'), (_req, res) => res.json({}));
    a.get('/v1/daily', cacheControl({ nextUpdate: () => new Date(Date.now() + 90_000) }), (_req, res) => res.json({}));
    a.get('/v1/inside', (_req, res) => {
      setCacheControl(res, { maxAgeSeconds: 60 });
      res.json({});
    });
    a.get('/v1/default', (_req, res) => res.json({}));
    a.get('/v1/fails', cacheControl({ maxAgeSeconds: 300 }), () => {
      throw new Error('boom');
    });
  });

  it.each([
    ['/v1/no-cache', 'no-cache'],
    ['/v1/period', 'public, max-age=300'],
    ['/v1/secret', 'no-store'],
    ['/v1/inside', 'public, max-age=60'],
    ['/v1/default', 'no-store, max-age=0'],
  ])('%s answers Cache-Control: %s and no Expires', async (path, value) => {
    const res = await request(app).get(path);
    expectHeaders(res, { 'Cache-Control': value, Expires: null, Pragma: null });
  });

  it('data updated at fixed times gets Expires at the next update and a max-age to the same instant', async () => {
    const res = await request(app).get('/v1/daily');
    expect(res.headers.expires).toMatch(HTTP_DATE);
    const maxAge = Number(/^public, max-age=(\d+)$/.exec(res.headers['cache-control'] as string)?.[1]);
    expect(maxAge).toBeGreaterThanOrEqual(89);
    expect(maxAge).toBeLessThanOrEqual(90);
    const untilExpires = (Date.parse(res.headers.expires as string) - Date.parse(res.headers.date as string)) / 1000;
    expect(Math.abs(untilExpires - maxAge)).toBeLessThanOrEqual(1);
  });

  it('an error answer is never stored, whatever the route asked for', async () => {
    const res = await request(app).get('/v1/fails');
    expect(res.status).toBe(500);
    expectHeaders(res, { 'Cache-Control': 'no-store, max-age=0', ETag: null });
  });

  it('refuses an intent that is none of the four', () => {
    expect(() => cacheControl('public' as never)).toThrow("cacheControl(options): `intent` must be 'no-cache', 'no-store'");
    expect(() => cacheControl({ maxAgeSeconds: -1 })).toThrow('`maxAgeSeconds` must be an integer at least 0');
    expect(() => cacheControl({ maxAgeSeconds: 1.5 })).toThrow('`maxAgeSeconds` must be an integer');
    // The old name is refused with the new one.
    expect(() => cacheControl({ maxAge: 300 } as never)).toThrow(
      'received an unsupported option `maxAge`. It is now `maxAgeSeconds` (seconds).',
    );
  });
});

describe('varyOn()', () => {
  it('appends to Vary, never overwrites', async () => {
    const app = cachedApp((a) => {
      a.get(
        '/v1/greeting',
        (_req, res, next) => {
          res.setHeader('Vary', 'Origin');
          next();
        },
        varyOn(['Accept-Language', 'Accept-Encoding']),
        varyOn(['Accept-Language']),
        (_req, res) => res.json({}),
      );
    });
    const res = await request(app).get('/v1/greeting');
    expectHeaders(res, { Vary: 'Origin, Accept-Language, Accept-Encoding' });
  });

  it('refuses what is not a header name', () => {
    expect(() => varyOn([])).toThrow('varyOn(options): `fields` must be a non-empty array');
    expect(() => varyOn(['Accept Language'])).toThrow('`fields` must be');
  });
});

describe('preconditions on writes (RFC 9110 §13.1, RFC 6585 §3)', () => {
  let version = UPDATED_AT;
  const current = () => ({ etag: entityTag(version), lastModified: version });
  const app = cachedApp((a) => {
    a.put('/v1/users/1', preconditions({ current }), (_req, res) => {
      version = new Date(version.getTime() + 1000);
      res.json({ saved: true });
    });
    a.patch('/v1/users/1', preconditions({ current, required: true }), (_req, res) => res.json({ saved: true }));
    a.delete('/v1/users/2', preconditions({ current: () => undefined }), (_req, res) => res.status(204).end());
    a.delete('/v1/users/1', (req, res) => {
      checkPreconditions(req, current(), { required: true });
      res.status(204).end();
    });
    a.get('/v1/users/1', preconditions({ current }), (_req, res) => res.json({ read: true }));
  });
  const tag = () => entityTag(version);
  afterEach(() => {
    version = UPDATED_AT;
  });

  describe('If-Match', () => {
    it('lets the write through when it names the current tag', async () => {
      const before = tag();
      const res = await request(app).put('/v1/users/1').set('If-Match', before);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ saved: true });
      expect(tag()).not.toBe(before);
    });

    it('lets it through for one of a list, and for *', async () => {
      expect((await request(app).put('/v1/users/1').set('If-Match', `"a", ${tag()}`)).status).toBe(200);
      expect((await request(app).put('/v1/users/1').set('If-Match', '*')).status).toBe(200);
    });

    it('answers 412 JSON when the resource changed since the client read it (lost update)', async () => {
      const stale = tag();
      expect((await request(app).put('/v1/users/1').set('If-Match', stale)).status).toBe(200);
      const res = await request(app).put('/v1/users/1').set('If-Match', stale);
      expect(res.status).toBe(412);
      expect(res.body).toEqual({
        errors: [
          { message: 'The resource changed since it was read.', code: 41200, detail: { header: 'If-Match', current: tag() } },
        ],
      });
      expectHeaders(res, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store, max-age=0' });
    });

    it('answers 412 for a weak tag: If-Match compares strongly', async () => {
      expect((await request(app).put('/v1/users/1').set('If-Match', `W/${tag()}`)).status).toBe(412);
    });

    it('answers 412 for a malformed value, and for * when the resource does not exist', async () => {
      expect((await request(app).put('/v1/users/1').set('If-Match', String(version.getTime()))).status).toBe(412);
      expect((await request(app).put('/v1/users/1').set('If-Match', '')).status).toBe(412);
      expect((await request(app).delete('/v1/users/2').set('If-Match', '*')).status).toBe(412);
    });
  });

  describe('If-Unmodified-Since', () => {
    it('lets the write through when the resource is not newer', async () => {
      expect((await request(app).put('/v1/users/1').set('If-Unmodified-Since', LAST_MODIFIED)).status).toBe(200);
    });

    it('answers 412 when the resource changed after the date', async () => {
      const res = await request(app).put('/v1/users/1').set('If-Unmodified-Since', 'Fri, 20 Nov 2026 09:59:59 GMT');
      expect(res.status).toBe(412);
      expect(res.body.errors[0].code).toBe(41200);
    });

    it('is ignored when it is not a date, and when If-Match is sent', async () => {
      expect((await request(app).put('/v1/users/1').set('If-Unmodified-Since', 'soon')).status).toBe(200);
      const both = await request(app)
        .put('/v1/users/1')
        .set('If-Match', tag())
        .set('If-Unmodified-Since', 'Thu, 01 Jan 1970 00:00:00 GMT');
      expect(both.status).toBe(200);
    });
  });

  describe('If-None-Match on a write', () => {
    it('answers 412 when it matches the current tag or is *', async () => {
      expect((await request(app).put('/v1/users/1').set('If-None-Match', '*')).status).toBe(412);
      expect((await request(app).put('/v1/users/1').set('If-None-Match', `W/${tag()}`)).status).toBe(412);
      expect((await request(app).put('/v1/users/1').set('If-None-Match', '"other"')).status).toBe(200);
    });
  });

  describe('when a route requires a precondition', () => {
    it('answers 428 JSON to an unconditional write', async () => {
      const res = await request(app).patch('/v1/users/1');
      expect(res.status).toBe(428);
      expect(res.body).toEqual({
        errors: [{ message: 'This request must be conditional (If-Match or If-Unmodified-Since).', code: 42800 }],
      });
    });

    it('accepts a conditional one, and the in-handler check answers the same way', async () => {
      expect((await request(app).patch('/v1/users/1').set('If-Match', tag())).status).toBe(200);
      expect((await request(app).delete('/v1/users/1')).status).toBe(428);
      expect((await request(app).delete('/v1/users/1').set('If-Match', '"x"')).status).toBe(412);
      expect((await request(app).delete('/v1/users/1').set('If-Match', tag())).status).toBe(204);
    });

    it('a write without any precondition passes where none is required', async () => {
      expect((await request(app).put('/v1/users/1')).status).toBe(200);
    });
  });

  it('leaves safe methods alone', async () => {
    const res = await request(app).get('/v1/users/1').set('If-Match', '"nope"');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ read: true });
  });

  it('passes a failing lookup to the error handler', async () => {
    const failing = cachedApp((a) => {
      a.put(
        '/v1/x',
        preconditions({
          current: async () => {
            throw new Error('store down');
          },
        }),
        (_req, res) => res.json({}),
      );
    });
    const failed = await request(failing).put('/v1/x');
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ errors: [{ code: 50000, detail: 'store down' }] });
    const throwing = cachedApp((a) => {
      a.put(
        '/v1/x',
        preconditions({
          current: () => {
            throw new Error('bug');
          },
        }),
        (_req, res) => res.json({}),
      );
    });
    const thrown = await request(throwing).put('/v1/x');
    expect(thrown.status).toBe(500);
    expect(thrown.body).toMatchObject({ errors: [{ code: 50000, detail: 'bug' }] });
  });

  it('refuses wrong options at start-up', () => {
    expect(() => preconditions({} as never)).toThrow('preconditions(options): `current` must be a function');
    expect(() => preconditions({ current, required: 'yes' as never })).toThrow('`required` must be true or false');
  });
});

describe('the strong ETag of a content-coded body (RFC 9110 §8.8.3)', () => {
  // Node's own client: the headers as sent, the body left undecoded.
  async function answerOf(app: express.Express): Promise<{ status: number | undefined; headers: http.IncomingHttpHeaders }> {
    const { server, url } = await listen(app);
    try {
      return await new Promise((resolve, reject) => {
        http
          .get(`${url}/v1/users/1`, (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers }));
          })
          .on('error', reject);
      });
    } finally {
      await closeServer(server);
    }
  }

  const codedApp = (coding: string) =>
    cachedApp((a) => {
      a.get('/v1/users/1', (_req, res) => {
        res.setHeader('Content-Encoding', coding);
        res.json(USER);
      });
    });

  it('names one known coding in the tag', async () => {
    const { headers } = await answerOf(codedApp('gzip'));
    expect(headers.etag).toBe(`${USER_TAG.slice(0, -1)}-gzip"`);
  });

  it.each(['gzip, br', 'aes128gcm'])('sends no strong tag for %j, which no tag can name', async (coding) => {
    const { status, headers } = await answerOf(codedApp(coding));
    expect(status).toBe(200);
    expect(headers['content-encoding']).toBe(coding);
    expect(headers.etag).toBeUndefined();
  });
});

describe('entity tags', () => {
  it('entityTag() quotes versions, hashes what is not plainly safe, and weakens on request', () => {
    expect(entityTag(7)).toBe('"7"');
    expect(entityTag(12345678901234567890n)).toBe('"12345678901234567890"');
    expect(entityTag(UPDATED_AT)).toBe(`"${UPDATED_AT.getTime()}"`);
    expect(entityTag('rev-3')).toBe('"rev-3"');
    expect(entityTag('a "quoted", value')).toBe(`"${hash('sha1', 'a "quoted", value', 'base64url')}"`);
    expect(entityTag(7, { weak: true })).toBe('W/"7"');
    expect(() => entityTag(new Date('nope'))).toThrow('invalid Date');
  });

  it('bodyEntityTag() is the SHA-1 of the bytes', () => {
    expect(bodyEntityTag(USER_TEXT)).toBe(USER_TAG);
    expect(bodyEntityTag(Buffer.from(USER_TEXT), 'weak')).toBe(`W/${USER_TAG}`);
  });

  it('listMatches() reads tags holding commas and compares strongly or weakly', () => {
    expect(listMatches('"a,b", "c"', '"a,b"', true)).toBe(true);
    expect(listMatches('"a", W/"b"', '"b"', true)).toBe(false);
    expect(listMatches('"a", W/"b"', '"b"', false)).toBe(true);
    expect(listMatches('"b"', 'W/"b"', true)).toBe(false);
    expect(listMatches('b', '"b"', false)).toBe(false);
    expect(listMatches('"b', '"b"', false)).toBe(false);
  });

  it('setValidators() refuses an ETag without quotes', async () => {
    const app = cachedApp((a) =>
      a.get('/v1/x', (_req, res) => {
        setValidators(res, { etag: 'abc' });
        res.json({});
      }),
    );
    const res = await request(app).get('/v1/x');
    expect(res.status).toBe(500);
    expect(res.body.errors[0].detail).toMatch(/setValidators: etag must be an entity tag/);
    expectHeaders(res, { ETag: null });
  });
});

describe.each([
  ['Express 5', express],
  ['Express 4', express4 as unknown as typeof express],
])('conditional GET on %s, through conventions()', (_name, factory) => {
  const app = factory();
  app.use(conventions());
  app.get('/v1/users/1', (_req, res) => res.json(USER));
  app.use(notFound(), errorHandler({ log: false }));

  it('tags, answers 304 to a matching If-None-Match, and HEAD alike', async () => {
    const first = await request(app).get('/v1/users/1');
    expectHeaders(first, { ETag: USER_TAG, 'Cache-Control': 'no-store, max-age=0' });
    const again = await request(app).get('/v1/users/1').set('If-None-Match', USER_TAG);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    const head = await request(app).head('/v1/users/1').set('If-None-Match', USER_TAG);
    expect(head.status).toBe(304);
  });

  it('a missing route is not tagged and never stored', async () => {
    const res = await request(app).get('/v1/nope');
    expect(res.status).toBe(404);
    expectHeaders(res, { ETag: null, 'Cache-Control': 'no-store, max-age=0' });
  });
});

describe('the ETag of a write (a client sends the tag of its own write in If-Match)', () => {
  let version = 1;
  const current = () => ({ etag: entityTag(version) });
  const write = (status: number) => (_req: express.Request, res: express.Response) => {
    version += 1;
    setValidators(res, current());
    res.status(status).json({ id: 1, version });
  };
  const app = cachedApp((a) => {
    a.put('/v1/users/1', preconditions({ current }), write(200));
    a.patch('/v1/users/1', preconditions({ current }), write(200));
    a.post('/v1/users', write(201));
    a.put('/v1/notes/1', (_req, res) => {
      res.json({ id: 1 });
    });
    a.get('/v1/users/1', (_req, res) => {
      setValidators(res, current());
      res.json({ id: 1, version });
    });
  });
  afterEach(() => {
    version = 1;
  });

  it.each([
    ['PUT', 200],
    ['PATCH', 200],
  ] as const)('%s answers %i with the strong tag its route set, the one a GET then returns', async (method, status) => {
    const res = await request(app)[method === 'PUT' ? 'put' : 'patch']('/v1/users/1').set('If-Match', '"1"');
    expect(res.status).toBe(status);
    expectHeaders(res, { ETag: '"2"' });
    const read = await request(app).get('/v1/users/1');
    expectHeaders(read, { ETag: '"2"' });
  });

  it('POST answers 201 with the strong tag its route set', async () => {
    const res = await request(app).post('/v1/users');
    expect(res.status).toBe(201);
    expectHeaders(res, { ETag: '"2"' });
  });

  it('the tag of a write passes If-Match on the next write (no 412)', async () => {
    const first = await request(app).put('/v1/users/1').set('If-Match', '"1"');
    const next = await request(app)
      .patch('/v1/users/1')
      .set('If-Match', first.headers.etag as string);
    expect(next.status).toBe(200);
    expectHeaders(next, { ETag: '"3"' });
  });

  it('a write whose route set no tag answers none: never Express\'s weak W/"…"', async () => {
    const res = await request(app).put('/v1/notes/1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: 1 });
    expectHeaders(res, { ETag: null });
  });

  it('the same through conventions() with the response linter on (development)', async () => {
    const dev = express();
    dev.use(conventions({ responseLinter: { log: () => {} } }));
    dev.put('/v1/users/1', write(200));
    dev.put('/v1/notes/1', (_req, res) => {
      res.json({ id: 1 });
    });
    dev.use(errorHandler({ log: false }));
    const tagged = await request(dev).put('/v1/users/1');
    expectHeaders(tagged, { ETag: '"2"' });
    const untagged = await request(dev).put('/v1/notes/1');
    expectHeaders(untagged, { ETag: null });
  });
});
