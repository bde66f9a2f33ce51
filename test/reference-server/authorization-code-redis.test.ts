import request from 'supertest';
import { DEFAULT_REVOKED_POLL_INTERVAL_MS } from '../../src/oauth2/redis-revoked-families.js';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../support/services.js';
import { MACHINE_ALLOWANCE_MS, waitUntil } from '../support/timing.js';
import { codeOf, consentPage, decide, exchange, PARTNER, SPA, startAuthorization } from './authorization.js';
import { type BrowserSession, serviceAccessToken, signIn } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * The authorization code flow on two instances over one Redis (REDIS_URL):
 * the session, the code, the consent and the tokens live in Redis, so a
 * browser or a client may reach either instance at any step, and a replayed
 * code or a withdrawn consent is seen by both.
 */
describeWith(REDIS_SERVER, 'the authorization code flow on two instances over one Redis', () => {
  let redis: RedisServer;
  let a: RunningProcess;
  let b: RunningProcess;

  beforeAll(async () => {
    redis = await startRedis();
    [a, b] = await Promise.all([startServer({ REDIS_URL: redis.url }), startServer({ REDIS_URL: redis.url })]);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  const refreshAt = (url: string, refreshToken: string, client: { clientId: string; clientSecret?: string }) => {
    const call = request(url).post('/v1/oauth2/token').type('form');
    const form = { grant_type: 'refresh_token', refresh_token: refreshToken };
    return client.clientSecret
      ? call.auth(client.clientId, client.clientSecret).send(form)
      : call.send({ ...form, client_id: client.clientId });
  };

  /** demo-spa's code, asked for on `url` by the browser with `cookie`, with its verifier. */
  async function spaCode(url: string, cookie: string) {
    const { res, verifier } = await startAuthorization(url, cookie, SPA);
    expect(res.status).toBe(302);
    const code = codeOf(res.headers.location);
    return { code, verifier, form: { code, redirect_uri: SPA.redirectUri, client_id: SPA.clientId, code_verifier: verifier } };
  }

  it('a code asked for on A (the session signed in on A) is exchanged on B with PKCE; the refresh works on A', async () => {
    const session = await signIn(a.url);
    const { form } = await spaCode(a.url, session.cookie);
    const exchanged = await exchange(b.url, form);
    expect(exchanged.status).toBe(200);
    expect(exchanged.headers['cache-control']).toBe('no-store, max-age=0');
    expect(exchanged.body).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      expires_in: expect.any(Number),
      refresh_token: expect.any(String),
    });
    const me = await request(a.url).get('/v1/me').set('Authorization', `Bearer ${exchanged.body.access_token}`);
    expect(me.status).toBe(200);
    const refreshed = await refreshAt(a.url, exchanged.body.refresh_token, SPA);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toEqual(expect.any(String));
    expect(refreshed.body.refresh_token).not.toBe(exchanged.body.refresh_token);
  });

  it('a wrong verifier on B is refused, and spends the code: its owner then gets invalid_grant on A too', async () => {
    const session = await signIn(a.url);
    const { form } = await spaCode(a.url, session.cookie);
    const wrong = await exchange(b.url, { ...form, code_verifier: 'x'.repeat(43) });
    expect([wrong.status, wrong.body.error]).toEqual([400, 'invalid_grant']);
    const owner = await exchange(a.url, form);
    expect([owner.status, owner.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('a code replayed on B after A redeemed it: invalid_grant, and what it issued is revoked on both instances', async () => {
    const session = await signIn(a.url);
    const { form } = await spaCode(a.url, session.cookie);
    const first = await exchange(a.url, form);
    expect(first.status).toBe(200);
    const replayed = await exchange(b.url, form);
    expect([replayed.status, replayed.body]).toEqual([400, expect.objectContaining({ error: 'invalid_grant' })]);
    for (const url of [b.url, a.url]) {
      const refused = await refreshAt(url, first.body.refresh_token, SPA);
      expect([refused.status, refused.body.error]).toEqual([400, 'invalid_grant']);
    }
    // The access token it issued stops on both within the interval revocations are read at.
    const revokedAt = Date.now();
    const bearer = `Bearer ${first.body.access_token}`;
    await waitUntil(async () => {
      const statuses = await Promise.all(
        [a, b].map(async (each) => (await request(each.url).get('/v1/me').set('Authorization', bearer)).status),
      );
      return statuses.every((status) => status === 401);
    }, 'a 401 on both instances');
    expect(Date.now() - revokedAt).toBeLessThan(DEFAULT_REVOKED_POLL_INTERVAL_MS + MACHINE_ALLOWANCE_MS);
  });

  it('the same code at both instances at once: it is redeemed once, the other is a replay, nothing it issued works', async () => {
    const session = await signIn(a.url);
    const { form } = await spaCode(b.url, session.cookie);
    const answers = await Promise.all([exchange(a.url, form), exchange(b.url, form)]);
    // The replay may come before the winner stored its tokens: the winner then refuses too (RFC 6749 §4.1.2).
    const refused = answers.filter((res) => res.status !== 200);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const res of refused) expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
    for (const res of answers.filter((each) => each.status === 200)) {
      const refresh = await refreshAt(b.url, res.body.refresh_token, SPA);
      expect([refresh.status, refresh.body.error]).toEqual([400, 'invalid_grant']);
    }
  });

  describe("demo-partner's consent", () => {
    let session: BrowserSession;

    /** demo-partner's authorization request on `url` by the signed-in browser. */
    const ask = (url: string) => startAuthorization(url, session.cookie, PARTNER);
    const partnerBasic = [PARTNER.clientId, PARTNER.clientSecret] as const;

    beforeAll(async () => {
      session = await signIn(a.url);
    });

    it('given on A is remembered on B (no consent page), and withdrawn on B cuts the client off on A', async () => {
      const first = await ask(a.url);
      expect(first.res.status).toBe(302);
      expect(first.res.headers.location).toMatch(/^\/consent\?request=/);
      const { fields } = await consentPage(a.url, session.cookie, first.res.headers.location ?? '');
      const approved = await decide(a.url, session.cookie, { ...fields, decision: 'approve' });
      expect(approved.status).toBe(303);
      codeOf(approved.headers.location);

      const onB = await ask(b.url);
      expect(onB.res.status).toBe(302);
      const code = codeOf(onB.res.headers.location);
      const tokens = await exchange(
        b.url,
        { code, redirect_uri: PARTNER.redirectUri, code_verifier: onB.verifier },
        partnerBasic,
      );
      expect(tokens.status).toBe(200);
      expect((await refreshAt(a.url, tokens.body.refresh_token, PARTNER)).status).toBe(200);
      const latest = await refreshAt(a.url, tokens.body.refresh_token, PARTNER);
      // Within the grace, the same rotation answers again (RFC 9700 §4.14.2 retries).
      expect(latest.status).toBe(200);

      const withdrawn = await request(b.url)
        .delete('/v1/consents/demo-partner')
        .set('Cookie', session.cookie)
        .set('CSRF-Token', session.csrfToken);
      expect(withdrawn.status).toBe(204);
      const refused = await refreshAt(a.url, latest.body.refresh_token, PARTNER);
      expect([refused.status, refused.body.error]).toEqual([400, 'invalid_grant']);
      // Its access token stops on A too, within the interval revocations are read at.
      const withdrawnAt = Date.now();
      const bearer = `Bearer ${latest.body.access_token}`;
      await waitUntil(async () => (await request(a.url).get('/v1/me').set('Authorization', bearer)).status === 401, 'a 401 on A');
      expect(Date.now() - withdrawnAt).toBeLessThan(DEFAULT_REVOKED_POLL_INTERVAL_MS + MACHINE_ALLOWANCE_MS);
      const askedAgain = await ask(a.url);
      expect(askedAgain.res.headers.location).toMatch(/^\/consent\?request=/);
    });
  });

  it("a client-credentials token from A works on B, with the client as the token's subject", async () => {
    const token = await serviceAccessToken(a.url);
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { sub: string };
    expect(claims.sub).toBe('demo-service');
    const users = await request(b.url).get('/v1/users?limit=1').set('Authorization', `Bearer ${token}`);
    expect(users.status).toBe(200);
    const exported = await request(b.url).post('/v1/exports').set('Authorization', `Bearer ${token}`);
    expect(exported.status).toBe(202);
  });
});
