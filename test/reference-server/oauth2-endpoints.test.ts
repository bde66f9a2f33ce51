import { execFile } from 'node:child_process';
import { generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { DEFAULT_REVOKED_POLL_INTERVAL_MS } from '../../src/oauth2/redis-revoked-families.js';
import { describeWith, REDIS_SERVER } from '../support/services.js';
import { MACHINE_ALLOWANCE_MS, waitUntil } from '../support/timing.js';
import { DEMO } from './client.js';
import { type ControlledRedis, type RunningProcess, startControlledRedis, startServer } from './harness.js';
import { expectDocumented } from './openapi.js';

/**
 * The token service's endpoints on the reference server: RFC 8414 discovery
 * driven by openid-client itself, RFC 7009 revocation and RFC 7662
 * introspection across two instances sharing one redis-server, and the
 * password grant's RFC 9700 notice at start-up.
 */

const run = promisify(execFile);
const OPENID_CLIENT_SCRIPT = join(__dirname, '..', 'fixtures', 'strict-clients', 'openid-client-discovery.mjs');
const OAUTH4WEBAPI_DPOP_SCRIPT = join(__dirname, '..', 'fixtures', 'strict-clients', 'oauth4webapi-dpop.mjs');
const DEMO_BASIC = `Basic ${Buffer.from(`${DEMO.clientId}:${DEMO.clientSecret}`).toString('base64')}`;

async function passwordGrant(url: string): Promise<{ access_token: string; refresh_token: string }> {
  const res = await request(url)
    .post('/v1/oauth2/token')
    .type('form')
    .set('Authorization', DEMO_BASIC)
    .send({ grant_type: 'password', username: DEMO.username, password: DEMO.password });
  expect(res.status).toBe(200);
  return res.body;
}

const oauthPost = (url: string, path: string, form: Record<string, string>) =>
  request(url).post(path).type('form').set('Authorization', DEMO_BASIC).send(form);
const me = (url: string, token: string) => request(url).get('/v1/me').set('Authorization', `Bearer ${token}`);

describe('reference server: discovery (RFC 8414)', () => {
  let server: RunningProcess;
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT: '100000' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('serves the metadata at /.well-known/oauth-authorization-server, its issuer the URL it is fetched from', async () => {
    const res = await request(server.url).get('/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({
      issuer: server.url,
      token_endpoint: `${server.url}/v1/oauth2/token`,
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      grant_types_supported: ['password', 'refresh_token', 'authorization_code', 'client_credentials'],
      // The authorization code flow (RFC 6749 §4.1 with PKCE S256 only, RFC 9207's iss in every answer).
      authorization_endpoint: `${server.url}/v1/oauth2/authorize`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      scopes_supported: ['users:write', 'exports'],
      revocation_endpoint: `${server.url}/v1/oauth2/revocations`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint: `${server.url}/v1/oauth2/introspections`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      // DPoP is on by default.
      dpop_signing_alg_values_supported: ['ES256', 'RS256', 'PS256'],
    });
    expectDocumented(res);
  });

  it("gives tokens whose `iss` is the metadata's issuer", async () => {
    const { access_token } = await passwordGrant(server.url);
    const payload = JSON.parse(Buffer.from(access_token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    expect(payload.iss).toBe(server.url);
  });

  it.each(['post', 'basic'])(
    'openid-client discovers it from the issuer URL alone, then signs in, refreshes, introspects and revokes (client_secret_%s)',
    async (method) => {
      const { stdout } = await run(
        process.execPath,
        [OPENID_CLIENT_SCRIPT, server.url, DEMO.clientId, DEMO.clientSecret, DEMO.username, DEMO.password, method],
        { timeout: 20_000 },
      );
      const seen = JSON.parse(stdout);
      expect(seen.server.issuer).toBe(server.url);
      expect(seen.server.token_endpoint).toBe(`${server.url}/v1/oauth2/token`);
      expect(seen.tokenType).toBe('bearer');
      expect(seen.expiresIn).toBe(3600);
      expect(seen.meStatus).toBe(200);
      expect(seen.refreshedType).toBe('bearer');
      expect(seen.introspected).toMatchObject({ active: true, client_id: DEMO.clientId, iss: server.url, token_type: 'bearer' });
      // Revoking the refresh token revoked its family: the access token issued with it is no longer active.
      expect(seen.afterRevocation).toEqual({ active: false });
      expect(seen.meAfterStatus).toBe(401);
      expect(seen.refreshAfter).toBe('invalid_grant');
    },
  );
});

describe('reference server with DPOP=1 (RFC 9449)', () => {
  let server: RunningProcess;
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT: '100000', DPOP: '1' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('lists the proof algorithms in its metadata, and oauth4webapi gets DPoP tokens that GET /v1/me takes only with a proof', async () => {
    const metadata = await request(server.url).get('/.well-known/oauth-authorization-server');
    expect(metadata.body.dpop_signing_alg_values_supported).toEqual(['ES256', 'RS256', 'PS256']);
    const { stdout } = await run(
      process.execPath,
      [OAUTH4WEBAPI_DPOP_SCRIPT, server.url, DEMO.clientId, DEMO.clientSecret, DEMO.username, DEMO.password],
      { timeout: 20_000 },
    );
    const seen = JSON.parse(stdout);
    expect(seen.tokenType).toBe('dpop');
    expect(seen.meStatus).toBe(200);
    expect(seen.meBody.name).toBe('Alice Liddell');
    expect(seen.asBearerStatus).toBe(401);
    expect(seen.refreshedType).toBe('dpop');
    expect(seen.meAgainStatus).toBe(200);
    expect(seen.strangerChallenge.status).toBe(401);
  });

  it('challenges GET /v1/me without credentials with DPoP algs too (RFC 9449 §7.1)', async () => {
    const res = await request(server.url).get('/v1/me');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(
      'Bearer realm="reference-server", DPoP realm="reference-server", algs="ES256 RS256 PS256"',
    );
  });

  it('answers 400 invalid_dpop_proof, and logs no error, to a 1024-bit RSA key and to a jwk.kty of constructor', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const sign = (privateKey: KeyObject, alg: 'RS256' | 'ES256', jwk: Record<string, unknown>) =>
      jwt.sign(
        { jti: randomUUID(), iat: Math.floor(Date.now() / 1000), htm: 'POST', htu: `${server.url}/v1/oauth2/token` },
        privateKey,
        { algorithm: alg, allowInsecureKeySizes: true, header: { alg, typ: 'dpop+jwt', jwk } as jwt.JwtHeader },
      );
    const proofs = [
      sign(rsa.privateKey, 'RS256', rsa.publicKey.export({ format: 'jwk' }) as Record<string, unknown>),
      sign(ec.privateKey, 'ES256', {
        ...(ec.publicKey.export({ format: 'jwk' }) as Record<string, unknown>),
        kty: 'constructor',
      }),
    ];
    const logged = server.output().length;
    for (const proof of proofs) {
      const res = await request(server.url)
        .post('/v1/oauth2/token')
        .type('form')
        .set('Authorization', DEMO_BASIC)
        .set('DPoP', proof)
        .send({ grant_type: 'password', username: DEMO.username, password: DEMO.password });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_dpop_proof');
    }
    expect(server.output().slice(logged)).not.toMatch(/"level":"error"|TypeError/);
  });

  it('keeps giving bearer tokens to clients that send no proof', async () => {
    const { access_token } = await passwordGrant(server.url);
    expect((await me(server.url, access_token)).status).toBe(200);
  });
});

describe('reference server: the password grant and RFC 9700 at start-up', () => {
  it('mentions RFC 9700 once in development, and not in production', async () => {
    const development = await startServer({ NODE_ENV: 'development' });
    const production = await startServer({ NODE_ENV: 'production' });
    try {
      await waitUntil(() => development.output().includes('RFC 9700'), 'the development server to mention RFC 9700');
      expect(development.output().match(/RFC 9700/g)).toHaveLength(1);
      expect(development.output()).toMatch(/password grant .*RFC 9700 §2\.4 says it MUST NOT be used/);
      expect(production.output()).not.toMatch(/RFC 9700/);
    } finally {
      await Promise.all([development.stop(), production.stop()]);
    }
  });
});

describeWith(
  REDIS_SERVER,
  'reference server: revocation, introspection and the refresh grace on two instances over one Redis',
  () => {
    let redis: ControlledRedis;
    let a: RunningProcess;
    let b: RunningProcess;
    beforeAll(async () => {
      redis = await startControlledRedis();
      const env = { REDIS_URL: redis.url, RATE_LIMIT: '100000', REFRESH_GRACE: '10' };
      a = await startServer(env);
      b = await startServer(env);
    });
    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await redis?.stop();
    });

    /** Milliseconds until `check` holds. */
    async function timeUntil(check: () => Promise<boolean>, what: string): Promise<number> {
      const started = Date.now();
      await waitUntil(check, what);
      return Date.now() - started;
    }
    // Each instance reads the revoked families from Redis every poll interval (RedisRevokedFamilies' default).
    const SEEN_WITHIN_MS = DEFAULT_REVOKED_POLL_INTERVAL_MS + MACHINE_ALLOWANCE_MS;

    it('both instances name one issuer, and a token from one works on the other', async () => {
      const [metaA, metaB] = await Promise.all([
        request(a.url).get('/.well-known/oauth-authorization-server'),
        request(b.url).get('/.well-known/oauth-authorization-server'),
      ]);
      expect(metaA.body.issuer).toBe(metaB.body.issuer);
      expect((await me(b.url, (await passwordGrant(a.url)).access_token)).status).toBe(200);
    });

    it("revoking a refresh token on A stops its family's access token on B within the second", async () => {
      const tokens = await passwordGrant(a.url);
      expect((await me(b.url, tokens.access_token)).status).toBe(200);
      const revoked = await oauthPost(a.url, '/v1/oauth2/revocations', { token: tokens.refresh_token });
      expect(revoked.status).toBe(200);
      expectDocumented(revoked);
      const elapsed = await timeUntil(async () => (await me(b.url, tokens.access_token)).status === 401, 'a 401 on B');
      expect(elapsed).toBeLessThan(SEEN_WITHIN_MS);
      const refresh = await request(b.url)
        .post('/v1/oauth2/token')
        .type('form')
        .set('Authorization', DEMO_BASIC)
        .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      expect(refresh.status).toBe(400);
      expect(refresh.body.error).toBe('invalid_grant');
    });

    it('revoking an access token on B stops it on A within the revocation poll interval; introspection on A then answers active:false', async () => {
      const tokens = await passwordGrant(a.url);
      const active = await oauthPost(a.url, '/v1/oauth2/introspections', { token: tokens.access_token });
      expect(active.body.active).toBe(true);
      expectDocumented(active);
      expect((await oauthPost(b.url, '/v1/oauth2/revocations', { token: tokens.access_token })).status).toBe(200);
      const elapsed = await timeUntil(async () => (await me(a.url, tokens.access_token)).status === 401, 'a 401 on A');
      expect(elapsed).toBeLessThan(SEEN_WITHIN_MS);
      expect((await oauthPost(a.url, '/v1/oauth2/introspections', { token: tokens.access_token })).body).toEqual({
        active: false,
      });
      expect((await oauthPost(a.url, '/v1/oauth2/introspections', { token: tokens.refresh_token })).body).toEqual({
        active: false,
      });
    });

    it("tells demo-client nothing of the browser page's tokens, on either instance", async () => {
      const browser = await request(a.url)
        .post('/v1/oauth2/token')
        .type('form')
        .send({ grant_type: 'password', username: DEMO.username, password: DEMO.password, client_id: 'browser-page' });
      expect(browser.status).toBe(200);
      for (const url of [a.url, b.url]) {
        for (const token of [browser.body.access_token, browser.body.refresh_token]) {
          const res = await oauthPost(url, '/v1/oauth2/introspections', { token });
          expect(res.status).toBe(200);
          expect(res.body).toEqual({ active: false });
        }
      }
      // Its own tokens it may still introspect.
      const own = await passwordGrant(b.url);
      expect((await oauthPost(a.url, '/v1/oauth2/introspections', { token: own.refresh_token })).body.active).toBe(true);
    });

    it('answers 200 for an unknown token, and 400 invalid_client for a wrong client secret in the body', async () => {
      expect((await oauthPost(b.url, '/v1/oauth2/revocations', { token: 'z'.repeat(43) })).status).toBe(200);
      const wrong = await request(b.url)
        .post('/v1/oauth2/revocations')
        .type('form')
        .send({ token: 'z'.repeat(43), client_id: DEMO.clientId, client_secret: 'wrong' });
      // RFC 6749 §5.2 (which RFC 7009 §2.2.1 refers to): credentials in the body, no challenge: 400.
      expect(wrong.status).toBe(400);
      expect(wrong.body.error).toBe('invalid_client');
      expectDocumented(wrong);
    });

    it('REFRESH_GRACE: a refresh whose answer was lost on A, retried on B, gets the same refresh token; a later reuse revokes', async () => {
      const first = await passwordGrant(a.url);
      const refreshAt = (url: string, token: string) =>
        request(url)
          .post('/v1/oauth2/token')
          .type('form')
          .set('Authorization', DEMO_BASIC)
          .send({ grant_type: 'refresh_token', refresh_token: token });
      const lost = await refreshAt(a.url, first.refresh_token);
      expect(lost.status).toBe(200);
      const retry = await refreshAt(b.url, first.refresh_token);
      expect(retry.status).toBe(200);
      expect(retry.body.refresh_token).toBe(lost.body.refresh_token);
      expect((await me(a.url, retry.body.access_token)).status).toBe(200);
      const next = await refreshAt(b.url, retry.body.refresh_token);
      expect(next.status).toBe(200);
      expect((await refreshAt(a.url, first.refresh_token)).body.error).toBe('invalid_grant');
      expect((await refreshAt(b.url, next.body.refresh_token)).status).toBe(400);
    });

    it('the grace is no ride: one retry per rotation, the same access token, never two rotations retried in a row', async () => {
      const refreshAt = (url: string, token: string) =>
        request(url)
          .post('/v1/oauth2/token')
          .type('form')
          .set('Authorization', DEMO_BASIC)
          .send({ grant_type: 'refresh_token', refresh_token: token });
      const jti = (token: string) => JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')).jti;
      const first = await passwordGrant(a.url);
      // A thief refreshes first; the victim's refresh on B counts as the retry and gets the very same tokens.
      const taken = await refreshAt(a.url, first.refresh_token);
      const late = await refreshAt(b.url, first.refresh_token);
      expect(late.status).toBe(200);
      expect(late.body.refresh_token).toBe(taken.body.refresh_token);
      expect(jti(late.body.access_token)).toBe(jti(taken.body.access_token));
      // A second retry of that rotation is reuse.
      expect((await refreshAt(a.url, first.refresh_token)).body.error).toBe('invalid_grant');
      expect((await refreshAt(b.url, taken.body.refresh_token)).status).toBe(400);
      // The ride: rotate, then the other holder follows within the grace, twice in a row: the second ends the family.
      const second = await passwordGrant(b.url);
      const rt1 = await refreshAt(a.url, second.refresh_token);
      expect((await refreshAt(b.url, second.refresh_token)).status).toBe(200);
      const rt2 = await refreshAt(b.url, rt1.body.refresh_token);
      expect(rt2.status).toBe(200);
      expect((await refreshAt(a.url, rt1.body.refresh_token)).body.error).toBe('invalid_grant');
      expect((await refreshAt(a.url, rt2.body.refresh_token)).status).toBe(400);
    });
  },
);
