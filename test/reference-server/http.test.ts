import request from 'supertest';
import { HTTP_DATE } from '../helpers.js';
import { SPEC_SECURITY_HEADERS_LOWER_CASE } from '../support/spec-headers.js';
import { waitUntil } from '../support/timing.js';
import { type BrowserSession, freshEmail, signIn } from './client.js';
import { type RunningProcess, startServer } from './harness.js';
import { expectDocumented } from './openapi.js';

/**
 * HTTP behaviour of the reference server: the conventions' security response
 * headers, caching and conditional requests, preconditions on writes, and
 * CORS, black box, over real HTTP.
 */

const ALLOWED = 'http://localhost:5173';
let server: RunningProcess;
let session: BrowserSession;
const api = () => request(server.url);

beforeAll(async () => {
  server = await startServer({ CORS_ORIGINS: `${ALLOWED},https://app.example.com`, RATE_LIMIT: '100000' });
  session = await signIn(server.url);
});

afterAll(async () => {
  await server?.stop();
});

const asBrowser = (test: request.Test): request.Test => test.set('Cookie', session.cookie).set('CSRF-Token', session.csrfToken);

const pick = (res: request.Response, names: readonly string[]) =>
  Object.fromEntries(names.map((name) => [name, res.headers[name] as string | undefined]));

describe('security response headers', () => {
  it('every answer carries the security headers of the conventions: a list, an error, a 404', async () => {
    const answers = [await api().get('/v1/users'), await api().get('/v1/users?limit=x'), await api().get('/v1/nowhere')];
    expect(answers.map((res) => res.status)).toEqual([200, 400, 404]);
    for (const res of answers)
      expect(pick(res, Object.keys(SPEC_SECURITY_HEADERS_LOWER_CASE))).toEqual(SPEC_SECURITY_HEADERS_LOWER_CASE);
  });

  it('sends none of the headers rule 11.13 says are not sent', async () => {
    for (const res of [await api().get('/v1/users'), await api().post('/v1/oauth2/token').type('form').send({})]) {
      expect(pick(res, ['x-xss-protection', 'public-key-pins', 'expect-ct', 'feature-policy', 'x-powered-by'])).toEqual({
        'x-xss-protection': undefined,
        'public-key-pins': undefined,
        'expect-ct': undefined,
        'feature-policy': undefined,
        'x-powered-by': undefined,
      });
    }
    // Pragma only in the token error response.
    expect((await api().get('/v1/users')).headers.pragma).toBeUndefined();
  });

  it('stores no list: Cache-Control: no-store, max-age=0', async () => {
    const res = await api().get('/v1/users');
    expect(res.headers['cache-control']).toBe('no-store, max-age=0');
    expect(res.headers.expires).toBeUndefined();
  });
});

describe('caching of one user (section 7)', () => {
  let location: string;
  beforeAll(async () => {
    location = (await asBrowser(api().post('/v1/users')).send({ name: 'Cary Cache', email: freshEmail(), gender: 'male' }))
      .headers.location as string;
  });

  it('sends a strong ETag, Last-Modified and Cache-Control: no-cache on one user', async () => {
    const res = await api().get(location);
    expect(res.status).toBe(200);
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
    expect(res.headers['last-modified']).toMatch(HTTP_DATE);
    expect(res.headers['last-modified']).toBe(new Date(res.body.updatedAt).toUTCString());
    expect(res.headers['cache-control']).toBe('no-cache');
    expectDocumented(res);
  });

  it('answers 304 with an empty body to If-None-Match naming the current tag, on GET and on HEAD', async () => {
    const first = await api().get(location);
    const again = await api()
      .get(location)
      .set('If-None-Match', first.headers.etag as string);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.etag).toBe(first.headers.etag);
    expectDocumented(again);
    expect(
      (
        await api()
          .head(location)
          .set('If-None-Match', first.headers.etag as string)
      ).status,
    ).toBe(304);
  });

  it('answers 304 to If-Modified-Since, then 200 with new validators once the user changed', async () => {
    const first = await api().get(location);
    const lastModified = first.headers['last-modified'] as string;
    const unchanged = await api().get(location).set('If-Modified-Since', lastModified);
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe('');

    // Last-Modified has whole seconds: change it in a later second.
    await waitUntil(() => Date.now() >= Date.parse(lastModified) + 1000, 'a second later than Last-Modified');
    const changed = await asBrowser(api().patch(location)).send({ name: 'Cary Changed' });
    expect(changed.status).toBe(200);
    const after = await api().get(location).set('If-Modified-Since', lastModified);
    expect(after.status).toBe(200);
    expect(after.body.name).toBe('Cary Changed');
    expect(after.headers.etag).not.toBe(first.headers.etag);
    expect(new Date(after.headers['last-modified'] as string) > new Date(lastModified)).toBe(true);
  });

  it('tags another selection of fields with another ETag', async () => {
    const whole = await api().get(location);
    const summary = await api().get(`${location}?fields=summary`);
    expect(summary.headers.etag).not.toBe(whole.headers.etag);
    expect(
      (
        await api()
          .get(`${location}?fields=summary`)
          .set('If-None-Match', whole.headers.etag as string)
      ).status,
    ).toBe(200);
  });
});

