import request from 'supertest';
import { HTTP_DATE } from '../helpers.js';
import { type BrowserSession, exactId, freshEmail, signIn } from './client.js';
import { type RunningProcess, startServer } from './harness.js';
import { expectDocumented } from './openapi.js';

/**
 * The users resource of the reference server, black box, over real HTTP,
 * state in memory: every row of the contract about users, and the
 * conventions it shows.
 */

let server: RunningProcess;
let session: BrowserSession;
const api = () => request(server.url);

beforeAll(async () => {
  // Every request of this file comes from one address: a quota it cannot reach (limits: rate-limit.test.ts).
  server = await startServer({ RATE_LIMIT: '100000' });
  session = await signIn(server.url);
});

afterAll(async () => {
  await server?.stop();
});

interface UserBody {
  id: number;
  id_str: string;
  name: string;
  email: string;
  gender: string;
  createdAt: string;
  updatedAt: string;
}

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A write authenticated by the browser session, with its CSRF token. */
const asBrowser = (test: request.Test): request.Test => test.set('Cookie', session.cookie).set('CSRF-Token', session.csrfToken);

async function createUser(fields: Partial<UserBody> = {}): Promise<request.Response> {
  const body = { name: 'Nora Quist', email: freshEmail(), gender: 'female', ...fields };
  return asBrowser(api().post('/v1/users')).send(body);
}

describe('GET /v1/users', () => {
  describe('without parameters', () => {
    it('answers 200 with { users, hasNext } and hasNext true, the seeded data filling more than a page', async () => {
      const res = await api().get('/v1/users');
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['users', 'hasNext']);
      expect(res.body.users).toHaveLength(20);
      expect(res.body.hasNext).toBe(true);
      expectDocumented(res);
    });

    it('sends JSON with its exact media type, nosniff and an HTTP-date Date', async () => {
      const res = await api().get('/v1/users');
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers.date).toMatch(HTTP_DATE);
      expect(res.headers['x-powered-by']).toBeUndefined();
    });

    it('writes each user as { id, id_str, name, email, gender, createdAt, updatedAt }', async () => {
      const res = await api().get('/v1/users');
      for (const user of res.body.users as UserBody[]) {
        expect(Object.keys(user)).toEqual(['id', 'id_str', 'name', 'email', 'gender', 'createdAt', 'updatedAt']);
        expect(['male', 'female']).toContain(user.gender);
        expect(user.createdAt).toMatch(RFC3339_UTC);
        expect(user.updatedAt).toMatch(RFC3339_UTC);
        expect(res.text).not.toMatch(/password/i);
      }
    });

    it('writes every id above 2^53 as an exact JSON integer, with id_str holding the same digits', async () => {
      const res = await api().get('/v1/users');
      const pairs = [...res.text.matchAll(/"id":(\d+),"id_str":"(\d+)"/g)];
      expect(pairs).toHaveLength(20);
      for (const [, id, idStr] of pairs) {
        expect(id).toBe(idStr);
        expect(BigInt(id ?? '0') > 2n ** 53n).toBe(true);
      }
    });
  });

  describe('paging with offset and limit', () => {
    it('answers the page asked for, and hasNext false on the last one', async () => {
      const all = await api().get('/v1/users?limit=100');
      expect(all.body.hasNext).toBe(false);
      const total = (all.body.users as UserBody[]).length;
      expect(total).toBeGreaterThanOrEqual(25);
      const last = await api().get(`/v1/users?offset=${total - 2}&limit=5`);
      expect(last.status).toBe(200);
      expect((last.body.users as UserBody[]).map((u) => u.id_str)).toEqual(
        (all.body.users as UserBody[]).slice(total - 2).map((u) => u.id_str),
      );
      expect(last.body.hasNext).toBe(false);
      const middle = await api().get('/v1/users?offset=3&limit=2');
      expect((middle.body.users as UserBody[]).map((u) => u.id_str)).toEqual(
        (all.body.users as UserBody[]).slice(3, 5).map((u) => u.id_str),
      );
      expect(middle.body.hasNext).toBe(true);
    });

    it.each([['limit=abc'], ['limit=-1'], ['offset=1.5'], ['limit=100000']])('answers 400 JSON for %s', async (query) => {
      const res = await api().get(`/v1/users?${query}`);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body.errors[0].code).toBe(40003);
      expectDocumented(res);
    });
  });
});

