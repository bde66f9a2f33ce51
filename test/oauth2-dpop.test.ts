import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import express, { type Express } from 'express';
import { RedisRefreshTokenStore, tokenRouter } from 'express-api-conventions-authorization-server';
import jwt from 'jsonwebtoken';
import { createClient } from 'redis';
import request from 'supertest';
import { ConfigurationError } from '../src/config/index.js';
import { errorHandler, notFound } from '../src/errors/index.js';
import { DEFAULT_DPOP_REPLAY_ENTRIES, DpopVerifier, readDpopOptions } from '../src/oauth2/dpop.js';
import {
  bearerAuth,
  type DpopOptions,
  type DpopReplayStore,
  dpopAuth,
  MemoryDpopReplayStore,
  RedisDpopReplayStore,
  requireScope,
} from '../src/oauth2/index.js';
import { StoreUnavailableError } from '../src/stores/index.js';
import { ALICE, AUDIENCE, basic, decodeJwt, KEYS, SCOPES, seedStores, TOKEN_OPTIONS } from './support/oauth2.js';
import { rawExchange } from './support/raw-http.js';
import { closeServer, describeWith, REDIS_SERVER, type RedisServer, startRedis } from './support/services.js';

/**
 * DPoP (RFC 9449), opt-in: tokens bound to the client's key at the token
 * endpoint, and dpopAuth() requiring a proof of that key on each request.
 */

const run = promisify(execFile);
const OAUTH4WEBAPI_SCRIPT = join(__dirname, 'fixtures', 'strict-clients', 'oauth4webapi-dpop.mjs');
const DEMO = basic('demo-client', 'demo-secret');

interface ProofKey {
  readonly privateKey: KeyObject;
  readonly jwk: Record<string, unknown>;
}

const newKey = (): ProofKey => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, jwk: publicKey.export({ format: 'jwk' }) as Record<string, unknown> };
};

/** A DPoP proof signed with `key`, with any claim or header overridden. */
function proof(key: ProofKey, claims: Record<string, unknown>, header: Record<string, unknown> = {}): string {
  return jwt.sign({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims }, key.privateKey, {
    algorithm: 'ES256',
    header: { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk, ...header } as jwt.JwtHeader,
  });
}

const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

