import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import {
  authorizeQuery,
  codeOf,
  consentPage as consentPageAt,
  decide as decideAt,
  exchange as exchangeAt,
  PARTNER,
  SPA,
  startAuthorization,
} from './authorization.js';
import { DEMO, serviceAccessToken, signIn } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * The authorization code flow on the reference server (RFC 6749 §4.1,
 * RFC 7636, RFC 9207), over real HTTP: oauth4webapi as a strict client
 * with the demo clients of the contract, the negative cases of RFC 9700,
 * the sign-in and consent pages, and the user's list of consents.
 */

const run = promisify(execFile);
const FIXTURES = resolve(__dirname, '..', 'fixtures', 'strict-clients');

describe('the authorization code flow on the reference server', () => {
  let server: RunningProcess;
  let cookie: string;

  beforeAll(async () => {
    server = await startServer();
    cookie = (await signIn(server.url)).cookie;
  });

  afterAll(async () => {
    await server?.stop();
  });

  /** The code of an approved demo-spa request, with its verifier. */
  async function spaCode(redirectUri: string = SPA.redirectUri): Promise<{ code: string; verifier: string }> {
    const { res, verifier } = await startAuthorization(server.url, cookie, { ...SPA, redirectUri });
    expect(res.status).toBe(302);
    return { code: codeOf(res.headers.location), verifier };
  }

  const exchange = (form: Record<string, string>, basic?: [string, string]) => exchangeAt(server.url, form, basic);

  describe('with oauth4webapi as a strict client', () => {
    const strictFlow = async (client: Record<string, string>) => {
      const input = { issuer: server.url, cookie, client: { ...client, scope: 'users:write' } };
      const { stdout } = await run(
        process.execPath,
        [resolve(FIXTURES, 'oauth4webapi-reference-code-flow.mjs'), JSON.stringify(input)],
        {
          timeout: 20_000,
        },
      );
      return JSON.parse(stdout) as unknown;
    };

    it('demo-spa (public, first party): a code with no consent step, the exchange, a refresh, the code refused twice', async () => {
      expect(await strictFlow(SPA)).toEqual({
        steps: ['302 /v1/oauth2/authorize'],
        landedOn: SPA.redirectUri,
        // RFC 6749 §5.1: the scope granted is the one asked for, so the answer leaves it out.
        tokens: { tokenType: 'bearer', refresh: true },
        me: 200,
        rotated: true,
        replay: { status: 400, error: 'invalid_grant' },
      });
    });

    it('demo-partner (confidential, third party): the consent page first, approved; then Basic authentication at the exchange', async () => {
      expect(await strictFlow(PARTNER)).toEqual({
        steps: ['302 /v1/oauth2/authorize', '200 /consent', '303 /v1/oauth2/decisions'],
        landedOn: PARTNER.redirectUri,
        // RFC 6749 §5.1: the scope granted is the one asked for, so the answer leaves it out.
        tokens: { tokenType: 'bearer', refresh: true },
        me: 200,
        rotated: true,
        replay: { status: 400, error: 'invalid_grant' },
      });
    });

    it('demo-service: client credentials only, a token for itself without a refresh token; a public client is refused', async () => {
      const args = [server.url, 'demo-service', 'service-secret', 'exports', 'demo-spa'];
      const { stdout } = await run(process.execPath, [resolve(FIXTURES, 'oauth4webapi-client-credentials.mjs'), ...args], {
        timeout: 20_000,
      });
      const result = JSON.parse(stdout) as Record<string, unknown>;
      expect(result).toMatchObject({
        tokenType: 'bearer',
        expiresIn: 3600,
        hasRefreshToken: false,
        asPublic: { status: 400, error: 'unauthorized_client' },
        wrongSecret: { status: 401, schemes: ['basic'] },
      });
      const claims = JSON.parse(Buffer.from(String(result.accessToken).split('.')[1] ?? '', 'base64url').toString()) as {
        sub: string;
      };
      expect(claims.sub).toBe('demo-service');
    });
  });

  describe("demo-service's own token at the API (sub is its client_id, no user)", () => {
    it('is accepted where a bearer token is and its scope allows; a route that needs another scope answers 403', async () => {
      const auth = `Bearer ${await serviceAccessToken(server.url)}`;
      expect((await request(server.url).get('/v1/users?limit=1').set('Authorization', auth)).status).toBe(200);
      const exported = await request(server.url).post('/v1/exports').set('Authorization', auth);
      expect(exported.status).toBe(202);
      const written = await request(server.url)
        .post('/v1/users')
        .set('Authorization', auth)
        .send({ name: 'Not Allowed', email: 'machine@example.com', gender: 'female' });
      expect(written.status).toBe(403);
      expect(written.headers['www-authenticate']).toMatch(/^Bearer .*error="insufficient_scope".*scope="users:write"/);
    });

    it('GET /v1/me: 403 forbidden (the token is valid but names no user), never the 404 of a deleted user', async () => {
      const res = await request(server.url)
        .get('/v1/me')
        .set('Authorization', `Bearer ${await serviceAccessToken(server.url)}`);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        errors: [
          { code: 40300, message: "This access token is a client's own (client credentials): /v1/me needs a user's token." },
        ],
      });
      expect(res.headers['cache-control']).toBe('no-store, max-age=0');
    });
  });

  describe('the negative cases: refused as the RFCs say, never a redirect to an unregistered URI', () => {
    const authorize = (query: string) =>
      request(server.url).get(`/v1/oauth2/authorize?${query}`).set('Cookie', cookie).set('Accept', 'application/json');

    it.each([
      ['an unknown client', { client_id: 'nobody' }],
      ['an unregistered redirect URI', { redirect_uri: 'http://127.0.0.1:53682/elsewhere' }],
      ['a look-alike host', { redirect_uri: 'http://127.0.0.1.evil.example/callback' }],
      ['user information before the host', { redirect_uri: 'http://127.0.0.1@evil.example/callback' }],
      ['user information before the loopback IP', { redirect_uri: 'http://evil.example@127.0.0.1/callback' }],
      ['a fragment', { redirect_uri: 'http://127.0.0.1:53682/callback#x' }],
      ['localhost on another port', { redirect_uri: 'http://localhost:5174/callback' }],
      ['https for an http registration', { redirect_uri: 'https://127.0.0.1/callback' }],
      ['no redirect URI', { redirect_uri: undefined }],
      ["another client's redirect URI", { redirect_uri: 'http://127.0.0.1:53682/partner/callback' }],
    ])('%s: 400 JSON, no Location', async (_name, overrides) => {
      const res = await authorize(authorizeQuery(SPA, overrides));
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.headers['cache-control']).toBe('no-store, max-age=0');
      expect(Object.keys(res.body as object).sort()).toEqual(['error', 'error_description']);
      expect((res.body as { error: string }).error).toMatch(/^invalid_(request|client)$/);
    });

    it.each([
      ['no PKCE', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
      ['PKCE plain', { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
      ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
      ['a scope the service does not have', { scope: 'users:delete-all' }, 'invalid_scope'],
    ])('%s: back to the registered redirect URI with error, state and iss', async (_name, overrides, error) => {
      const res = await authorize(authorizeQuery(SPA, overrides));
      expect(res.status).toBe(302);
      const location = new URL(res.headers.location ?? '');
      expect(`${location.origin}${location.pathname}`).toBe(SPA.redirectUri);
      expect(location.searchParams.get('error')).toBe(error);
      expect(location.searchParams.get('state')).toBe('state-1');
      expect(location.searchParams.get('iss')).toBe(server.url);
      expect(location.searchParams.get('code')).toBeNull();
    });

    it('a client not registered for the grant (demo-service) is not sent anything: it has no redirect URI', async () => {
      const res = await authorize(authorizeQuery({ clientId: 'demo-service', redirectUri: SPA.redirectUri }));
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
    });

    it('a wrong verifier, another redirect URI, another client: invalid_grant; the code is spent, its owner refused too', async () => {
      const { code, verifier } = await spaCode();
      const wrongVerifier = await exchange({
        code,
        redirect_uri: SPA.redirectUri,
        client_id: SPA.clientId,
        code_verifier: 'x'.repeat(43),
      });
      expect([wrongVerifier.status, wrongVerifier.body]).toEqual([400, expect.objectContaining({ error: 'invalid_grant' })]);
      const other = await spaCode();
      const wrongUri = await exchange({
        code: other.code,
        redirect_uri: 'http://127.0.0.1:53682/other',
        client_id: SPA.clientId,
        code_verifier: other.verifier,
      });
      expect([wrongUri.status, wrongUri.body]).toEqual([400, expect.objectContaining({ error: 'invalid_grant' })]);
      const third = await spaCode();
      const otherClient = await exchange({ code: third.code, redirect_uri: SPA.redirectUri, code_verifier: third.verifier }, [
        PARTNER.clientId,
        PARTNER.clientSecret,
      ]);
      expect([otherClient.status, otherClient.body]).toEqual([400, expect.objectContaining({ error: 'invalid_grant' })]);
      // Any presentation uses the code up (RFC 6749 §4.1.2): a failed one leaves nothing to redeem for its owner.
      const owner = await exchange({ code, redirect_uri: SPA.redirectUri, client_id: SPA.clientId, code_verifier: verifier });
      expect([owner.status, owner.body.error]).toEqual([400, 'invalid_grant']);
    });

    it('a code presented twice: invalid_grant, and the refresh token it issued is revoked', async () => {
      const { code, verifier } = await spaCode();
      const form = { code, redirect_uri: SPA.redirectUri, client_id: SPA.clientId, code_verifier: verifier };
      const first = await exchange(form);
      expect(first.status).toBe(200);
      const second = await exchange(form);
      expect([second.status, second.body]).toEqual([400, expect.objectContaining({ error: 'invalid_grant' })]);
      const refresh = await request(server.url)
        .post('/v1/oauth2/token')
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: SPA.clientId });
      expect([refresh.status, refresh.body.error]).toEqual([400, 'invalid_grant']);
    });

    it('the password grant stays for demo-client only: demo-spa asking for it is unauthorized_client', async () => {
      const res = await request(server.url)
        .post('/v1/oauth2/token')
        .type('form')
        .send({ grant_type: 'password', username: DEMO.username, password: DEMO.password, client_id: SPA.clientId });
      expect([res.status, res.body.error]).toEqual([400, 'unauthorized_client']);
    });
  });

  describe('the sign-in page', () => {
    const returnTo = () => `/v1/oauth2/authorize?${authorizeQuery(SPA)}`;

    it('with no session, the endpoint sends the browser there with the request as returnTo, never a code', async () => {
      const query = authorizeQuery(SPA);
      const res = await request(server.url).get(`/v1/oauth2/authorize?${query}`);
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe(`/sign-in?${new URLSearchParams({ returnTo: `/v1/oauth2/authorize?${query}` })}`);
    });

    it('is a form with username, password and one submit button, no script, under the CSP', async () => {
      const res = await request(server.url).get(`/sign-in?${new URLSearchParams({ returnTo: returnTo() })}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe("script-src 'self'");
      expect(res.text).toContain('<input name="username"');
      expect(res.text).toContain('<input type="password" name="password"');
      expect(res.text.match(/<button type="submit"/g)).toHaveLength(1);
      expect(res.text).not.toMatch(/<script|\son\w+=|javascript:|style=/i);
    });

    it('signs in and goes back (303) to the authorization request, with a SameSite=Lax session cookie', async () => {
      const back = returnTo();
      const res = await request(server.url)
        .post('/sign-in')
        .type('form')
        .send({ username: DEMO.username, password: DEMO.password, returnTo: back });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(back);
      const setCookie = (res.headers['set-cookie'] as unknown as string[]).find((line) => line.startsWith('__Host-session='));
      expect(setCookie).toMatch(/; Path=\/; Expires=[^;]+ GMT; HttpOnly; Secure; SameSite=Lax$/);
    });

    it.each([
      ['another origin', 'https://evil.example/v1/oauth2/authorize?client_id=demo-spa'],
      ['a scheme-relative URL', '//evil.example/v1/oauth2/authorize'],
      ['a backslash', '/\\evil.example/v1/oauth2/authorize'],
      ['another path of this server', '/v1/users'],
    ])('never an open redirect: returnTo of %s signs in and stays on the page', async (_name, back) => {
      const res = await request(server.url)
        .post('/sign-in')
        .type('form')
        .send({ username: DEMO.username, password: DEMO.password, returnTo: back });
      expect(res.status).toBe(200);
      expect(res.headers.location).toBeUndefined();
      expect(res.text).toContain('You are signed in.');
    });

    it('a wrong password: 401, the form again with the same returnTo, one message for every failure', async () => {
      const back = returnTo();
      const res = await request(server.url)
        .post('/sign-in')
        .type('form')
        .send({ username: DEMO.username, password: 'not-the-password', returnTo: back });
      expect(res.status).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.text).toContain('The username or password is not right.');
      expect(res.text).toContain(`name="returnTo" value="${back.replaceAll('&', '&amp;')}"`);
      const unknown = await request(server.url).post('/sign-in').type('form').send({ username: 'nobody', password: 'x' });
      expect(unknown.status).toBe(401);
      expect(unknown.text).toContain('The username or password is not right.');
    });

    it('a sign-in posted from another site is refused (Fetch Metadata)', async () => {
      const res = await request(server.url)
        .post('/sign-in')
        .set('Sec-Fetch-Site', 'cross-site')
        .type('form')
        .send({ username: DEMO.username, password: DEMO.password });
      expect(res.status).toBe(403);
      expect(res.headers['set-cookie']).toBeUndefined();
    });
  });

  describe('the consent page and the decision', () => {
    /** A signed-in user of their own, so that consents given in other tests do not count. */
    async function consentPage(scope = 'users:write') {
      const session = await signIn(server.url);
      // The demo user's earlier approvals (other tests) are withdrawn: the page is asked for afresh.
      await request(server.url)
        .delete('/v1/consents/demo-partner')
        .set('Cookie', session.cookie)
        .set('CSRF-Token', session.csrfToken);
      const res = await request(server.url)
        .get(`/v1/oauth2/authorize?${authorizeQuery(PARTNER, { scope })}`)
        .set('Cookie', session.cookie);
      expect(res.status).toBe(302);
      expect(res.headers.location).toMatch(/^\/consent\?request=/);
      return { session, ...(await consentPageAt(server.url, session.cookie, res.headers.location ?? '')) };
    }

    const decide = (cookieHeader: string, form: Record<string, string>) => decideAt(server.url, cookieHeader, form);

    it('names the client and the scopes, with an approve and a deny button, and no script', async () => {
      const { page } = await consentPage('users:write exports');
      expect(page.status).toBe(200);
      expect(page.headers['content-security-policy']).toBe("script-src 'self'");
      expect(page.text).toContain('<strong>Demo Partner</strong>');
      expect(page.text).toContain('<code>users:write</code>');
      expect(page.text).toContain('<code>exports</code>');
      expect(page.text).toContain('<button type="submit" name="decision" value="approve">');
      expect(page.text).toContain('<button type="submit" name="decision" value="deny">');
      expect(page.text).not.toMatch(/<script|\son\w+=|javascript:|style=/i);
    });

    it('deny: back to the client with error=access_denied, state and iss (303), and nothing remembered', async () => {
      const { session, fields } = await consentPage();
      const res = await decide(session.cookie, { ...fields, decision: 'deny' });
      expect(res.status).toBe(303);
      const location = new URL(res.headers.location ?? '');
      expect(`${location.origin}${location.pathname}`).toBe(PARTNER.redirectUri);
      expect(Object.fromEntries(location.searchParams)).toEqual({
        error: 'access_denied',
        error_description: 'The user denied the request.',
        state: 'state-1',
        iss: server.url,
      });
      const consents = await request(server.url)
        .get('/v1/consents')
        .set('Cookie', session.cookie)
        .set('X-Requested-With', 'XMLHttpRequest');
      expect(consents.body).toEqual({ consents: [] });
    });

    it("is CSRF-protected twice: without the session's token 403 JSON, without the request's token 403; nothing issued", async () => {
      const { session, fields } = await consentPage();
      const withoutSessionToken = await decide(session.cookie, {
        request: fields.request,
        csrf_token: fields.csrf_token,
        decision: 'approve',
      });
      expect(withoutSessionToken.status).toBe(403);
      expect(withoutSessionToken.headers['content-type']).toMatch(/^application\/(problem\+)?json/);
      expect(withoutSessionToken.headers.location).toBeUndefined();
      const withoutRequestToken = await decide(session.cookie, {
        request: fields.request,
        _csrf: fields._csrf,
        decision: 'approve',
      });
      expect(withoutRequestToken.status).toBe(403);
      expect(withoutRequestToken.headers.location).toBeUndefined();
      const other = await signIn(server.url);
      const anotherUsersPage = await decide(other.cookie, { ...fields, decision: 'approve' });
      expect(anotherUsersPage.status).toBe(403);
    });

    it('approve: a code; the consent is remembered, listed, and once withdrawn the page comes back', async () => {
      const { session, fields } = await consentPage();
      const approved = await decide(session.cookie, { ...fields, decision: 'approve' });
      expect(approved.status).toBe(303);
      expect(new URL(approved.headers.location ?? '').searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const again = await startAuthorization(server.url, session.cookie, PARTNER);
      expect(codeOf(again.res.headers.location)).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const tokens = await exchange(
        { code: codeOf(again.res.headers.location), redirect_uri: PARTNER.redirectUri, code_verifier: again.verifier },
        [PARTNER.clientId, PARTNER.clientSecret],
      );
      expect(tokens.status).toBe(200);

      const listed = await request(server.url)
        .get('/v1/consents')
        .set('Cookie', session.cookie)
        .set('X-Requested-With', 'XMLHttpRequest');
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual({
        consents: [
          {
            clientId: 'demo-partner',
            clientName: 'Demo Partner',
            scopes: ['users:write'],
            grantedAt: expect.stringMatching(/Z$/),
          },
        ],
      });
      const withdrawn = await request(server.url)
        .delete('/v1/consents/demo-partner')
        .set('Cookie', session.cookie)
        .set('CSRF-Token', session.csrfToken);
      expect(withdrawn.status).toBe(204);
      // The client is cut off: the refresh token it held for this user is refused.
      const refresh = await request(server.url)
        .post('/v1/oauth2/token')
        .type('form')
        .auth(PARTNER.clientId, PARTNER.clientSecret)
        .send({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token });
      expect([refresh.status, refresh.body.error]).toEqual([400, 'invalid_grant']);
      const asked = await request(server.url)
        .get(`/v1/oauth2/authorize?${authorizeQuery(PARTNER)}`)
        .set('Cookie', session.cookie);
      expect(asked.headers.location).toMatch(/^\/consent\?request=/);
      const gone = await request(server.url)
        .delete('/v1/consents/demo-partner')
        .set('Cookie', session.cookie)
        .set('CSRF-Token', session.csrfToken);
      expect(gone.status).toBe(404);
    });

    it("the consents: a read by cookie is for the page's scripts, a withdrawal needs the CSRF token; a bearer token works too", async () => {
      const session = await signIn(server.url);
      const noXhr = await request(server.url).get('/v1/consents').set('Cookie', session.cookie);
      expect(noXhr.status).toBe(403);
      const noCsrf = await request(server.url).delete('/v1/consents/demo-partner').set('Cookie', session.cookie);
      expect(noCsrf.status).toBe(403);
      const anonymous = await request(server.url).get('/v1/consents').set('X-Requested-With', 'XMLHttpRequest');
      expect(anonymous.status).toBe(401);
      const token = (
        await request(server.url).post('/v1/oauth2/token').type('form').send({
          grant_type: 'password',
          username: DEMO.username,
          password: DEMO.password,
          client_id: DEMO.clientId,
          client_secret: DEMO.clientSecret,
        })
      ).body.access_token as string;
      const byBearer = await request(server.url).get('/v1/consents').set('Authorization', `Bearer ${token}`);
      expect(byBearer.status).toBe(200);
      expect(Array.isArray(byBearer.body.consents)).toBe(true);
    });
  });
});