describe('GET /v1/users: the next page and field selection', () => {
  it('sends the next page in a Link header while hasNext is true', async () => {
    const first = await api().get('/v1/users?limit=5&fields=summary');
    expect(first.body.hasNext).toBe(true);
    expect(first.headers.link).toBe('</v1/users?limit=5&fields=summary&offset=5>; rel="next"');
    const next = await api().get('/v1/users?limit=5&fields=summary&offset=5');
    expect(next.status).toBe(200);
    const all = await api().get('/v1/users?limit=100');
    expect(all.body.hasNext).toBe(false);
    expect(all.headers.link).toBeUndefined();
  });

  it('returns only the fields asked for, id with id_str, in every item', async () => {
    const res = await api().get('/v1/users?fields=name,id&limit=3');
    expect(res.status).toBe(200);
    expect(res.body.hasNext).toBe(true);
    for (const user of res.body.users as Record<string, unknown>[]) expect(Object.keys(user)).toEqual(['id', 'id_str', 'name']);
    expect(res.text).toMatch(/^\{"users":\[\{"id":4611686018427387911,"id_str":"4611686018427387911","name":"Alice Liddell"\}/);
    expectDocumented(res);
  });

  it('offers the named set summary', async () => {
    const res = await api().get('/v1/users/4611686018427387911?fields=summary');
    expect(res.text).toBe('{"id":4611686018427387911,"id_str":"4611686018427387911","name":"Alice Liddell"}');
  });

  it('answers 400 naming a field a user does not have', async () => {
    const res = await api().get('/v1/users?fields=name,password');
    expect(res.status).toBe(400);
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0]).toMatchObject({ code: 40004 });
    expect(res.body.errors[0].message).toContain('"password"');
    expectDocumented(res);
  });
});

describe('GET /v1/users/search', () => {
  it('answers the same shape, filtered by q', async () => {
    const res = await api().get('/v1/users/search?q=ALICE');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      users: [expect.objectContaining({ name: 'Alice Liddell', email: 'alice@example.com' })],
      hasNext: false,
    });
    expectDocumented(res);
  });

  it('pages its results with hasNext', async () => {
    const res = await api().get('/v1/users/search?q=example.com&limit=3');
    expect(res.body.users).toHaveLength(3);
    expect(res.body.hasNext).toBe(true);
  });

  it('answers 400 without a search term', async () => {
    const res = await api().get('/v1/users/search');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: [{ message: 'Query parameter "q" is required.', code: 40005, field: 'q' }] });
    expectDocumented(res);
  });
});

describe('GET /v1/users/{id}', () => {
  it('answers one user', async () => {
    const list = await api().get('/v1/users?limit=1');
    const id = exactId(list.text);
    const res = await api().get(`/v1/users/${id}`);
    expect(res.status).toBe(200);
    expect(exactId(res.text)).toBe(id);
    expect(res.body).toEqual(list.body.users[0]);
    expectDocumented(res);
  });

  describe('rule 14.4: a missing resource is told apart from a wrong URI', () => {
    it('answers 404 with code 40402 for an id no user has', async () => {
      const res = await api().get('/v1/users/9007199254740993');
      expect(res.status).toBe(404);
      expect(res.body.errors[0]).toMatchObject({ message: 'No user has this id.', code: 40402 });
      expectDocumented(res);
    });

    it('answers 404 with code 40401 for a URI no endpoint answers', async () => {
      const res = await api().get('/v1/people');
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body.errors[0]).toMatchObject({ message: 'No endpoint answers this URI.', code: 40401 });
    });
  });

  it('answers 405 with Allow for a method the path does not take', async () => {
    const res = await api().put('/v1/users');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(res.body.errors[0].code).toBe(40500);
  });
});

