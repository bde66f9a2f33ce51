import request from 'supertest';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../support/services.js';
import { DEMO, freshEmail, signIn } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * A token whose user is gone is refused, on every instance at once: two
 * instances on one real redis-server; the demo user is deleted through one,
 * and on the other, on the very next request, its access token, its refresh
 * token, its password and its browser session no longer work.
 */
describeWith(REDIS_SERVER, 'two instances on one Redis: the tokens of a deleted user', () => {
  let redis: RedisServer;
  let a: RunningProcess;
  let b: RunningProcess;

  beforeAll(async () => {
    redis = await startRedis();
    const env = { REDIS_URL: redis.url, RATE_LIMIT: '1000000' };
    a = await startServer(env);
    b = await startServer(env);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  const grant = (url: string, form: Record<string, string>) =>
    request(url)
      .post('/v1/oauth2/token')
      .type('form')
      .send({ client_id: DEMO.clientId, client_secret: DEMO.clientSecret, ...form });
  const createUser = (url: string, headers: Record<string, string>) =>
    request(url).post('/v1/users').set(headers).send({ name: 'Made By Alice', email: freshEmail(), gender: 'female' });

  it('refuses the access token (401 invalid_token), the refresh token, the password and the session right after DELETE', async () => {
    const issued = await grant(a.url, { grant_type: 'password', username: DEMO.username, password: DEMO.password });
    expect(issued.status).toBe(200);
    const bearer = { Authorization: `Bearer ${issued.body.access_token}` };
    const session = await signIn(b.url);
    const browser = { Cookie: session.cookie, 'CSRF-Token': session.csrfToken };
    const subject = JSON.parse(Buffer.from(String(issued.body.access_token).split('.')[1] ?? '', 'base64url').toString()).sub;

    const introspect = (url: string, token: string) =>
      request(url)
        .post('/v1/oauth2/introspections')
        .type('form')
        .send({ token, client_id: DEMO.clientId, client_secret: DEMO.clientSecret });
    expect((await introspect(b.url, issued.body.access_token)).body.active).toBe(true);
    expect((await introspect(b.url, issued.body.refresh_token)).body.active).toBe(true);

    // Before: the token and the session both write, on either instance.
    expect((await createUser(b.url, bearer)).status).toBe(201);
    expect((await createUser(a.url, browser)).status).toBe(201);

    const deleted = await request(a.url).delete(`/v1/users/${subject}`).set(bearer);
    expect(deleted.status).toBe(204);

    // At once, on the other instance: no wait, no poll.
    const refused = await createUser(b.url, bearer);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer realm="reference-server", error="invalid_token", error_description="The user of the access token no longer exists."',
    );
    expect(refused.body).toEqual({ error: 'invalid_token', error_description: 'The user of the access token no longer exists.' });
    expect((await request(a.url).get('/v1/me').set(bearer)).status).toBe(401);
    // Introspection agrees: neither token is active any more.
    expect((await introspect(b.url, issued.body.access_token)).body).toEqual({ active: false });
    expect((await introspect(b.url, issued.body.refresh_token)).body).toEqual({ active: false });

    const refreshed = await grant(b.url, { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');

    const signInAgain = await grant(b.url, { grant_type: 'password', username: DEMO.username, password: DEMO.password });
    expect(signInAgain.status).toBe(400);
    expect(signInAgain.body).toEqual({ error: 'invalid_grant', error_description: 'The username or password is not correct.' });

    // The browser session of the deleted user no longer authenticates a write.
    const sessionWrite = await createUser(a.url, browser);
    expect(sessionWrite.status).toBe(401);
    const newSession = await request(b.url).post('/v1/sessions').send({ username: DEMO.username, password: DEMO.password });
    expect(newSession.status).toBe(401);
    expect(newSession.headers['set-cookie']).toBeUndefined();
  });
});