/** An authorization server and a resource on one listening app whose issuer is its own URL. */
async function start(
  replay: DpopReplayStore = new MemoryDpopReplayStore(),
  publicUrl?: string,
  dpopExtra: Omit<DpopOptions, 'replay'> = {},
): Promise<{ server: Server; url: string; app: Express }> {
  const app = express();
  const server = createServer(app);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  // Instances behind one address share it as issuer and origin, whatever port each listens on.
  const url = publicUrl ?? `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const stores = await seedStores();
  app.use(
    tokenRouter({
      ...TOKEN_OPTIONS,
      issuer: url,
      scopes: SCOPES,
      ...stores,
      introspectors: { 'demo-client': 'own-tokens' },
      dpop: { replay, ...dpopExtra },
    }),
  );
  const auth = dpopAuth({ keys: KEYS, issuer: url, audience: AUDIENCE, origin: url, dpop: { replay, ...dpopExtra } });
  app.get('/v1/me', auth, (req, res) => {
    res.json({ subject: req.auth?.subject, clientId: req.auth?.clientId });
  });
  // A scope no token of this server holds.
  app.get('/v1/audits', auth, requireScope('audits:read'), (_req, res) => {
    res.json({ audits: [] });
  });
  app.use(notFound(), errorHandler({ production: true, log: false }));
  return { server, url, app };
}

const tokenRequest = (url: string, form: Record<string, string>, dpop?: string) => {
  const req = request(url).post('/v1/oauth2/token').type('form').set('Authorization', DEMO);
  if (dpop !== undefined) req.set('DPoP', dpop);
  return req.send(form);
};

describe('DPoP (RFC 9449)', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    ({ server, url } = await start());
  });
  afterAll(async () => {
    await closeServer(server);
  });

  const signIn = async (key: ProofKey) => {
    const res = await tokenRequest(url, ALICE, proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` }));
    expect(res.status).toBe(200);
    return res.body as { access_token: string; refresh_token: string; token_type: string };
  };
  const me = (token: string, dpop: string | undefined, scheme = 'DPoP') => {
    const req = request(url).get('/v1/me').set('Authorization', `${scheme} ${token}`);
    if (dpop !== undefined) req.set('DPoP', dpop);
    return req;
  };
  const meProof = (key: ProofKey, token: string, claims: Record<string, unknown> = {}) =>
    proof(key, { htm: 'GET', htu: `${url}/v1/me`, ath: ath(token), ...claims });

  describe('at the token endpoint', () => {
    it('binds the access token to the proof key: token_type DPoP and cnf.jkt, the RFC 7638 thumbprint', async () => {
      const key = newKey();
      const tokens = await signIn(key);
      expect(tokens.token_type).toBe('DPoP');
      const { crv, kty, x, y } = key.jwk;
      const jkt = createHash('sha256').update(JSON.stringify({ crv, kty, x, y })).digest('base64url');
      expect(decodeJwt(tokens.access_token).payload.cnf).toEqual({ jkt });
    });

    it('gives a bearer token, as rule 13.4 describes, to a request without a proof', async () => {
      const res = await tokenRequest(url, ALICE);
      expect(res.status).toBe(200);
      expect(res.body.token_type).toBe('bearer');
      expect(decodeJwt(res.body.access_token).payload.cnf).toBeUndefined();
    });

    it.each([
      ['another method', { htm: 'GET' }, {}],
      ['another URL', { htm: 'POST', htu: 'http://127.0.0.1:1/v1/oauth2/token' }, {}],
      ['an iat ten minutes old', { htm: 'POST', iat: Math.floor(Date.now() / 1000) - 600 }, {}],
      ['another typ', { htm: 'POST' }, { typ: 'JWT' }],
      ['a private key in the header', { htm: 'POST' }, { jwk: { ...newKey().jwk, d: 'AAAA' } }],
    ])('answers 400 invalid_dpop_proof to a proof with %s', async (_name, claims, header) => {
      const key = newKey();
      const res = await tokenRequest(url, ALICE, proof(key, { htu: `${url}/v1/oauth2/token`, ...claims }, header));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_dpop_proof');
      expect(res.headers['cache-control']).toBe('no-store, max-age=0');
    });

    it('refuses a proof used twice (jti replay)', async () => {
      const key = newKey();
      const once = proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` });
      expect((await tokenRequest(url, ALICE, once)).status).toBe(200);
      const again = await tokenRequest(url, ALICE, once);
      expect(again.status).toBe(400);
      expect(again.body).toEqual({ error: 'invalid_dpop_proof', error_description: 'The DPoP proof was used before.' });
    });

    it('binds the refreshed access token to the proof of the refresh', async () => {
      const key = newKey();
      const tokens = await signIn(key);
      const res = await tokenRequest(
        url,
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
        proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` }),
      );
      expect(res.body.token_type).toBe('DPoP');
      expect(decodeJwt(res.body.access_token).payload.cnf).toEqual(decodeJwt(tokens.access_token).payload.cnf);
    });

    describe('refresh tokens of a public client (RFC 9449 §5)', () => {
      const publicSignIn = async (key: ProofKey) => {
        const res = await request(url)
          .post('/v1/oauth2/token')
          .type('form')
          .set('DPoP', proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` }))
          .send({ ...ALICE, client_id: 'public-app' });
        expect(res.body.token_type).toBe('DPoP');
        return res.body.refresh_token as string;
      };
      const refreshAs = (token: string, dpop?: string) => {
        const req = request(url).post('/v1/oauth2/token').type('form');
        if (dpop !== undefined) req.set('DPoP', dpop);
        return req.send({ grant_type: 'refresh_token', refresh_token: token, client_id: 'public-app' });
      };

      it('are bound to the key: refused without a proof or with another key, accepted with a proof of the key', async () => {
        const key = newKey();
        const refreshToken = await publicSignIn(key);
        for (const dpop of [undefined, proof(newKey(), { htm: 'POST', htu: `${url}/v1/oauth2/token` })]) {
          const res = await refreshAs(refreshToken, dpop);
          expect(res.status).toBe(400);
          expect(res.body).toEqual({
            error: 'invalid_dpop_proof',
            error_description: 'The refresh token is bound to a DPoP key: send a proof of that key.',
          });
        }
        const ok = await refreshAs(refreshToken, proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` }));
        expect(ok.status).toBe(200);
        // The binding goes with the family through rotation.
        expect((await refreshAs(ok.body.refresh_token)).status).toBe(400);
      });

      it('of a confidential client are not bound: its refresh without a proof gets a bearer token', async () => {
        const tokens = await signIn(newKey());
        const res = await tokenRequest(url, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
        expect(res.status).toBe(200);
        expect(res.body.token_type).toBe('bearer');
      });
    });

    it('introspects a bound token as token_type DPoP with its cnf (RFC 9449 §6.2)', async () => {
      const tokens = await signIn(newKey());
      const res = await request(url)
        .post('/v1/oauth2/introspections')
        .type('form')
        .set('Authorization', DEMO)
        .send({ token: tokens.access_token });
      expect(res.body).toMatchObject({ active: true, token_type: 'DPoP', cnf: decodeJwt(tokens.access_token).payload.cnf });
    });

    it('lists the proof algorithms in the metadata', async () => {
      const res = await request(url).get('/.well-known/oauth-authorization-server');
      expect(res.body.dpop_signing_alg_values_supported).toEqual(['ES256', 'RS256', 'PS256']);
    });
  });

  describe('at the resource: dpopAuth()', () => {
    it('answers a bound token without the scope 403 insufficient_scope, challenged in the DPoP scheme (RFC 9449 §7.1)', async () => {
      const key = newKey();
      const { access_token: token } = await signIn(key);
      const res = await request(url)
        .get('/v1/audits')
        .set('Authorization', `DPoP ${token}`)
        .set('DPoP', proof(key, { htm: 'GET', htu: `${url}/v1/audits`, ath: ath(token) }));
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        error: 'insufficient_scope',
        error_description: 'The access token lacks the scope: audits:read.',
      });
      expect(res.headers['www-authenticate']).toMatch(
        /^DPoP realm="api", algs="[A-Z0-9 ]+", error="insufficient_scope", scope="audits:read", error_description="The access token lacks the scope: audits:read\."$/,
      );
    });

    it('accepts the bound token with a proof of its key for this method, URL and token', async () => {
      const key = newKey();
      const { access_token } = await signIn(key);
      const res = await me(access_token, meProof(key, access_token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ subject: 'u-1', clientId: 'demo-client' });
    });

    it.each([
      ['no proof', () => undefined, 'Exactly one DPoP proof is required.'],
      [
        'a proof of another key',
        (_k: ProofKey, t: string) => meProof(newKey(), t),
        'The DPoP proof key is not the key the token is bound to.',
      ],
      [
        'a proof for another token (ath)',
        (k: ProofKey) => meProof(k, 'other'),
        'The DPoP proof ath does not match the access token.',
      ],
      [
        'a proof for POST',
        (k: ProofKey, t: string) => meProof(k, t, { htm: 'POST' }),
        'The DPoP proof htm does not match the request method.',
      ],
      [
        'a proof for another path',
        (k: ProofKey, t: string) => meProof(k, t, { htu: `${url}/v1/users` }),
        'The DPoP proof htu does not match the request URL.',
      ],
      [
        'a proof listing a critical header extension (RFC 7515 §4.1.11)',
        (k: ProofKey, t: string) =>
          proof(k, { htm: 'GET', htu: `${url}/v1/me`, ath: ath(t) }, { crit: ['urn:example:ext'], 'urn:example:ext': 1 }),
        'The DPoP proof requires a header extension this service does not support.',
      ],
    ])('refuses %s with 401 invalid_dpop_proof and the DPoP challenge', async (_name, makeProof, description) => {
      const key = newKey();
      const { access_token } = await signIn(key);
      const res = await me(access_token, makeProof(key, access_token));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid_dpop_proof', error_description: description });
      expect(res.headers['www-authenticate']).toBe(
        `DPoP realm="api", algs="ES256 RS256 PS256", error="invalid_dpop_proof", error_description="${description}"`,
      );
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.pragma).toBe('no-cache');
    });

    it('compares htu after RFC 3986 normalization, without query and fragment', async () => {
      const key = newKey();
      const { access_token } = await signIn(key);
      const htu = `${url.replace('http://', 'HTTP://')}/v1/./me?page=2#top`;
      expect((await me(access_token, meProof(key, access_token, { htu }))).status).toBe(200);
    });

    it('refuses a proof replayed on the resource', async () => {
      const key = newKey();
      const { access_token } = await signIn(key);
      const once = meProof(key, access_token);
      expect((await me(access_token, once)).status).toBe(200);
      const replay = await me(access_token, once);
      expect(replay.status).toBe(401);
      expect(replay.body.error_description).toBe('The DPoP proof was used before.');
    });

    it('refuses the bound token presented as a bearer token (no downgrade), here and in bearerAuth()', async () => {
      const key = newKey();
      const { access_token } = await signIn(key);
      const res = await me(access_token, undefined, 'Bearer');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid_token', error_description: 'The access token is bound to a DPoP key.' });
      const plain = express();
      plain.get('/v1/me', bearerAuth({ keys: KEYS, issuer: url, audience: AUDIENCE }), (_req, r) => {
        r.json({});
      });
      plain.use(notFound(), errorHandler({ production: true, log: false }));
      expect((await request(plain).get('/v1/me').set('Authorization', `Bearer ${access_token}`)).status).toBe(401);
    });

    it('still accepts a plain bearer token (a client that sent no proof)', async () => {
      const { access_token } = (await tokenRequest(url, ALICE)).body;
      expect((await me(access_token, undefined, 'Bearer')).status).toBe(200);
      // A bearer token is not bound: presented with the DPoP scheme, it is refused.
      const key = newKey();
      expect((await me(access_token, meProof(key, access_token))).body.error_description).toBe(
        'The access token is not bound to a DPoP key.',
      );
    });
  });

  it('works end to end with oauth4webapi’s own DPoP support', async () => {
    const { stdout } = await run(
      process.execPath,
      [OAUTH4WEBAPI_SCRIPT, url, 'demo-client', 'demo-secret', 'alice', 'wonderland-rabbit-hole'],
      {
        timeout: 20_000,
      },
    );
    const seen = JSON.parse(stdout);
    expect(seen.metadataAlgs).toEqual(['ES256', 'RS256', 'PS256']);
    expect(seen.tokenType).toBe('dpop');
    expect(seen.meStatus).toBe(200);
    expect(seen.meBody).toEqual({ subject: 'u-1', clientId: 'demo-client' });
    expect(seen.asBearerStatus).toBe(401);
    expect(seen.refreshedType).toBe('dpop');
    expect(seen.meAgainStatus).toBe(200);
    expect(seen.nonceRetries).toBe(0);
    expect(seen.strangerChallenge).toEqual({
      status: 401,
      challenges: [
        {
          scheme: 'dpop',
          parameters: {
            realm: 'api',
            algs: 'ES256 RS256 PS256',
            error: 'invalid_dpop_proof',
            error_description: 'The DPoP proof key is not the key the token is bound to.',
          },
        },
      ],
    });
  });

  describe('server nonces (RFC 9449 §8, §9)', () => {
    let nonceServer: Server;
    let nonceUrl: string;
    beforeAll(async () => {
      ({ server: nonceServer, url: nonceUrl } = await start(new MemoryDpopReplayStore(), undefined, {
        nonce: { secret: 'a-dpop-nonce-secret-of-32-bytes-at-least' },
      }));
    });
    afterAll(async () => {
      await closeServer(nonceServer);
    });

    it('asks for a nonce at the token endpoint (400 use_dpop_nonce, DPoP-Nonce) and accepts the proof that carries it', async () => {
      const key = newKey();
      const htu = `${nonceUrl}/v1/oauth2/token`;
      const first = await tokenRequest(nonceUrl, ALICE, proof(key, { htm: 'POST', htu }));
      expect(first.status).toBe(400);
      expect(first.body.error).toBe('use_dpop_nonce');
      const nonce = first.headers['dpop-nonce'] as string;
      expect(nonce).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const second = await tokenRequest(nonceUrl, ALICE, proof(key, { htm: 'POST', htu, nonce }));
      expect(second.status).toBe(200);
      expect(second.body.token_type).toBe('DPoP');
      // A made-up nonce is refused as a missing one.
      const forged = await tokenRequest(nonceUrl, ALICE, proof(key, { htm: 'POST', htu, nonce: `${nonce.slice(0, -2)}AA` }));
      expect(forged.body.error).toBe('use_dpop_nonce');
    });

    it('asks for it at the resource with 401 and WWW-Authenticate: DPoP error="use_dpop_nonce"', async () => {
      const key = newKey();
      const htu = `${nonceUrl}/v1/oauth2/token`;
      const nonce = (await tokenRequest(nonceUrl, ALICE, proof(key, { htm: 'POST', htu }))).headers['dpop-nonce'];
      const { access_token } = (await tokenRequest(nonceUrl, ALICE, proof(key, { htm: 'POST', htu, nonce }))).body;
      const claims = { htm: 'GET', htu: `${nonceUrl}/v1/me`, ath: ath(access_token) };
      const without = await request(nonceUrl)
        .get('/v1/me')
        .set('Authorization', `DPoP ${access_token}`)
        .set('DPoP', proof(key, claims));
      expect(without.status).toBe(401);
      expect(without.headers['www-authenticate']).toMatch(/^DPoP realm="api", algs="ES256 RS256 PS256", error="use_dpop_nonce"/);
      expect(without.headers['dpop-nonce']).toEqual(expect.any(String));
      const withNonce = await request(nonceUrl)
        .get('/v1/me')
        .set('Authorization', `DPoP ${access_token}`)
        .set('DPoP', proof(key, { ...claims, nonce: without.headers['dpop-nonce'] }));
      expect(withNonce.status).toBe(200);
    });

    it('oauth4webapi follows the nonce challenges by itself', async () => {
      const { stdout } = await run(
        process.execPath,
        [OAUTH4WEBAPI_SCRIPT, nonceUrl, 'demo-client', 'demo-secret', 'alice', 'wonderland-rabbit-hole'],
        { timeout: 20_000 },
      );
      const seen = JSON.parse(stdout);
      expect(seen.tokenType).toBe('dpop');
      expect(seen.meStatus).toBe(200);
      expect(seen.meAgainStatus).toBe(200);
      // Asked once, at the token endpoint: oauth4webapi keeps a nonce per origin, and the resource shares that
      // origin and the secret, so every later proof carried a current nonce.
      expect(seen.nonceRetries).toBe(1);
    });
  });

  describe('the DPoP algorithms offered in a challenge', () => {
    const rsaKey = (bits: number): ProofKey => {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
      return { privateKey, jwk: publicKey.export({ format: 'jwk' }) as Record<string, unknown> };
    };
    const rsaProof = (key: ProofKey, algorithm: 'RS256' | 'PS256') =>
      jwt.sign(
        { jti: randomUUID(), iat: Math.floor(Date.now() / 1000), htm: 'POST', htu: `${url}/v1/oauth2/token` },
        key.privateKey,
        {
          algorithm,
          allowInsecureKeySizes: true,
          header: { alg: algorithm, typ: 'dpop+jwt', jwk: key.jwk } as jwt.JwtHeader,
        },
      );

    it.each([
      ['RS256', 512],
      ['RS256', 1024],
      ['PS256', 1024],
      ['RS256', 2047],
    ] as const)('refuses a %s proof made with a %i-bit RSA key: 400 invalid_dpop_proof (RFC 7518 §3.3)', async (alg, bits) => {
      const res = await tokenRequest(url, ALICE, rsaProof(rsaKey(bits), alg));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'invalid_dpop_proof',
        error_description: 'The DPoP proof key is shorter than 2048 bits.',
      });
    });

    it.each(['RS256', 'PS256'] as const)('accepts a %s proof made with a 2048-bit RSA key', async (alg) => {
      const res = await tokenRequest(url, ALICE, rsaProof(rsaKey(2048), alg));
      expect(res.status).toBe(200);
      expect(res.body.token_type).toBe('DPoP');
    });

    it.each([
      ['kty', 'constructor'],
      ['kty', '__proto__'],
      ['kty', 'toString'],
      ['kty', 'hasOwnProperty'],
      ['crv', 'constructor'],
      ['crv', '__proto__'],
      ['crv', 'toString'],
    ])('answers 400 invalid_dpop_proof, never 500, to a jwk whose %s is %s, and logs no error', async (member, value) => {
      const logged: unknown[] = [];
      const app = express();
      app.use(tokenRouter({ ...TOKEN_OPTIONS, issuer: url, scopes: SCOPES, ...(await seedStores()), dpop: true }));
      app.use(notFound(), errorHandler({ production: true, log: (entry) => logged.push(entry) }));
      const key = newKey();
      const res = await request(app)
        .post('/v1/oauth2/token')
        .type('form')
        .set('Authorization', DEMO)
        .set('DPoP', proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` }, { jwk: { ...key.jwk, [member]: value } }))
        .send(ALICE);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_dpop_proof');
      expect(logged).toEqual([]);
    });

    it('challenges a request without credentials with both schemes, DPoP naming its algs (RFC 9449 §7.1)', async () => {
      const res = await request(url).get('/v1/me');
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api", DPoP realm="api", algs="ES256 RS256 PS256"');
      const bad = await request(url).get('/v1/me').set('Authorization', 'Bearer not-a-token');
      expect(bad.status).toBe(401);
      expect(bad.headers['www-authenticate']).toMatch(
        /^Bearer realm="api", error="invalid_token", error_description="[^"]*", DPoP realm="api", algs="ES256 RS256 PS256"$/,
      );
    });

    it('spends a proof only once the grant is accepted: a wrong password leaves its jti unspent and the store unwritten', async () => {
      const replay = new MemoryDpopReplayStore();
      const own = await start(replay);
      try {
        const once = proof(newKey(), { htm: 'POST', htu: `${own.url}/v1/oauth2/token` });
        const wrong = await tokenRequest(own.url, { ...ALICE, password: 'wrong' }, once);
        expect(wrong.status).toBe(400);
        expect(wrong.body.error).toBe('invalid_grant');
        expect(replay.size).toBe(0);
        const bad = await tokenRequest(own.url, { grant_type: 'refresh_token', refresh_token: 'z'.repeat(43) }, once);
        expect(bad.body.error).toBe('invalid_grant');
        expect(replay.size).toBe(0);
        expect((await tokenRequest(own.url, ALICE, once)).status).toBe(200);
        expect(replay.size).toBe(1);
        expect((await tokenRequest(own.url, ALICE, once)).body.error_description).toBe('The DPoP proof was used before.');
      } finally {
        await closeServer(own.server);
      }
    });

    it('of two concurrent requests with one proof, exactly one gets tokens', async () => {
      const once = proof(newKey(), { htm: 'POST', htu: `${url}/v1/oauth2/token` });
      const answers = await Promise.all([tokenRequest(url, ALICE, once), tokenRequest(url, ALICE, once)]);
      expect(answers.map((res) => res.status).sort()).toEqual([200, 400]);
    });
  });

  describe('MemoryDpopReplayStore, bounded', () => {
    it(`remembers at most maxEntries proofs (default ${DEFAULT_DPOP_REPLAY_ENTRIES}); when full of live ones it refuses with a store failure`, async () => {
      expect(DEFAULT_DPOP_REPLAY_ENTRIES).toBe(100_000);
      const store = new MemoryDpopReplayStore({ maxEntries: 3 });
      const later = Date.now() + 60_000;
      for (const key of ['a', 'b', 'c']) expect(await store.remember(key, later)).toBe(true);
      expect(await store.remember('a', later)).toBe(false);
      await expect(store.remember('d', later)).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(store.size).toBe(3);
    });

    it('drops expired proofs to make room', async () => {
      const store = new MemoryDpopReplayStore({ maxEntries: 2 });
      expect(await store.remember('old', Date.now() - 1)).toBe(true);
      expect(await store.remember('b', Date.now() + 60_000)).toBe(true);
      expect(await store.remember('c', Date.now() + 60_000)).toBe(true);
      expect(store.size).toBe(2);
    });

    it('answers 503 with Retry-After at the token endpoint when full', async () => {
      const replay = new MemoryDpopReplayStore({ maxEntries: 1 });
      const own = await start(replay);
      try {
        expect(
          (await tokenRequest(own.url, ALICE, proof(newKey(), { htm: 'POST', htu: `${own.url}/v1/oauth2/token` }))).status,
        ).toBe(200);
        const full = await tokenRequest(own.url, ALICE, proof(newKey(), { htm: 'POST', htu: `${own.url}/v1/oauth2/token` }));
        expect(full.status).toBe(503);
        expect(full.body.error).toBe('temporarily_unavailable');
        expect(full.headers['retry-after']).toBeDefined();
      } finally {
        await closeServer(own.server);
      }
    });

    it('refuses a wrong maxEntries at construction', () => {
      for (const maxEntries of [0, -1, 1.5, '10']) {
        expect(() => new MemoryDpopReplayStore({ maxEntries: maxEntries as never })).toThrow(ConfigurationError);
      }
    });
  });

  it('refuses DPoP with an issuer that is not a URL, and a wrong dpop option, at construction', async () => {
    const { users } = await seedStores();
    expect(() => tokenRouter({ ...TOKEN_OPTIONS, users, issuer: 'urn:x', dpop: true })).toThrow(ConfigurationError);
    expect(() => tokenRouter({ ...TOKEN_OPTIONS, users, dpop: { algorithms: ['HS256' as never] } })).toThrow(ConfigurationError);
    expect(() => dpopAuth({ keys: KEYS, issuer: 'x', audience: AUDIENCE, origin: 'https://a.example/path' })).toThrow(
      ConfigurationError,
    );
  });
});

describeWith(REDIS_SERVER, 'DPoP proofs replayed on another instance, over one real redis-server', () => {
  let redis: RedisServer;
  const clients: { quit(): Promise<unknown> }[] = [];
  const servers: Server[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(servers.map(closeServer));
    await Promise.all(clients.map((client) => client.quit()));
    await redis?.stop();
  });

  it('a proof accepted by one instance is refused by the other', async () => {
    const store = async () => {
      const client = createClient({ url: redis.url });
      await client.connect();
      clients.push(client);
      return new RedisDpopReplayStore({ client, prefix: 'dpop-test:' });
    };
    // Two listening instances, each with its own Redis connection, behind one public address (A's).
    const a = await start(await store());
    const b = await start(await store(), a.url);
    servers.push(a.server, b.server);
    const bAddress = `http://127.0.0.1:${(b.server.address() as AddressInfo).port}`;
    const key = newKey();
    const shared = proof(key, { htm: 'POST', htu: `${a.url}/v1/oauth2/token` });
    expect((await tokenRequest(a.url, ALICE, shared)).status).toBe(200);
    const replayed = await tokenRequest(bAddress, ALICE, shared);
    expect(replayed.status).toBe(400);
    expect(replayed.body).toEqual({ error: 'invalid_dpop_proof', error_description: 'The DPoP proof was used before.' });
    // A fresh proof of the same key is accepted by B: the refusal was the replay, not the instance.
    expect((await tokenRequest(bAddress, ALICE, proof(key, { htm: 'POST', htu: `${a.url}/v1/oauth2/token` }))).status).toBe(200);
  });

  it('a proof whose grant one instance refused is given back: the other accepts it once, then both refuse it', async () => {
    const store = async () => {
      const client = createClient({ url: redis.url });
      await client.connect();
      clients.push(client);
      return new RedisDpopReplayStore({ client, prefix: 'dpop-release-test:' });
    };
    const a = await start(await store());
    const b = await start(await store(), a.url);
    servers.push(a.server, b.server);
    const bAddress = `http://127.0.0.1:${(b.server.address() as AddressInfo).port}`;
    const once = proof(newKey(), { htm: 'POST', htu: `${a.url}/v1/oauth2/token` });
    expect((await tokenRequest(a.url, { ...ALICE, password: 'guess' }, once)).status).toBe(400);
    expect((await tokenRequest(bAddress, ALICE, once)).status).toBe(200);
    const replayed = await tokenRequest(a.url, ALICE, once);
    expect(replayed.body).toEqual({ error: 'invalid_dpop_proof', error_description: 'The DPoP proof was used before.' });
  });

  it('RedisRefreshTokenStore keeps the family’s DPoP binding through find and rotation', async () => {
    const client = createClient({ url: redis.url });
    await client.connect();
    clients.push(client);
    const store = new RedisRefreshTokenStore({ client, prefix: 'dpop-family:' });
    const family = { familyId: 'f', subject: 'u-1', clientId: 'public-app', scopes: [], jkt: 'thumbprint' };
    await store.create(family, 'h0', Date.now() + 60_000);
    expect(await store.find('h0')).toEqual({ ...family, clientId: 'public-app', current: true });
    expect(await store.rotate('h0', 'h1', Date.now() + 60_000)).toEqual({ status: 'rotated', family });
    const unbound = { familyId: 'g', subject: 'u-1', clientId: undefined, scopes: [] };
    await store.create(unbound, 'g0', Date.now() + 60_000);
    expect(await store.find('g0')).toEqual({ ...unbound, current: true });
  });
});