describe('HEAD', () => {
  it.each([['/v1/users'], ['/v1/users/search?q=a'], ['/v1/users/4611686018427387911']])(
    'answers %s with 200 and the headers of GET, without a body',
    async (path) => {
      const get = await api().get(path);
      const head = await api().head(path);
      expect(head.status).toBe(200);
      expect(head.text).toBeUndefined();
      expect(head.headers['content-type']).toBe(get.headers['content-type']);
      expect(head.headers['content-length']).toBe(get.headers['content-length']);
    },
  );
});

describe('POST /v1/users', () => {
  it('creates: 201, Location of the new user, and the user in the body', async () => {
    const email = freshEmail();
    const res = await createUser({ name: 'Nora Quist', email, gender: 'female' });
    expect(res.status).toBe(201);
    const id = exactId(res.text);
    expect(res.headers.location).toBe(`/v1/users/${id}`);
    expect(res.body).toEqual({
      id: expect.any(Number),
      id_str: id,
      name: 'Nora Quist',
      email,
      gender: 'female',
      createdAt: expect.stringMatching(RFC3339_UTC),
      updatedAt: res.body.createdAt,
    });
    expect(BigInt(id) > 2n ** 53n).toBe(true);
    expectDocumented(res);
    const read = await api().get(res.headers.location ?? '');
    expect(read.body).toEqual(res.body);
  });

  it('takes a form body as well as JSON', async () => {
    const email = freshEmail();
    const res = await asBrowser(api().post('/v1/users')).type('form').send({ name: 'Otto Form', email, gender: 'male' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Otto Form', email, gender: 'male' });
  });

  it('answers 409 when the email is taken (whatever its case)', async () => {
    const res = await createUser({ email: 'ALICE@example.com' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ errors: [{ message: 'A user with this email already exists.', code: 40901 }] });
    expectDocumented(res);
  });

  it('answers 400 naming each field that is not valid', async () => {
    const res = await asBrowser(api().post('/v1/users')).send({ name: '', email: 'nope', gender: 'other', role: 'admin' });
    expect(res.status).toBe(400);
    expect((res.body.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(['email', 'gender', 'name', 'role']);
    expectDocumented(res);
  });

  it('answers 400 for malformed JSON', async () => {
    const res = await asBrowser(api().post('/v1/users')).set('Content-Type', 'application/json').send('{"name":');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe(40001);
  });

  it('escapes < and > in the JSON it writes', async () => {
    const res = await createUser({ name: '<script>alert(1)</script>' });
    expect(res.status).toBe(201);
    expect(res.text).toContain('"name":"\\u003Cscript\\u003Ealert(1)\\u003C/script\\u003E"');
    expect(res.body.name).toBe('<script>alert(1)</script>');
  });

  it('answers 401 without credentials', async () => {
    const res = await api().post('/v1/users').send({ name: 'No One', email: freshEmail(), gender: 'male' });
    expect(res.status).toBe(401);
    expect(res.body.errors[0].code).toBe(40100);
    expectDocumented(res);
  });
});

describe('PUT, PATCH and DELETE /v1/users/{id}', () => {
  let location: string;

  beforeEach(async () => {
    location = (await createUser({ name: 'Pia Change', gender: 'female' })).headers.location ?? '';
  });

  it('PUT replaces the user and answers 200 with the result', async () => {
    const email = freshEmail();
    const res = await asBrowser(api().put(location)).send({ name: 'Pia Replaced', email, gender: 'male' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Pia Replaced', email, gender: 'male' });
    expect(res.body.updatedAt >= res.body.createdAt).toBe(true);
    expectDocumented(res);
  });

  it('PUT answers 400 when a field is missing: a replacement is complete', async () => {
    const res = await asBrowser(api().put(location)).send({ name: 'Half' });
    expect(res.status).toBe(400);
    expect((res.body.errors as { field: string }[]).map((e) => e.field)).toEqual(['email', 'gender']);
  });

  it('PATCH changes part of the user and answers 200 with the result', async () => {
    const before = await api().get(location);
    const res = await asBrowser(api().patch(location)).send({ name: 'Pia Patched' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...before.body, name: 'Pia Patched', updatedAt: res.body.updatedAt });
    expectDocumented(res);
  });

  it('PATCH answers 409 when the new email is taken', async () => {
    const res = await asBrowser(api().patch(location)).send({ email: 'alice@example.com' });
    expect(res.status).toBe(409);
  });

  it('DELETE answers 204 with no body, and the user is gone', async () => {
    const res = await asBrowser(api().delete(location));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectDocumented(res);
    expect((await api().get(location)).status).toBe(404);
  });

  describe('method override (rules 4.7 and 4.8)', () => {
    it('routes a POST with X-HTTP-Method-Override: PATCH as a PATCH', async () => {
      const res = await asBrowser(api().post(location)).set('X-HTTP-Method-Override', 'PATCH').send({ name: 'Via Header' });
      expect(res.status).toBe(200);
      expect(res.body.name).toBe('Via Header');
    });

    it('routes a form POST with _method=DELETE as a DELETE, the CSRF token in _csrf', async () => {
      const res = await api()
        .post(location)
        .set('Cookie', session.cookie)
        .type('form')
        .send({ _method: 'DELETE', _csrf: session.csrfToken });
      expect(res.status).toBe(204);
      expect((await api().get(location)).status).toBe(404);
    });

    it('refuses an override to a method outside the allowed set with 400', async () => {
      const res = await asBrowser(api().post(location)).set('X-HTTP-Method-Override', 'GET');
      expect(res.status).toBe(400);
      expect(res.body.errors[0].code).toBe(40002);
    });
  });
});

describe('concurrent writes on one instance, state in memory (the same guarantees as on Redis: integrity-redis.test.ts)', () => {
  const created = async () => {
    const res = await asBrowser(api().post('/v1/users')).send({ name: 'Memo Race', email: freshEmail(), gender: 'male' });
    expect(res.status).toBe(201);
    return { path: `/v1/users/${exactId(res.text)}`, etag: String(res.headers.etag), email: res.body.email as string };
  };

  it('answers a write with the strong ETag a GET of the result returns', async () => {
    const user = await created();
    expect(user.etag).toMatch(/^"[^"]+"$/);
    expect((await api().get(user.path)).headers.etag).toBe(user.etag);
    const put = await asBrowser(api().put(user.path))
      .set('If-Match', user.etag)
      .send({ name: 'Memo Put', email: user.email, gender: 'female' });
    expect(put.status).toBe(200);
    expect((await api().get(user.path)).headers.etag).toBe(put.headers.etag);
    const patch = await asBrowser(api().patch(user.path))
      .set('If-Match', put.headers.etag ?? '')
      .send({ name: 'Memo Patch' });
    expect(patch.status).toBe(200);
    expect((await api().get(user.path)).headers.etag).toBe(patch.headers.etag);
  });

  it('never lets two PUTs with the same If-Match both win (30 pairs): the other gets 412', async () => {
    const user = await created();
    let etag = user.etag;
    for (let pair = 0; pair < 30; pair++) {
      const put = (name: string) =>
        asBrowser(api().put(user.path)).set('If-Match', etag).send({ name, email: user.email, gender: 'male' });
      const answers = await Promise.all([put(`First ${pair}`), put(`Second ${pair}`)]);
      expect(answers.map((res) => res.status).sort()).toEqual([200, 412]);
      const winner = answers.find((res) => res.status === 200);
      expect((await api().get(user.path)).body.name).toBe(winner?.body.name);
      etag = String(winner?.headers.etag);
    }
  });

  it('keeps a user deleted when a PUT races the DELETE, and frees its email', async () => {
    for (let trial = 0; trial < 10; trial++) {
      const user = await created();
      const [removal, replacement] = await Promise.all([
        asBrowser(api().delete(user.path)),
        asBrowser(api().put(user.path)).send({ name: 'Not Again', email: user.email, gender: 'male' }),
      ]);
      expect(removal.status).toBe(204);
      expect([200, 404]).toContain(replacement.status);
      expect((await api().get(user.path)).status).toBe(404);
      const again = await asBrowser(api().post('/v1/users')).send({ name: 'New Owner', email: user.email, gender: 'female' });
      expect(again.status).toBe(201);
    }
  });
});
