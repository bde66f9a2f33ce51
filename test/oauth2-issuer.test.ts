import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import express, { type Express } from 'express';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { conventions } from '../src/index.js';
import { type BearerAuthOptions, bearerAuth, dpopAuth, requireScope } from '../src/oauth2/index.js';
import { keysFromJwk } from '../src/oauth2/jwk.js';
import { expectHeaders } from './helpers.js';
import { useFakeDate, waitUntil } from './support/timing.js';

/**
 * bearerAuth({ issuer, audience }) with no keys: the issuer's metadata
 * (RFC 8414, then OpenID Connect Discovery) names its key set, which is
 * fetched, cached and refetched as the issuer rotates; foreign tokens are
 * checked as RFC 9068 §4 says, and every refusal is the conventions'
 * "Token failure" 401. The issuer is a real one: oidc-provider.
 */

const FIXTURE = join(__dirname, 'fixtures', 'oidc-issuer.mjs');
const API = 'https://api.example.test';
const CLIENT = { id: 'api-client', secret: 'api-client-secret-0123456789abcdef' };

interface Issuer {
  readonly url: string;
  readonly child: ChildProcessWithoutNullStreams;
  readonly lines: AsyncIterator<string>;
}

/** Starts oidc-provider in its own process (it is ESM only) and waits for its issuer URL. */
async function startIssuer(): Promise<Issuer> {
  const child = spawn(process.execPath, [FIXTURE], { cwd: join(__dirname, '..'), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr.resume();
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const issuer = { url: '', child, lines };
  return { ...issuer, url: (await nextMessage(issuer)).issuer as string };
}

/** The fixture's next JSON line (oidc-provider prints its own warnings on the same output). */
async function nextMessage(issuer: Pick<Issuer, 'lines'>): Promise<Record<string, unknown>> {
  for (;;) {
    const line = await issuer.lines.next();
    if (line.done === true) throw new Error('the issuer fixture stopped');
    if ((line.value as string).startsWith('{')) return JSON.parse(line.value as string);
  }
}

async function stopIssuer(issuer: Issuer | undefined): Promise<void> {
  if (issuer === undefined) return;
  issuer.child.stdin.end();
  if (issuer.child.exitCode === null) await once(issuer.child, 'exit');
}

/** A client_credentials token from `issuer` for the resource indicator `resource` (RFC 8707). */
async function tokenFrom(issuer: Issuer, resource = API, scope = 'read'): Promise<string> {
  const res = await fetch(`${issuer.url}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
  });
  const body = (await res.json()) as { access_token?: string };
  expect(res.status).toBe(200);
  return body.access_token as string;
}

const headerOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString());

function protectedApp(options: BearerAuthOptions): Express {
  const app = express();
  app.get('/v1/me', bearerAuth(options), (req, res) => {
    res.json({ auth: req.auth });
  });
  app.post('/v1/things', bearerAuth(options), requireScope('write'), (_req, res) => {
    res.status(201).json({ created: true });
  });
  return app;
}

/** The conventions' "Token failure": 401, JSON, no-store, Pragma no-cache, `error: invalid_token`, RFC 6750 §3 challenge. */
function expectInvalidToken(res: request.Response, description: string): void {
  expect(res.status).toBe(401);
  expectHeaders(res, {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    Pragma: 'no-cache',
    'WWW-Authenticate': `Bearer realm="api", error="invalid_token", error_description="${description}"`,
  });
  expect(res.body).toEqual({ error: 'invalid_token', error_description: description });
}

const get = (app: Express, token: string) => request(app).get('/v1/me').set('Authorization', `Bearer ${token}`);

describe('bearerAuth({ issuer, audience }) with a real issuer (oidc-provider)', () => {
  let issuer: Issuer;
  let foreign: Issuer;
  let app: Express;

  beforeAll(async () => {
    [issuer, foreign] = await Promise.all([startIssuer(), startIssuer()]);
    app = protectedApp({ issuer: issuer.url, audience: API, jwks: { cooldownSeconds: 1 } });
  }, 30_000);
  afterAll(async () => {
    await Promise.all([stopIssuer(issuer), stopIssuer(foreign)]);
  });

  it('discovers the key set and accepts the issuer’s JWT access tokens for this resource', async () => {
    const token = await tokenFrom(issuer);
    expect(headerOf(token)).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    const res = await get(app, token);
    expect(res.status).toBe(200);
    expect(res.body.auth).toEqual({ subject: CLIENT.id, clientId: CLIENT.id, scopes: ['read'] });
  });

  it('reads the scope into the auth context (requireScope)', async () => {
    const token = await tokenFrom(issuer, API, 'read write');
    expect((await request(app).post('/v1/things').set('Authorization', `Bearer ${token}`)).status).toBe(201);
    const readOnly = await tokenFrom(issuer, API, 'read');
    expect((await request(app).post('/v1/things').set('Authorization', `Bearer ${readOnly}`)).status).toBe(403);
  });

  it('answers a token for another audience with the 401', async () => {
    expectInvalidToken(
      await get(app, await tokenFrom(issuer, 'https://other.example.test')),
      'The access token is meant for another audience.',
    );
  });

  it('answers an expired token with the 401', async () => {
    useFakeDate();
    try {
      const strict = protectedApp({ issuer: issuer.url, audience: API, clockToleranceSeconds: 0, jwks: { cooldownSeconds: 1 } });
      const token = await tokenFrom(issuer, API, 'read short');
      // The fixture gives `short` tokens one second: the clock moves past it.
      jest.setSystemTime(Date.now() + 2100);
      expectInvalidToken(await get(strict, token), 'The access token expired.');
    } finally {
      jest.useRealTimers();
    }
  });

  it('answers a token of another issuer with the 401', async () => {
    expectInvalidToken(await get(app, await tokenFrom(foreign)), 'The access token was not signed by a known key.');
  });

  it('answers a tampered signature with the 401', async () => {
    const token = await tokenFrom(issuer);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
    expectInvalidToken(await get(app, `${header}.${payload}.${flipped}`), 'The access token is not valid.');
    // The payload of another token under this token's signature.
    const other = (await tokenFrom(issuer, API, 'read write')).split('.')[1];
    expectInvalidToken(await get(app, `${header}.${other}.${signature}`), 'The access token is not valid.');
  });

  it('follows the issuer’s key rotation without a restart: new tokens pass, and tokens of the old key still do', async () => {
    const before = await tokenFrom(issuer);
    expect((await get(app, before)).status).toBe(200);
    issuer.child.stdin.write('rotate\n');
    const { rotated } = await nextMessage(issuer);
    const after = await tokenFrom(issuer);
    expect(headerOf(after).kid).toBe(rotated);
    expect(headerOf(after).kid).not.toBe(headerOf(before).kid);
    useFakeDate();
    try {
      // The cooldown (1 s here) since the last fetch passes; the unknown kid then makes one refetch.
      jest.setSystemTime(Date.now() + 1100);
      expect((await get(app, after)).status).toBe(200);
      expect((await get(app, before)).status).toBe(200);
    } finally {
      jest.useRealTimers();
    }
  });

  it('works the same in dpopAuth() (its Bearer path) and in the preset’s bearerAuth stage', async () => {
    const token = await tokenFrom(issuer);
    const dpop = express().get('/v1/me', dpopAuth({ issuer: issuer.url, audience: API, origin: API }), (req, res) => {
      res.json({ auth: req.auth });
    });
    expect((await get(dpop, token)).body.auth).toEqual({ subject: CLIENT.id, clientId: CLIENT.id, scopes: ['read'] });
    const preset = express();
    preset.use(conventions({ bearerAuth: { issuer: issuer.url, audience: API } }));
    preset.get('/v1/me', (req, res) => {
      res.json({ auth: req.auth ?? null });
    });
    expect((await get(preset, token)).body.auth).toEqual({ subject: CLIENT.id, clientId: CLIENT.id, scopes: ['read'] });
    expect((await get(preset, `${token}x`)).status).toBe(401);
  });

  it('finds the key set from an explicit jwksUri too (the one its metadata names)', async () => {
    const metadata = await (await fetch(`${issuer.url}/.well-known/oauth-authorization-server`)).json();
    const direct = protectedApp({ issuer: issuer.url, audience: API, jwksUri: (metadata as { jwks_uri: string }).jwks_uri });
    expect((await get(direct, await tokenFrom(issuer))).status).toBe(200);
  });
});

/** A key set served on 127.0.0.1 that a test can take down and count. */
interface KeyServer {
  readonly url: string;
  hits: number;
  down: boolean;
  close(): Promise<void>;
}

async function keyServer(keys: () => unknown[], headers: Record<string, string> = {}): Promise<KeyServer> {
  const state = { hits: 0, down: false };
  const app = express();
  app.get('/jwks', (_req, res) => {
    state.hits += 1;
    if (state.down) res.status(503).end();
    else res.set(headers).json({ keys: keys() });
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
  return Object.assign(state, {
    url,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

const ISSUER = 'https://issuer.example.test';

function esKey(): { kid: string; privateKey: KeyObject; jwk: Record<string, unknown> } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = randomUUID();
  return { kid, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' } };
}

const signed = (key: { kid: string; privateKey: KeyObject }, claims: Record<string, unknown> = {}, kid = key.kid) =>
  jwt.sign({ iss: ISSUER, aud: API, sub: 'u-1', scope: 'read', ...claims }, key.privateKey, {
    algorithm: 'ES256',
    expiresIn: 86_400,
    header: { alg: 'ES256', typ: 'JWT', kid },
  });

const advance = (ms: number) => jest.setSystemTime(Date.now() + ms);

describe('an attacker’s flood of made-up kids', () => {
  afterEach(() => jest.useRealTimers());

  it('costs the issuer at most one fetch per cooldown, and each token its 401 at once', async () => {
    useFakeDate();
    const key = esKey();
    const server = await keyServer(() => [key.jwk]);
    try {
      const app = protectedApp({ issuer: ISSUER, jwksUri: server.url, audience: API });
      const flood = async () => {
        const answers = await Promise.all(
          Array.from({ length: 1000 }, () => get(app, signed(key, {}, randomUUID())).then((res) => res.status)),
        );
        expect(new Set(answers)).toEqual(new Set([401]));
      };
      await flood();
      expect(server.hits).toBe(1);
      advance(10_000);
      await flood();
      expect(server.hits).toBe(1);
      advance(21_000);
      await flood();
      expect(server.hits).toBe(2);
      // The real key still passes all along.
      expect((await get(app, signed(key))).status).toBe(200);
      expect(server.hits).toBe(2);
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe('when the key set is fetched', () => {
  afterEach(() => jest.restoreAllMocks());

  it('on the first token by default, and when the middleware is built with fetchAtStart', async () => {
    const key = esKey();
    const [lazyServer, eagerServer] = await Promise.all([keyServer(() => [key.jwk]), keyServer(() => [key.jwk])]);
    // The fetch starts inside the factory, or not at all: what it was asked for is known when the factory returns.
    const fetches = jest.spyOn(globalThis, 'fetch');
    const asked = (server: KeyServer) => fetches.mock.calls.filter(([url]) => url === server.url).length;
    try {
      const lazy = protectedApp({ issuer: ISSUER, jwksUri: lazyServer.url, audience: API });
      expect(asked(lazyServer)).toBe(0);
      expect((await get(lazy, signed(key))).status).toBe(200);
      expect(lazyServer.hits).toBe(1);
      const auth = bearerAuth({ issuer: ISSUER, jwksUri: eagerServer.url, audience: API, jwks: { fetchAtStart: true } });
      expect(asked(eagerServer)).toBe(1);
      await waitUntil(() => eagerServer.hits === 1, 'the fetch at start to reach the key set');
      const eager = express().get('/v1/me', auth, (_req, res) => {
        res.json({});
      });
      expect((await get(eager, signed(key))).status).toBe(200);
      expect(eagerServer.hits).toBe(1);
    } finally {
      await Promise.all([lazyServer.close(), eagerServer.close()]);
    }
  });
});

describe('a key the issuer withdraws', () => {
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('stops verifying the tokens it verified before, once a fetch finds the issuer replaced it', async () => {
    useFakeDate();
    const k1 = esKey();
    const k2 = esKey();
    let published = [k1.jwk];
    const server = await keyServer(() => published);
    try {
      const app = protectedApp({ issuer: ISSUER, jwksUri: server.url, audience: API, jwks: { cooldownSeconds: 1 } });
      const before = signed(k1);
      expect((await get(app, before)).status).toBe(200);
      published = [k2.jwk];
      jest.setSystemTime(Date.now() + 1000);
      // A k2 token makes the refetch of its cooldown; the set it brings holds k2 only.
      expect((await get(app, signed(k2))).status).toBe(200);
      expectInvalidToken(await get(app, before), 'The access token was not signed by a known key.');
      expect(server.hits).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('also when only known tokens arrive: the set past its cache age is refreshed in the background', async () => {
    useFakeDate();
    const k1 = esKey();
    let published = [k1.jwk];
    const server = await keyServer(() => published);
    try {
      const app = protectedApp({ issuer: ISSUER, jwksUri: server.url, audience: API, jwks: { cacheMaxAgeSeconds: 60 } });
      const before = signed(k1);
      expect((await get(app, before)).status).toBe(200);
      published = [esKey().jwk];
      jest.setSystemTime(Date.now() + 61_000);
      await waitUntil(async () => (await get(app, before)).status === 401, 'the refreshed set to drop k1');
      expect(server.hits).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('keeps the acceptance, without verifying again, while every fetch brings the key back unchanged', async () => {
    useFakeDate();
    const k1 = esKey();
    const server = await keyServer(() => [k1.jwk]);
    try {
      const app = protectedApp({ issuer: ISSUER, jwksUri: server.url, audience: API, jwks: { cooldownSeconds: 1 } });
      const token = signed(k1);
      expect((await get(app, token)).status).toBe(200);
      const verifications = jest.spyOn(jwt, 'verify');
      for (let fetch = 2; fetch <= 4; fetch++) {
        jest.setSystemTime(Date.now() + 1000);
        // A made-up kid waits for the refetch of its cooldown (and is refused before any signature check).
        expect((await get(app, signed(k1, {}, randomUUID()))).status).toBe(401);
        expect(server.hits).toBe(fetch);
        expect((await get(app, token)).status).toBe(200);
      }
      expect(verifications).not.toHaveBeenCalled();
    } finally {
      await server.close();
    }
  });
});

describe('the key set’s endpoint down', () => {
  afterEach(() => jest.useRealTimers());

  it('keeps the last good set for its cache age and the grace, then answers 503 with Retry-After, never 500', async () => {
    useFakeDate();
    const key = esKey();
    const server = await keyServer(() => [key.jwk]);
    try {
      const app = protectedApp({
        issuer: ISSUER,
        jwksUri: server.url,
        audience: API,
        jwks: { cacheMaxAgeSeconds: 60, staleGraceSeconds: 120, cooldownSeconds: 5 },
      });
      const token = signed(key);
      const fresh = signed(key, { jti: 'another' });
      expect((await get(app, token)).status).toBe(200);
      server.down = true;
      advance(61_000);
      expect((await get(app, token)).status).toBe(200);
      advance(100_000);
      // Within the grace a token never seen before verifies too: the set itself serves, not a cache of answers.
      expect((await get(app, fresh)).status).toBe(200);
      advance(20_000);
      const refused = await get(app, signed(key, { jti: 'third' }));
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
      expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(refused.body).toEqual({ errors: [{ message: "The token issuer's keys cannot be fetched.", code: 50302 }] });
      server.down = false;
      advance(6_000);
      expect((await get(app, signed(key, { jti: 'fourth' }))).status).toBe(200);
    } finally {
      await server.close();
    }
  }, 30_000);

  it('answers 503, not 500, when the set was never fetched', async () => {
    const app = protectedApp({ issuer: ISSUER, jwksUri: 'http://127.0.0.1:9/jwks', audience: API, jwks: { timeoutMs: 500 } });
    const res = await get(app, signed(esKey()));
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
  });

  it('takes a shorter Cache-Control max-age from the answer', async () => {
    useFakeDate();
    const key = esKey();
    const server = await keyServer(() => [key.jwk], { 'Cache-Control': 'public, max-age=20' });
    try {
      const app = protectedApp({ issuer: ISSUER, jwksUri: server.url, audience: API, jwks: { cooldownSeconds: 1 } });
      expect((await get(app, signed(key))).status).toBe(200);
      advance(21_000);
      expect((await get(app, signed(key, { jti: 'x' }))).status).toBe(200);
      // The background refresh is under way once the set is older than 20 s.
      await waitUntil(() => server.hits === 2, 'the background refresh');
    } finally {
      await server.close();
    }
  });
});

describe('one key set per issuer in the process', () => {
  afterEach(() => jest.useRealTimers());

  /** An issuer on 127.0.0.1 whose metadata and key set count their requests; `keys` is what it publishes now. */
  async function countingIssuer(keys: () => unknown[]) {
    const hits = { metadata: 0, jwks: 0 };
    const app = express();
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    app.get('/.well-known/oauth-authorization-server', (_req, res) => {
      hits.metadata += 1;
      res.json({ issuer: url, jwks_uri: `${url}/jwks` });
    });
    app.get('/jwks', (_req, res) => {
      hits.jwks += 1;
      res.json({ keys: keys() });
    });
    return { url, hits, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it('three protected routers make one discovery and one key-set fetch, and one refetch when the issuer rotates', async () => {
    useFakeDate();
    const k1 = esKey();
    const k2 = esKey();
    let published = [k1.jwk];
    const issuer = await countingIssuer(() => published);
    try {
      const options = { issuer: issuer.url, audience: API };
      const app = express();
      for (const [path, auth] of [
        ['/orders', bearerAuth(options)],
        ['/invoices', bearerAuth(options)],
        ['/profile', dpopAuth({ ...options, origin: API })],
      ] as const) {
        const router = express.Router();
        router.get('/', auth, (_req, res) => {
          res.json({});
        });
        app.use(path, router);
      }
      const everywhere = (token: string) =>
        Promise.all(
          ['/orders', '/invoices', '/profile'].map(async (path) => {
            return (await request(app).get(path).set('Authorization', `Bearer ${token}`)).status;
          }),
        );
      expect(await everywhere(signed(k1, { iss: issuer.url }))).toEqual([200, 200, 200]);
      expect(issuer.hits).toEqual({ metadata: 1, jwks: 1 });
      // The issuer switches to k2 at once: its tokens wait for the cooldown (30 s by default) since the last fetch.
      published = [k2.jwk, k1.jwk];
      const rotated = signed(k2, { iss: issuer.url });
      expect(await everywhere(rotated)).toEqual([401, 401, 401]);
      jest.setSystemTime(Date.now() + 30_000);
      expect(await everywhere(rotated)).toEqual([200, 200, 200]);
      expect(issuer.hits).toEqual({ metadata: 1, jwks: 2 });
      // Other key-set options are another set, with its own fetches.
      const own = express().get('/', bearerAuth({ ...options, jwks: { cooldownSeconds: 5 } }), (_req, res) => {
        res.json({});
      });
      expect((await request(own).get('/').set('Authorization', `Bearer ${rotated}`)).status).toBe(200);
      expect(issuer.hits).toEqual({ metadata: 2, jwks: 3 });
    } finally {
      await issuer.close();
    }
  });
});

describe('a redirect from the key set or the metadata', () => {
  /** An app on `host` whose routes the test gives, counting every request. */
  async function hostServer(host: string, routes: (app: Express, base: string) => void) {
    const app = express();
    const state = { hits: 0 };
    app.use((_req, _res, next) => {
      state.hits += 1;
      next();
    });
    const server = app.listen(0, host);
    await once(server, 'listening');
    const base = `http://${host}:${(server.address() as AddressInfo).port}`;
    routes(app, base);
    return Object.assign(state, { base, close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  }

  /** Another host (plain http, not loopback by name: never a place keys may come from) serving `key` as metadata and key set. */
  const elsewhere = (key: ReturnType<typeof esKey>, issuer: () => string) =>
    hostServer('127.0.0.2', (app, base) => {
      app.get('/jwks', (_req, res) => {
        res.json({ keys: [key.jwk] });
      });
      app.get('/metadata', (_req, res) => {
        res.json({ issuer: issuer(), jwks_uri: `${base}/jwks` });
      });
    });

  afterEach(() => jest.useRealTimers());

  it('is not followed for the key set: its key never verifies a token (503 before any set, 401 after one)', async () => {
    useFakeDate();
    const own = esKey();
    const foreignKey = esKey();
    const other = await elsewhere(foreignKey, () => ISSUER);
    let redirecting = true;
    const allowed = await hostServer('127.0.0.1', (app) => {
      app.get('/jwks', (_req, res) => {
        if (redirecting) res.redirect(302, `${other.base}/jwks`);
        else res.json({ keys: [own.jwk] });
      });
    });
    try {
      const app = protectedApp({ issuer: ISSUER, jwksUri: `${allowed.base}/jwks`, audience: API, jwks: { cooldownSeconds: 1 } });
      expect((await get(app, signed(foreignKey))).status).toBe(503);
      redirecting = false;
      jest.setSystemTime(Date.now() + 1000);
      expect((await get(app, signed(own))).status).toBe(200);
      redirecting = true;
      jest.setSystemTime(Date.now() + 1000);
      // The unknown kid makes the one refetch of its cooldown, which is redirected: the last good set stays.
      expectInvalidToken(await get(app, signed(foreignKey)), 'The access token was not signed by a known key.');
      expect(allowed.hits).toBe(3);
      expect(other.hits).toBe(0);
    } finally {
      await Promise.all([allowed.close(), other.close()]);
    }
  });

  it('is not followed for the metadata: the next metadata location is read instead', async () => {
    const own = esKey();
    const foreignKey = esKey();
    let issuer = '';
    const other = await elsewhere(foreignKey, () => issuer);
    const allowed = await hostServer('127.0.0.1', (app, base) => {
      app.get('/.well-known/oauth-authorization-server', (_req, res) => {
        res.redirect(302, `${other.base}/metadata`);
      });
      app.get('/.well-known/openid-configuration', (_req, res) => {
        res.json({ issuer: base, jwks_uri: `${base}/jwks` });
      });
      app.get('/jwks', (_req, res) => {
        res.json({ keys: [own.jwk] });
      });
    });
    issuer = allowed.base;
    try {
      const app = protectedApp({ issuer, audience: API });
      expectInvalidToken(await get(app, signed(foreignKey, { iss: issuer })), 'The access token was not signed by a known key.');
      expect((await get(app, signed(own, { iss: issuer }))).status).toBe(200);
      expect(other.hits).toBe(0);
    } finally {
      await Promise.all([allowed.close(), other.close()]);
    }
  });
});

describe('discovery (RFC 8414 §3, then OpenID Connect Discovery §4)', () => {
  /** A server whose metadata documents the test chooses, by path. */
  async function metadataServer(documents: (base: string) => Record<string, unknown>) {
    const app = express();
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const key = esKey();
    app.get('/jwks', (_req, res) => {
      res.json({ keys: [key.jwk] });
    });
    app.get(/.*/, (req, res) => {
      const document = documents(base)[req.path];
      if (document === undefined) res.status(404).end();
      else res.json(document);
    });
    return { base, key, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  const tokenFor = (key: { kid: string; privateKey: KeyObject }, iss: string) => signed(key, { iss });

  it('inserts the RFC 8414 suffix before the issuer’s path, and appends the OpenID one when that is missing', async () => {
    const server = await metadataServer((base) => ({
      '/tenant/.well-known/openid-configuration': { issuer: `${base}/tenant`, jwks_uri: `${base}/jwks` },
    }));
    try {
      const issuer = `${server.base}/tenant`;
      const app = protectedApp({ issuer, audience: API });
      expect((await get(app, tokenFor(server.key, issuer))).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('refuses a token listing a critical header extension (RFC 7515 §4.1.11) from a discovered issuer too', async () => {
    const server = await metadataServer((base) => ({
      '/.well-known/oauth-authorization-server': { issuer: base, jwks_uri: `${base}/jwks` },
    }));
    try {
      const app = protectedApp({ issuer: server.base, audience: API });
      const header = { alg: 'ES256', kid: server.key.kid } as const;
      const token = (extra: Record<string, unknown>) =>
        jwt.sign({ iss: server.base, aud: API, sub: 'u-1' }, server.key.privateKey, {
          algorithm: 'ES256',
          expiresIn: 60,
          header: { ...header, ...extra } as jwt.JwtHeader,
        });
      expect((await get(app, token({}))).status).toBe(200);
      expectInvalidToken(
        await get(app, token({ crit: ['urn:example:ext'], 'urn:example:ext': 1 })),
        'The access token requires a header extension this service does not support.',
      );
    } finally {
      await server.close();
    }
  });

  it('never uses a document that names another issuer (RFC 8414 §3.3): 503, not a pass', async () => {
    const server = await metadataServer((base) => ({
      '/.well-known/oauth-authorization-server': { issuer: 'https://attacker.example', jwks_uri: `${base}/jwks` },
      '/.well-known/openid-configuration': { issuer: 'https://attacker.example', jwks_uri: `${base}/jwks` },
    }));
    try {
      const app = protectedApp({ issuer: server.base, audience: API });
      expect((await get(app, tokenFor(server.key, server.base))).status).toBe(503);
    } finally {
      await server.close();
    }
  });
});

describe('JWK rules (RFC 7517, RFC 7518)', () => {
  const ec = esKey().jwk;
  const rsa = (bits: number, exponent?: number) => ({
    ...generateKeyPairSync('rsa', {
      modulusLength: bits,
      ...(exponent === undefined ? {} : { publicExponent: exponent }),
    }).publicKey.export({ format: 'jwk' }),
    kid: 'r',
  });

  it('takes a key for its own alg only', () => {
    expect(keysFromJwk(ec, ['RS256', 'ES256']).map((key) => key.algorithm)).toEqual(['ES256']);
    expect(keysFromJwk(ec, ['RS256'])).toEqual([]);
  });

  it('takes a key without alg for each allowed algorithm its type and curve fit', () => {
    const { alg: _alg, ...bare } = ec;
    expect(keysFromJwk(bare, ['RS256', 'ES256', 'ES384']).map((key) => key.algorithm)).toEqual(['ES256']);
    expect(keysFromJwk(rsa(2048), ['RS256', 'PS256', 'ES256']).map((key) => key.algorithm)).toEqual(['RS256', 'PS256']);
  });

  it('skips a kty or crv that does not match the alg', () => {
    expect(keysFromJwk({ ...ec, alg: 'RS256' }, ['RS256'])).toEqual([]);
    expect(keysFromJwk({ ...ec, alg: 'ES384' }, ['ES384'])).toEqual([]);
  });

  it('skips keys for another use, or whose key_ops do not verify', () => {
    expect(keysFromJwk({ ...ec, use: 'enc' }, ['ES256'])).toEqual([]);
    expect(keysFromJwk({ ...ec, key_ops: ['encrypt'] }, ['ES256'])).toEqual([]);
    expect(keysFromJwk({ ...ec, key_ops: ['verify'] }, ['ES256'])).toHaveLength(1);
  });

  it('skips RSA keys below 2048 bits or with an exponent other than 65537', () => {
    expect(keysFromJwk(rsa(1024), ['RS256'])).toEqual([]);
    expect(keysFromJwk(rsa(2048, 3), ['RS256'])).toEqual([]);
    expect(keysFromJwk(rsa(2048), ['RS256'])).toHaveLength(1);
  });

  it('builds a public key only, even from a JWK that carries private members', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const [key] = keysFromJwk({ ...privateKey.export({ format: 'jwk' }), alg: 'ES256' }, ['ES256']);
    expect(key?.verifyingKey.type).toBe('public');
    expect(key?.kid).toBe('');
  });

  it('verifies a token without kid with the one key that fits, and refuses it when several do (RFC 7517 §4.5)', async () => {
    const key = esKey();
    const { kid: _kid, ...withoutKid } = key.jwk;
    const one = await keyServer(() => [withoutKid]);
    const two = await keyServer(() => [withoutKid, esKey().jwk]);
    try {
      const noKid = jwt.sign({ iss: ISSUER, aud: API, sub: 'u-1' }, key.privateKey, { algorithm: 'ES256', expiresIn: 60 });
      expect((await get(protectedApp({ issuer: ISSUER, jwksUri: one.url, audience: API }), noKid)).status).toBe(200);
      expect((await get(protectedApp({ issuer: ISSUER, jwksUri: two.url, audience: API }), noKid)).status).toBe(401);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('warns (EAC_JWKS_NO_USABLE_KEY) when the set holds no usable key, and refuses every token with the 401', async () => {
    const key = esKey();
    const server = await keyServer(() => [{ ...key.jwk, use: 'enc' }]);
    const spy = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      expectInvalidToken(
        await get(protectedApp({ issuer: ISSUER, jwksUri: server.url, audience: API }), signed(key)),
        'The access token was not signed by a known key.',
      );
      expect(spy).toHaveBeenCalledWith(expect.stringContaining('holds no key'), { code: 'EAC_JWKS_NO_USABLE_KEY' });
    } finally {
      spy.mockRestore();
      await server.close();
    }
  });

  it('refuses a key set larger than its bounds (bytes, keys): 503, never a partial set', async () => {
    const many = await keyServer(() => Array.from({ length: 40 }, () => ec));
    try {
      const app = protectedApp({ issuer: ISSUER, jwksUri: many.url, audience: API });
      expect((await get(app, signed(esKey()))).status).toBe(503);
      const small = protectedApp({ issuer: ISSUER, jwksUri: many.url, audience: API, jwks: { maxKeys: 100, maxBytes: 1024 } });
      expect((await get(small, signed(esKey()))).status).toBe(503);
    } finally {
      await many.close();
    }
  });
});

describe('RFC 9068 checks of foreign tokens', () => {
  let server: KeyServer;
  const key = esKey();
  beforeAll(async () => {
    server = await keyServer(() => [key.jwk]);
  });
  afterAll(() => server.close());
  const app = (options: Partial<BearerAuthOptions> = {}) =>
    protectedApp({ issuer: ISSUER, jwksUri: server.url, audience: API, ...options });

  it('accepts typ JWT by default, and asks for at+jwt when requireAccessTokenType is on', async () => {
    expect((await get(app(), signed(key))).status).toBe(200);
    expectInvalidToken(await get(app({ requireAccessTokenType: true }), signed(key)), 'The token is not an access token.');
  });

  it('refuses a token naming another issuer, even signed by a key of this one', async () => {
    expectInvalidToken(
      await get(app(), signed(key, { iss: 'https://evil.example' })),
      'The access token was issued by another issuer.',
    );
  });

  it('accepts an aud list that holds the audience', async () => {
    expect((await get(app(), signed(key, { aud: ['https://other.example', API] }))).status).toBe(200);
  });

  it('reads scp (a list or a string) as the scopes, and azp as the client', async () => {
    const res = await get(app(), signed(key, { scope: undefined, scp: ['read', 'write'], azp: 'spa' }));
    expect(res.body.auth).toEqual({ subject: 'u-1', clientId: 'spa', scopes: ['read', 'write'] });
    expect((await get(app(), signed(key, { scope: undefined, scp: 'read write' }))).body.auth.scopes).toEqual(['read', 'write']);
  });

  it('refuses a token issued in the future, or living longer than the maximum lifetime', async () => {
    const now = Math.floor(Date.now() / 1000);
    expectInvalidToken(await get(app(), signed(key, { iat: now + 600 })), 'The access token is not valid yet.');
    const long = jwt.sign({ iss: ISSUER, aud: API, sub: 'u', iat: now, exp: now + 7200 }, key.privateKey, {
      algorithm: 'ES256',
      header: { alg: 'ES256', kid: key.kid },
    });
    expectInvalidToken(
      await get(app({ maxTokenLifetimeSeconds: 3600 }), long),
      'The access token lives longer than this service accepts.',
    );
  });

  it('refuses a token listing a critical header extension (RFC 7515 §4.1.11), and fetches nothing for its kid', async () => {
    const fetched = server.hits;
    const critical = (kid: string) =>
      jwt.sign({ iss: ISSUER, aud: API, sub: 'u-1' }, key.privateKey, {
        algorithm: 'ES256',
        expiresIn: 60,
        header: { alg: 'ES256', kid, crit: ['urn:example:ext'], 'urn:example:ext': 1 } as jwt.JwtHeader,
      });
    const description = 'The access token requires a header extension this service does not support.';
    expectInvalidToken(await get(app(), critical(key.kid)), description);
    expectInvalidToken(await get(app(), critical(randomUUID())), description);
    expect(server.hits).toBe(fetched);
  });

  it('runs checkClaims last, e.g. for a tenant', async () => {
    const tenant = app({ checkClaims: (claims) => claims.tid === 'acme' });
    expect((await get(tenant, signed(key, { tid: 'acme' }))).status).toBe(200);
    expectInvalidToken(await get(tenant, signed(key, { tid: 'other' })), 'The access token claims are not accepted here.');
  });
});
