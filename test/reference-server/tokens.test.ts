import request from 'supertest';
import { DEMO, freshEmail, signIn } from './client.js';
import { type RunningProcess, startServer } from './harness.js';
import { expectDocumented } from './openapi.js';

/**
 * The token endpoint and bearer authentication of the reference server
 * (docs/conventions.md section 13), black box, state in memory.
 */

let server: RunningProcess;
const api = () => request(server.url);
const TTL = 1800;

beforeAll(async () => {
  server = await startServer({ ACCESS_TOKEN_TTL: String(TTL), RATE_LIMIT: '100000' });
});

afterAll(async () => {
  await server?.stop();
});

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  scope?: string;
}

async function passwordGrant(fields: Record<string, string> = {}, authorization?: string): Promise<request.Response> {
  const test = api().post('/v1/oauth2/token').type('form');
  if (authorization) test.set('Authorization', authorization);
  return test.send({ grant_type: 'password', username: DEMO.username, password: DEMO.password, ...fields });
}

async function tokens(fields: Record<string, string> = {}): Promise<TokenResponse> {
  const res = await passwordGrant(fields, basic(DEMO.clientId, DEMO.clientSecret));
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${res.text}`);
  return res.body as TokenResponse;
}

describe('POST /v1/oauth2/token', () => {
  describe('password grant', () => {
    it('answers 200 with access_token, token_type bearer, expires_in of ACCESS_TOKEN_TTL and refresh_token', async () => {
      const res = await passwordGrant({}, basic(DEMO.clientId, DEMO.clientSecret));
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store, max-age=0');
      expect(res.headers.pragma).toBeUndefined();
      expect(res.body).toEqual({
        access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
        token_type: 'bearer',
        expires_in: TTL,
        refresh_token: expect.stringMatching(/^[\w-]{43,}$/),
        scope: 'users:write exports',
      });
      expectDocumented(res);
    });

    it('authenticates the demo client with Authorization: Basic', async () => {
      const res = await passwordGrant({}, basic(DEMO.clientId, DEMO.clientSecret));
      expect(res.status).toBe(200);
    });

    it('authenticates the demo client with client_id and client_secret in the body', async () => {
      const res = await passwordGrant({ client_id: DEMO.clientId, client_secret: DEMO.clientSecret });
      expect(res.status).toBe(200);
    });

    it('refuses a wrong client secret with 401 invalid_client', async () => {
      const res = await passwordGrant({}, basic(DEMO.clientId, 'not-the-secret'));
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.headers.pragma).toBe('no-cache');
      expectDocumented(res);
    });

    it('refuses wrong client credentials in the body with 400 invalid_client and no challenge (RFC 6749 §5.2)', async () => {
      const res = await passwordGrant({ client_id: DEMO.clientId, client_secret: 'not-the-secret' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed.' });
      expect(res.headers['www-authenticate']).toBeUndefined();
      expectDocumented(res);
    });

    it('answers a wrong password and an unknown user alike: 400 invalid_grant with Pragma: no-cache', async () => {
      const wrong = await passwordGrant({ password: 'guess' });
      const unknown = await passwordGrant({ username: 'mallory', password: 'guess' });
      expect(wrong.status).toBe(400);
      expect(wrong.body.error).toBe('invalid_grant');
      expect(unknown.status).toBe(400);
      expect(unknown.body).toEqual(wrong.body);
      expect(wrong.headers.pragma).toBe('no-cache');
      expect(wrong.headers['cache-control']).toBe('no-store, max-age=0');
      expectDocumented(wrong);
    });

    it('refuses a JSON body: the endpoint takes application/x-www-form-urlencoded', async () => {
      const res = await api()
        .post('/v1/oauth2/token')
        .send({ grant_type: 'password', username: DEMO.username, password: DEMO.password });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    });
  });

  describe('refresh grant', () => {
    it('rotates: a new pair, and the old refresh token is refused', async () => {
      const first = await tokens();
      const refresh = (token: string) =>
        api()
          .post('/v1/oauth2/token')
          .type('form')
          .set('Authorization', basic(DEMO.clientId, DEMO.clientSecret))
          .send({ grant_type: 'refresh_token', refresh_token: token });
      const second = await refresh(first.refresh_token);
      expect(second.status).toBe(200);
      expect(second.body.refresh_token).not.toBe(first.refresh_token);
      expect(second.body.access_token).not.toBe(first.access_token);
      expectDocumented(second);
      // Within the default 10 s grace, a confidential client's retry (its answer was lost) is answered once, the same pair.
      const retry = await refresh(first.refresh_token);
      expect(retry.status).toBe(200);
      expect(retry.body.refresh_token).toBe(second.body.refresh_token);
      const reused = await refresh(first.refresh_token);
      expect(reused.status).toBe(400);
      expect(reused.body.error).toBe('invalid_grant');
      // Reuse revokes the whole family: the newest token stops working too.
      expect((await refresh(second.body.refresh_token)).status).toBe(400);
    });
  });
});

describe('bearer tokens', () => {
  it('GET /v1/me answers the token’s own user with Cache-Control: no-store, max-age=0', async () => {
    const { access_token } = await tokens();
    const res = await api().get('/v1/me').set('Authorization', `Bearer ${access_token}`);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store, max-age=0');
    expect(res.text).toBe(
      '{"id":4611686018427387911,"id_str":"4611686018427387911","name":"Alice Liddell","email":"alice@example.com","gender":"female","createdAt":"2026-01-05T09:30:00.000Z","updatedAt":"2026-01-05T09:30:00.000Z"}',
    );
    expectDocumented(res);
  });

  it('GET /v1/me takes a bearer token only, not the session cookie', async () => {
    const session = await signIn(server.url);
    const res = await api().get('/v1/me').set('Cookie', session.cookie);
    expect(res.status).toBe(401);
    // DPoP is on by default: both schemes are offered, DPoP with its algorithms (RFC 9449 §7.1).
    expect(res.headers['www-authenticate']).toBe(
      'Bearer realm="reference-server", DPoP realm="reference-server", algs="ES256 RS256 PS256"',
    );
  });

  it('answers an invalid token with 401, application/json, no-store, Pragma: no-cache and error invalid_token', async () => {
    const { access_token } = await tokens();
    const tampered = `${access_token.slice(0, -4)}AAAA`;
    for (const token of [tampered, 'not-a-token']) {
      const res = await api().get('/v1/me').set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.pragma).toBe('no-cache');
      expect(res.body).toEqual({ error: 'invalid_token', error_description: expect.any(String) });
      expectDocumented(res);
    }
  });

  it('writes with a token that has users:write, with no CSRF token (no cookie, nothing to forge)', async () => {
    const { access_token } = await tokens();
    const res = await api()
      .post('/v1/users')
      .set('Authorization', `Bearer ${access_token}`)
      .send({ name: 'Tess Token', email: freshEmail(), gender: 'female' });
    expect(res.status).toBe(201);
  });

  it('refuses a write to a token without the users:write scope with 403', async () => {
    const { access_token } = await tokens({ scope: 'exports' });
    const res = await api()
      .post('/v1/users')
      .set('Authorization', `Bearer ${access_token}`)
      .send({ name: 'Sam Scope', email: freshEmail(), gender: 'male' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: 'insufficient_scope',
      error_description: 'The access token lacks the scope: users:write.',
    });
    expectDocumented(res);
  });

  it('asks for an export with the exports scope', async () => {
    const { access_token } = await tokens({ scope: 'exports' });
    const res = await api().post('/v1/exports').set('Authorization', `Bearer ${access_token}`);
    expect(res.status).toBe(202);
  });

  it('answers a write without credentials with 401 and the Bearer challenge of its realm', async () => {
    const res = await api().delete('/v1/users/4611686018427387911');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="reference-server"');
  });
});
