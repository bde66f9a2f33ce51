import request from 'supertest';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../support/services.js';
import { demoAccessToken, exactId, freshEmail } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * Writes on Redis are atomic. Two instances on one real
 * redis-server take concurrent writes; no update is lost, no deleted user
 * comes back, and no email address is left claimed by nobody. Every count is
 * bounded; the races are real (parallel requests over two processes).
 */
describeWith(REDIS_SERVER, 'two instances on one Redis: concurrent writes', () => {
  let redis: RedisServer;
  let a: RunningProcess;
  let b: RunningProcess;
  let bearer: string;
  /** Addresses given up (by a delete or an email change): each must be free again at the end. */
  const released = new Set<string>();
  /** Users deleted: none may be readable at the end. */
  const deleted = new Set<string>();

  beforeAll(async () => {
    redis = await startRedis();
    const env = { REDIS_URL: redis.url, RATE_LIMIT: '1000000' };
    a = await startServer(env);
    b = await startServer(env);
    bearer = `Bearer ${await demoAccessToken(a.url)}`;
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  /** One of the two instances, alternately. */
  const on = (i: number): string => (i % 2 === 0 ? a.url : b.url);

  const create = (url: string, email: string, name = 'Race Person') =>
    request(url).post('/v1/users').set('Authorization', bearer).send({ name, email, gender: 'female' });

  const created = async (email = freshEmail()): Promise<{ path: string; etag: string; email: string }> => {
    const res = await create(a.url, email);
    expect(res.status).toBe(201);
    return { path: `/v1/users/${exactId(res.text)}`, etag: String(res.headers.etag), email };
  };

  describe('the ETag of a write', () => {
    it('is the strong tag a GET of the result returns, on either instance, and opens the next write', async () => {
      const res = await create(a.url, freshEmail());
      expect(res.status).toBe(201);
      const path = `/v1/users/${exactId(res.text)}`;
      expect(res.headers.etag).toMatch(/^"[^"]+"$/);
      expect(res.headers['last-modified']).toBe(new Date(res.body.updatedAt).toUTCString());
      const read = await request(b.url).get(path);
      expect(read.headers.etag).toBe(res.headers.etag);

      const put = await request(b.url)
        .put(path)
        .set('Authorization', bearer)
        .set('If-Match', res.headers.etag ?? '')
        .send({ name: 'Tag Owner', email: res.body.email, gender: 'male' });
      expect(put.status).toBe(200);
      expect(put.headers.etag).toMatch(/^"[^"]+"$/);
      expect(put.headers.etag).not.toBe(res.headers.etag);
      expect((await request(a.url).get(path)).headers.etag).toBe(put.headers.etag);

      const patch = await request(a.url)
        .patch(path)
        .set('Authorization', bearer)
        .set('If-Match', put.headers.etag ?? '')
        .send({ name: 'Tag Owner Again' });
      expect(patch.status).toBe(200);
      expect((await request(b.url).get(path)).headers.etag).toBe(patch.headers.etag);

      // The tag of the PUT is stale now.
      const stale = await request(b.url)
        .patch(path)
        .set('Authorization', bearer)
        .set('If-Match', put.headers.etag ?? '')
        .send({ name: 'Too Late' });
      expect(stale.status).toBe(412);
      expect(stale.body).toEqual({
        errors: [expect.objectContaining({ message: 'The resource changed since it was read.', code: 41200 })],
      });
    });
  });

  it('50 parallel creates of one email over both instances: exactly one 201, the others 409', async () => {
    const email = freshEmail();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => create(on(i), i % 3 === 0 ? email.toUpperCase() : email)),
    );
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(49);
    for (const res of answers.filter((answer) => answer.status === 409)) {
      expect(res.body).toEqual({
        errors: [expect.objectContaining({ message: 'A user with this email already exists.', code: 40901 })],
      });
    }
  });

  it('30 pairs of PUTs with the same If-Match, one on each instance: never two 200s, the loser 412', async () => {
    const user = await created();
    let etag = user.etag;
    for (let pair = 0; pair < 30; pair++) {
      const put = (url: string, name: string) =>
        request(url)
          .put(user.path)
          .set('Authorization', bearer)
          .set('If-Match', etag)
          .send({ name, email: user.email, gender: 'male' });
      const [first, second] = await Promise.all([put(a.url, `Writer A ${pair}`), put(b.url, `Writer B ${pair}`)]);
      expect([first.status, second.status].sort()).toEqual([200, 412]);
      const winner = first.status === 200 ? first : second;
      // What the winner wrote is what is stored: the loser's write was not applied.
      const read = await request(a.url).get(user.path);
      expect(read.body.name).toBe(winner.body.name);
      expect(read.headers.etag).toBe(winner.headers.etag);
      etag = String(winner.headers.etag);
    }
  });

  it('a DELETE racing a PUT: the user stays deleted and its email is free', async () => {
    for (let trial = 0; trial < 20; trial++) {
      const user = await created();
      const newEmail = freshEmail();
      const [removal, replacement] = await Promise.all([
        request(on(trial)).delete(user.path).set('Authorization', bearer),
        request(on(trial + 1))
          .put(user.path)
          .set('Authorization', bearer)
          .send({ name: 'Back From The Dead', email: newEmail, gender: 'male' }),
      ]);
      expect(removal.status).toBe(204);
      // The PUT came first (200), or found no user any more (404): never a resurrection.
      expect([200, 404]).toContain(replacement.status);
      expect((await request(a.url).get(user.path)).status).toBe(404);
      expect((await request(b.url).get(user.path)).status).toBe(404);
      deleted.add(user.path);
      released.add(user.email);
      released.add(newEmail);
    }
  });

  it('concurrent email changes of one user: it ends with one of them, and the others are free', async () => {
    for (let trial = 0; trial < 10; trial++) {
      const user = await created();
      const wanted = [freshEmail(), freshEmail(), freshEmail()];
      const answers = await Promise.all(
        wanted.map((email, i) => request(on(i)).patch(user.path).set('Authorization', bearer).send({ email })),
      );
      expect(answers.map((res) => res.status)).toEqual([200, 200, 200]);
      const now = (await request(b.url).get(user.path)).body.email as string;
      expect(wanted).toContain(now);
      // The address it holds is taken; the ones it gave up are free at once.
      expect((await create(a.url, now)).status).toBe(409);
      const givenUp = [user.email, ...wanted.filter((email) => email !== now)];
      const again = await Promise.all(givenUp.map((email, i) => create(on(i), email)));
      expect(again.map((res) => res.status)).toEqual([201, 201, 201]);
      // Taken again by the users just made, they are checked as such at the end.
    }
  });

  it('afterwards: every user holds its own email, no deleted user is readable, no address is stuck', async () => {
    const everyone: { id_str: string; email: string }[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await request(a.url).get(`/v1/users?offset=${offset}&limit=100`);
      expect(page.status).toBe(200);
      everyone.push(...page.body.users);
      if (!page.body.hasNext) break;
    }
    const emails = everyone.map((user) => user.email.toLowerCase());
    expect(new Set(emails).size).toBe(emails.length);
    // Each address in use is refused to anyone else, on either instance.
    const taken = await Promise.all(everyone.map((user, i) => create(on(i), user.email.toUpperCase())));
    expect(taken.map((res) => res.status)).toEqual(everyone.map(() => 409));
    expect(deleted.size).toBeGreaterThan(0);
    for (const path of deleted) {
      expect((await request(on(path.length)).get(path)).status).toBe(404);
      expect(everyone.map((user) => `/v1/users/${user.id_str}`)).not.toContain(path);
    }
    // Every address given up can be registered again.
    const free = [...released].filter((email) => !emails.includes(email.toLowerCase()));
    expect(free).toHaveLength(20 * 2);
    const again = await Promise.all(free.map((email, i) => create(on(i), email)));
    expect(again.map((res) => res.status)).toEqual(free.map(() => 201));
  });
});
