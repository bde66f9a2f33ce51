import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import { type AccessTokenKey, type AsymmetricAlgorithm, bearerAuth } from 'express-api-conventions/oauth2';
import request from 'supertest';
import { expectHeaders } from '../../test/helpers.js';
import { ALICE, AUDIENCE, decodeJwt, postToken, seedStores, TOKEN_OPTIONS } from '../../test/support/oauth2.js';
import { tokenRouter } from '../src/index.js';

/**
 * The token service publishes its public keys (RFC 7517) at the metadata's
 * `jwks_uri` when it signs asymmetrically, so that another service verifies
 * its tokens with bearerAuth({ issuer, audience }) alone; and a key rotation
 * done in the documented order never refuses a good token.
 */

const PAIRS: Record<AsymmetricAlgorithm, () => KeyObject> = {
  ES256: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
  EdDSA: () => generateKeyPairSync('ed25519').privateKey,
  RS256: () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
};

/** A server on 127.0.0.1 whose app can be swapped (a token service restarted with other keys), and its issuer URL. */
async function swappableServer(): Promise<{ issuer: string; server: Server; use(app: Express): void }> {
  let current: Express | undefined;
  const server = createServer((req, res) => current?.(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    issuer: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    use: (app) => {
      current = app;
    },
  };
}

async function tokenService(issuer: string, keys: AccessTokenKey[]): Promise<Express> {
  const app = express();
  app.use(tokenRouter({ ...TOKEN_OPTIONS, ...(await seedStores()), issuer, keys }));
  return app;
}

async function accessToken(app: Express): Promise<string> {
  const res = await postToken(app, ALICE);
  expect(res.status).toBe(200);
  return res.body.access_token;
}

/** Another service: it knows the issuer and its own audience, and nothing else. */
function resourceServer(issuer: string, jwks?: { cooldownSeconds: number }): Express {
  const app = express();
  app.get('/v1/me', bearerAuth({ issuer, audience: AUDIENCE, ...(jwks === undefined ? {} : { jwks }) }), (req, res) => {
    res.json({ subject: req.auth?.subject });
  });
  return app;
}

const me = (app: Express, token: string) => request(app).get('/v1/me').set('Authorization', `Bearer ${token}`);

describe.each(Object.keys(PAIRS) as AsymmetricAlgorithm[])('tokenRouter() signing with %s', (algorithm) => {
  let running: Awaited<ReturnType<typeof swappableServer>>;
  let service: Express;
  beforeAll(async () => {
    running = await swappableServer();
    service = await tokenService(running.issuer, [{ kid: `${algorithm}-1`, algorithm, privateKey: PAIRS[algorithm]() }]);
    running.use(service);
  });
  afterAll(() => new Promise<void>((resolve) => running.server.close(() => resolve())));

  it('names jwks_uri in its metadata (RFC 8414 §2)', async () => {
    const metadata = (await request(service).get('/.well-known/oauth-authorization-server')).body;
    expect(metadata.jwks_uri).toBe(`${running.issuer}/v1/oauth2/keys`);
  });

  it('serves its public keys there, with kid, alg and use, no private member, Cache-Control and a strong ETag', async () => {
    const res = await request(service).get('/v1/oauth2/keys');
    expect(res.status).toBe(200);
    expectHeaders(res, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'public, max-age=300' });
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
    expect(res.body.keys).toHaveLength(1);
    expect(res.body.keys[0]).toMatchObject({ kid: `${algorithm}-1`, alg: algorithm, use: 'sig' });
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(res.body.keys[0]).not.toHaveProperty(member);
    const again = await request(service)
      .get('/v1/oauth2/keys')
      .set('If-None-Match', res.headers.etag as string);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('issues tokens another service verifies through jwks_uri discovery alone', async () => {
    const token = await accessToken(service);
    expect(decodeJwt(token).header).toEqual({ alg: algorithm, typ: 'at+jwt', kid: `${algorithm}-1` });
    const res = await me(resourceServer(running.issuer), token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ subject: 'u-1' });
  });
});

describe('tokenRouter() signing with HS256', () => {
  it('publishes no key and names no jwks_uri: the secret stays secret', async () => {
    const service = await tokenService('http://127.0.0.1:3000', [
      { kid: 'h', algorithm: 'HS256', secret: 'a-test-secret-of-at-least-32-bytes-long!' },
    ]);
    expect((await request(service).get('/.well-known/oauth-authorization-server')).body).not.toHaveProperty('jwks_uri');
    expect((await request(service).get('/v1/oauth2/keys')).status).toBe(404);
  });
});

describe('key rotation in the documented order (docs/bearer-auth.md)', () => {
  it('add the next key, publish, switch signing, retire the old one: no good token is ever refused', async () => {
    const running = await swappableServer();
    try {
      const old = { kid: 'old', algorithm: 'ES256' as const, privateKey: PAIRS.ES256() };
      const next = { kid: 'next', algorithm: 'ES256' as const, privateKey: PAIRS.ES256() };
      // The verifier refetches at most once a second here (its cooldown), as the set's max-age would make it in time.
      const api = resourceServer(running.issuer, { cooldownSeconds: 1 });

      // 0. The old key signs.
      running.use(await tokenService(running.issuer, [old]));
      const first = await accessToken(await tokenService(running.issuer, [old]));
      expect((await me(api, first)).status).toBe(200);

      // 1. Add the next key second: published, not signing yet.
      const step1 = await tokenService(running.issuer, [old, next]);
      running.use(step1);
      expect((await request(step1).get('/v1/oauth2/keys')).body.keys.map((key: { kid: string }) => key.kid)).toEqual([
        'old',
        'next',
      ]);
      expect(decodeJwt(await accessToken(step1)).header.kid).toBe('old');

      // 2. After the set's max-age, the next key signs; tokens of the old one still verify.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const step2 = await tokenService(running.issuer, [next, old]);
      running.use(step2);
      const second = await accessToken(step2);
      expect(decodeJwt(second).header.kid).toBe('next');
      expect((await me(api, second)).status).toBe(200);
      expect((await me(api, first)).status).toBe(200);

      // 3. After the longest token lifetime, the old key goes; the new one goes on.
      const step3 = await tokenService(running.issuer, [next]);
      running.use(step3);
      expect((await request(step3).get('/v1/oauth2/keys')).body.keys.map((key: { kid: string }) => key.kid)).toEqual(['next']);
      expect((await me(api, await accessToken(step3))).status).toBe(200);
    } finally {
      await new Promise<void>((resolve) => running.server.close(() => resolve()));
    }
  });
});