describe('a known DPoP key at the password grant', () => {
  it('signs the owner in on every try while three addresses keep the username delayed; another key is delayed', async () => {
    const { server, url, app } = await start();
    // Each request names its address in X-Forwarded-For, as behind a proxy.
    app.set('trust proxy', true);
    try {
      const htu = `${url}/v1/oauth2/token`;
      const owner = newKey();
      const grant = (password: string, address: string, key?: ProofKey) => {
        const req = request(url).post('/v1/oauth2/token').type('form').set('X-Forwarded-For', address);
        if (key) req.set('DPoP', proof(key, { htm: 'POST', htu }));
        return req.send({ ...ALICE, password });
      };
      expect((await grant(ALICE.password, '198.51.100.7', owner)).status).toBe(200);
      for (let i = 1; i <= 3; i++) expect((await grant('guess', `192.0.2.${i}`)).status).toBe(400);
      expect((await grant(ALICE.password, '198.51.100.8')).status).toBe(429);
      expect((await grant(ALICE.password, '198.51.100.9', newKey())).status).toBe(429);
      for (let i = 0; i < 5; i++) expect((await grant(ALICE.password, `198.51.100.${20 + i}`, owner)).status).toBe(200);
    } finally {
      await closeServer(server);
    }
  });
});

describe('a replayed proof at the token endpoint changes nothing', () => {
  const refresh = (url: string, token: string, dpop: string) =>
    request(url)
      .post('/v1/oauth2/token')
      .type('form')
      .set('DPoP', dpop)
      .send({ grant_type: 'refresh_token', refresh_token: token, client_id: 'public-app' });
  const publicSignIn = async (url: string, key: ProofKey) => {
    const res = await request(url)
      .post('/v1/oauth2/token')
      .type('form')
      .set('DPoP', proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` }))
      .send({ ...ALICE, client_id: 'public-app' });
    expect(res.status).toBe(200);
    return res.body.refresh_token as string;
  };

  it('answers a replayed refresh request 400 invalid_dpop_proof, and the family lives on', async () => {
    const { server, url } = await start();
    try {
      const key = newKey();
      const token = await publicSignIn(url, key);
      const once = proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` });
      const first = await refresh(url, token, once);
      expect(first.status).toBe(200);
      const replayed = await refresh(url, token, once);
      expect(replayed.status).toBe(400);
      expect(replayed.body).toEqual({ error: 'invalid_dpop_proof', error_description: 'The DPoP proof was used before.' });
      const next = await refresh(url, first.body.refresh_token, proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` }));
      expect(next.status).toBe(200);
    } finally {
      await closeServer(server);
    }
  });

  it('answers a replay-store failure 503 with Retry-After, revokes nothing, and the retry works', async () => {
    const inner = new MemoryDpopReplayStore();
    let failing = false;
    const flaky: DpopReplayStore = {
      remember: (key, expiresAtMs) =>
        failing
          ? Promise.reject(new StoreUnavailableError('test replay store', 'Full for a moment.'))
          : inner.remember(key, expiresAtMs),
    };
    const { server, url } = await start(flaky);
    try {
      const key = newKey();
      const token = await publicSignIn(url, key);
      failing = true;
      const failed = await refresh(url, token, proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` }));
      expect(failed.status).toBe(503);
      expect(Number(failed.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      failing = false;
      const retried = await refresh(url, token, proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` }));
      expect(retried.status).toBe(200);
      const next = await refresh(url, retried.body.refresh_token, proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` }));
      expect(next.status).toBe(200);
    } finally {
      await closeServer(server);
    }
  });

  it('gives the proof back when the grant is refused: the same proof then works with the right password', async () => {
    const { server, url } = await start();
    try {
      const key = newKey();
      const once = proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` });
      const send = (password: string) =>
        request(url)
          .post('/v1/oauth2/token')
          .type('form')
          .set('DPoP', once)
          .send({ ...ALICE, password, client_id: 'public-app' });
      expect((await send('guess')).status).toBe(400);
      expect((await send(ALICE.password)).status).toBe(200);
      expect((await send(ALICE.password)).status).toBe(400);
    } finally {
      await closeServer(server);
    }
  });
});

describe('DpopVerifier: keys and claims', () => {
  const verifier = new DpopVerifier(readDpopOptions('test', {}));
  const URL = 'https://api.example.test/v1/me';
  const rsaProof = (publicExponent: number) => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent });
    return jwt.sign({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), htm: 'GET', htu: URL }, privateKey, {
      algorithm: 'RS256',
      header: { alg: 'RS256', typ: 'dpop+jwt', jwk: publicKey.export({ format: 'jwk' }) } as jwt.JwtHeader,
    });
  };
  /** A proof whose signature is broken (its last characters changed). */
  const unsigned = (claims: Record<string, unknown>) => {
    const signed = proof(newKey(), claims);
    return `${signed.slice(0, -4)}${signed.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
  };

  it('accepts an RSA key whose exponent is 65537 and refuses any other', () => {
    expect(verifier.check(rsaProof(65537), { method: 'GET', url: URL }).jkt).toEqual(expect.any(String));
    expect(() => verifier.check(rsaProof(3), { method: 'GET', url: URL })).toThrow(
      'The DPoP proof RSA key exponent must be 65537.',
    );
  });

  it.each([
    [
      'a stale iat',
      { htm: 'GET', htu: URL, iat: Math.floor(Date.now() / 1000) - 3600 },
      'The DPoP proof iat is outside the accepted window.',
    ],
    ['another method', { htm: 'POST', htu: URL }, 'The DPoP proof htm does not match the request method.'],
    [
      'another URL',
      { htm: 'GET', htu: 'https://api.example.test/v1/other' },
      'The DPoP proof htu does not match the request URL.',
    ],
  ])('refuses %s before checking the signature', (_name, claims, message) => {
    expect(() => verifier.check(unsigned(claims), { method: 'GET', url: URL })).toThrow(message);
  });

  it('never matches a URL that does not parse, even against one that does not parse either', () => {
    expect(() => verifier.check(proof(newKey(), { htm: 'GET', htu: 'http://[' }), { method: 'GET', url: 'http://[' })).toThrow(
      'The DPoP proof htu does not match the request URL.',
    );
  });
});

describe('dpopAuth(): the expected URL from the parsed request path', () => {
  it('refuses a proof whose htu does not parse, sent with an absolute-form request line', async () => {
    const { server, url } = await start();
    try {
      const key = newKey();
      const tokens = await tokenRequest(url, ALICE, proof(key, { htm: 'POST', htu: `${url}/v1/oauth2/token` }));
      expect(tokens.status).toBe(200);
      const port = (server.address() as AddressInfo).port;
      const ask = (target: string, htu: string) =>
        rawExchange(port, {
          pieces: [
            `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: DPoP ${tokens.body.access_token}\r\n` +
              `DPoP: ${proof(key, { htm: 'GET', htu, ath: ath(tokens.body.access_token) })}\r\nConnection: close\r\n\r\n`,
          ],
        });
      // The path of an absolute-form target is the path; its host is not ours.
      expect((await ask('http://x/v1/me', `${url}/v1/me`)).status).toBe(200);
      expect((await ask('http://x/v1/me', 'http://[')).status).toBe(401);
    } finally {
      await closeServer(server);
    }
  });
});