describe('preconditions on writes (beyond the conventions: no lost updates)', () => {
  it('answers a PATCH with a stale If-Match with 412 and changes nothing', async () => {
    const created = await asBrowser(api().post('/v1/users')).send({ name: 'Pat Pre', email: freshEmail(), gender: 'female' });
    const location = created.headers.location as string;
    const read = await api().get(location);
    const etag = read.headers.etag as string;
    // Someone else changes the user.
    expect((await asBrowser(api().patch(location)).send({ name: 'Pat Other' })).status).toBe(200);
    const stale = await asBrowser(api().patch(location)).set('If-Match', etag).send({ name: 'Pat Mine' });
    expect(stale.status).toBe(412);
    expect(stale.body.errors[0].code).toBe(41200);
    expectDocumented(stale);
    expect((await api().get(location)).body.name).toBe('Pat Other');
  });

  it('lets a write with the current If-Match through, PUT and DELETE alike', async () => {
    const created = await asBrowser(api().post('/v1/users')).send({ name: 'Cur Rent', email: freshEmail(), gender: 'male' });
    const location = created.headers.location as string;
    const etag = (await api().get(location)).headers.etag as string;
    const put = await asBrowser(api().put(location))
      .set('If-Match', etag)
      .send({ name: 'Cur Replaced', email: freshEmail(), gender: 'male' });
    expect(put.status).toBe(200);
    expect((await asBrowser(api().delete(location)).set('If-Match', etag)).status).toBe(412);
    const fresh = (await api().get(location)).headers.etag as string;
    expect((await asBrowser(api().delete(location)).set('If-Match', fresh)).status).toBe(204);
  });
});

describe('CORS (section 8)', () => {
  it('answers a preflight from an allowed origin with 200, Content-Length: 0, text/plain, comma lists and max-age', async () => {
    const res = await api()
      .options('/v1/users')
      .set('Origin', ALLOWED)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization, content-type, csrf-token');
    expect(res.status).toBe(200);
    expect(
      pick(res, [
        'content-length',
        'content-type',
        'access-control-allow-origin',
        'access-control-allow-credentials',
        'access-control-allow-methods',
        'access-control-max-age',
      ]),
    ).toEqual({
      'content-length': '0',
      'content-type': 'text/plain',
      'access-control-allow-origin': ALLOWED,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
      'access-control-max-age': '600',
    });
    const allowedHeaders = (res.headers['access-control-allow-headers'] as string).split(', ');
    expect(allowedHeaders).toEqual(expect.arrayContaining(['Authorization', 'Content-Type', 'CSRF-Token', 'X-Requested-With']));
  });

  it('answers a request from an allowed origin with that origin and credentials', async () => {
    const res = await api().get('/v1/users').set('Origin', 'https://app.example.com');
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers.vary).toContain('Origin');
  });

  it.each([['https://evil.example'], ['http://localhost:5173.evil.example'], ['null']])(
    'gives the origin %s no CORS headers, and refuses its preflight',
    async (origin) => {
      const actual = await api().get('/v1/users').set('Origin', origin);
      expect(actual.headers['access-control-allow-origin']).toBeUndefined();
      const preflight = await api().options('/v1/users').set('Origin', origin).set('Access-Control-Request-Method', 'DELETE');
      expect(preflight.status).toBe(403);
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
      expect(preflight.body.errors[0].code).toBe(40303);
    },
  );
});
