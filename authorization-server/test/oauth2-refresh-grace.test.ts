import type { Server } from 'node:http';
import { connect } from 'node:net';
import bcrypt from 'bcryptjs';
import express, { type Express } from 'express';
import { createClient } from 'redis';
import request from 'supertest';
import { ConfigurationError } from '../../src/config/index.js';
import { errorHandler, notFound } from '../../src/errors/index.js';
import {
  ALICE,
  AUDIENCE,
  basic,
  ISSUER,
  KEYS,
  postToken,
  seedStores,
  TEST_COST,
  TOKEN_OPTIONS,
  testHasher,
  tokenApp,
} from '../../test/support/oauth2.js';
import { closeServer, describeWith, listen, REDIS_SERVER, type RedisServer, startRedis } from '../../test/support/services.js';
import { useFakeDate } from '../../test/support/timing.js';
import { MemoryRefreshTokenStore, RedisClientStore, RedisRefreshTokenStore, RedisUserStore, tokenRouter } from '../src/index.js';

/**
 * Rotation that survives a lost response (tokenRouter `refreshGraceSeconds`):
 * the token rotated last, presented again within the grace and before its
 * successor was used, answers the same new refresh token; anything else
 * still revokes the family (RFC 9700 §4.14.2).
 */

const DEMO = { Authorization: basic('demo-client', 'demo-secret') };
const refresh = (app: Express | string, token: string) =>
  postToken(app as Express, { grant_type: 'refresh_token', refresh_token: token }, DEMO);

async function signIn(app: Express | string): Promise<{ access_token: string; refresh_token: string }> {
  const res = await postToken(app as Express, ALICE, DEMO);
  expect(res.status).toBe(200);
  return res.body;
}

describe('refresh grace, one instance', () => {
  it('answers a retry of the token rotated last with the same new refresh token and a valid access token', async () => {
    const app = await tokenApp({ refreshGraceSeconds: 5 });
    const first = await signIn(app);
    const lost = await refresh(app, first.refresh_token);
    expect(lost.status).toBe(200);
    const retry = await refresh(app, first.refresh_token);
    expect(retry.status).toBe(200);
    expect(retry.body.refresh_token).toBe(lost.body.refresh_token);
    expect(retry.body.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(retry.body.access_token).toEqual(expect.any(String));
    // The family lives on: the new token refreshes.
    expect((await refresh(app, retry.body.refresh_token)).status).toBe(200);
  });

  it('revokes the family when the old token comes back after its successor was used', async () => {
    const app = await tokenApp({ refreshGraceSeconds: 5 });
    const first = await signIn(app);
    const second = (await refresh(app, first.refresh_token)).body;
    const third = (await refresh(app, second.refresh_token)).body;
    const reused = await refresh(app, first.refresh_token);
    expect(reused.status).toBe(400);
    expect(reused.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The refresh token was already used; its token family is revoked.',
    });
    expect((await refresh(app, third.refresh_token)).status).toBe(400);
  });

  it('revokes the family when the token rotated last comes back after the grace', async () => {
    useFakeDate();
    try {
      const app = await tokenApp({ refreshGraceSeconds: 1 });
      const first = await signIn(app);
      const lost = (await refresh(app, first.refresh_token)).body;
      jest.setSystemTime(Date.now() + 1000);
      expect((await refresh(app, first.refresh_token)).body.error).toBe('invalid_grant');
      expect((await refresh(app, lost.refresh_token)).status).toBe(400);
    } finally {
      jest.useRealTimers();
    }
  });

  it('without a grace (the default), an immediate retry revokes the family', async () => {
    const app = await tokenApp();
    const first = await signIn(app);
    const lost = (await refresh(app, first.refresh_token)).body;
    expect((await refresh(app, first.refresh_token)).status).toBe(400);
    expect((await refresh(app, lost.refresh_token)).status).toBe(400);
  });

  it('draws the successor at random without a grace, and derives it with one (the same old token, the same successor)', async () => {
    const random = await tokenApp();
    const derived = await tokenApp({ refreshGraceSeconds: 5 });
    const [a, b] = [await signIn(random), await signIn(derived)];
    expect((await refresh(random, a.refresh_token)).body.refresh_token).not.toBe(
      (await refresh(derived, b.refresh_token)).body.refresh_token,
    );
  });

  it('treats a retry across a change of signing key as reuse: the family is revoked, no wrong token is answered', async () => {
    const stores = await seedStores();
    const refreshTokens = new MemoryRefreshTokenStore();
    const build = (keys: typeof KEYS) => {
      const app = express();
      app.use(tokenRouter({ ...TOKEN_OPTIONS, ...stores, keys, refreshTokens, refreshGraceSeconds: 5 }));
      app.use(notFound(), errorHandler({ production: true, log: false }));
      return app;
    };
    const before = build(KEYS);
    const after = build([{ kid: 'k2', algorithm: 'HS256', secret: 'another-test-secret-of-32-bytes-or-more' }, ...KEYS]);
    const first = await signIn(before);
    const lost = (await refresh(before, first.refresh_token)).body;
    const retry = await refresh(after, first.refresh_token);
    expect(retry.status).toBe(400);
    expect(retry.body.error).toBe('invalid_grant');
    expect((await refresh(after, lost.refresh_token)).status).toBe(400);
    refreshTokens.close();
  });

  it('refuses a wrong refreshGraceSeconds at construction', async () => {
    const { users } = await seedStores();
    for (const refreshGraceSeconds of [-1, 301, 1.5, '5']) {
      expect(() => tokenRouter({ ...TOKEN_OPTIONS, users, refreshGraceSeconds: refreshGraceSeconds as never })).toThrow(
        ConfigurationError,
      );
    }
  });
});

/**
 * Sends a refresh over a raw socket and drops the connection as soon as the
 * answer starts to arrive: the server has rotated, the client never reads
 * the new tokens.
 */
function refreshAndDropTheAnswer(url: string, token: string): Promise<void> {
  const { hostname, port } = new URL(url);
  const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer within 5 s'));
    }, 5000);
    socket.once('connect', () => {
      socket.write(
        `POST /v1/oauth2/token HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: ${DEMO.Authorization}\r\n` +
          `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
    socket.once('data', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}

describeWith(REDIS_SERVER, 'refresh grace on two instances over one real redis-server', () => {
  let redis: RedisServer;
  const clients: { quit(): Promise<unknown> }[] = [];
  const servers: Server[] = [];
  let a: string;
  let b: string;

  beforeAll(async () => {
    redis = await startRedis();
    const connectClient = async () => {
      const client = createClient({ url: redis.url });
      await client.connect();
      clients.push(client);
      return client;
    };
    const seed = await connectClient();
    const prefix = 'grace:';
    await new RedisUserStore({ client: seed, prefix }).add({
      username: 'alice',
      subject: 'u-1',
      passwordHash: bcrypt.hashSync('wonderland-rabbit-hole', TEST_COST),
    });
    await new RedisClientStore({ client: seed, prefix }).add({ id: 'demo-client', secret: 'demo-secret' });
    const instance = async () => {
      const client = await connectClient();
      const app = express();
      app.use(
        tokenRouter({
          keys: KEYS,
          issuer: ISSUER,
          audience: AUDIENCE,
          users: new RedisUserStore({ client, prefix }),
          clients: new RedisClientStore({ client, prefix }),
          refreshTokens: new RedisRefreshTokenStore({ client, prefix }),
          passwordHasher: testHasher,
          passwordCost: TEST_COST,
          refreshGraceSeconds: 10,
        }),
      );
      app.use(notFound(), errorHandler({ production: true, log: false }));
      const { server, url } = await listen(app);
      servers.push(server);
      return url;
    };
    a = await instance();
    b = await instance();
  });
  afterAll(async () => {
    await Promise.all(servers.map(closeServer));
    await Promise.all(clients.map((client) => client.quit()));
    await redis?.stop();
  });

  const refreshAt = (url: string, token: string) =>
    request(url).post('/v1/oauth2/token').type('form').set(DEMO).send({ grant_type: 'refresh_token', refresh_token: token });

  it('a refresh whose answer was dropped on A is retried on B and gets the tokens A issued; the family lives on', async () => {
    const first = await signIn(a);
    await refreshAndDropTheAnswer(a, first.refresh_token);
    const retry = await refreshAt(b, first.refresh_token);
    expect(retry.status).toBe(200);
    // The successor was never used before: it now rotates, on either instance.
    const next = await refreshAt(a, retry.body.refresh_token);
    expect(next.status).toBe(200);
    // The successor has been used: the old token is reuse, and the whole family goes.
    const reused = await refreshAt(b, first.refresh_token);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    expect((await refreshAt(a, next.body.refresh_token)).status).toBe(400);
  });

  it('of four concurrent retries on both instances, exactly one is answered with tokens and the others revoke the family', async () => {
    const first = await signIn(a);
    await refreshAndDropTheAnswer(b, first.refresh_token);
    const answers = await Promise.all([a, b, a, b].map((url) => refreshAt(url, first.refresh_token)));
    const answered = answers.filter((res) => res.status === 200);
    expect(answered).toHaveLength(1);
    expect(answered[0]?.body).toEqual(
      expect.objectContaining({ access_token: expect.any(String), refresh_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) }),
    );
    const refused = answers.filter((res) => res.status !== 200);
    expect(refused.map((res) => [res.status, res.body.error])).toEqual([
      [400, 'invalid_grant'],
      [400, 'invalid_grant'],
      [400, 'invalid_grant'],
    ]);
    // The refusals revoked the family, the successor handed out included.
    expect((await refreshAt(a, answered[0]?.body.refresh_token)).status).toBe(400);
  });

  it('an older token than the one rotated last still revokes the family within the grace', async () => {
    const first = await signIn(a);
    const second = (await refreshAt(a, first.refresh_token)).body;
    await refreshAndDropTheAnswer(b, second.refresh_token);
    const stale = await refreshAt(b, first.refresh_token);
    expect(stale.status).toBe(400);
    expect(stale.body.error_description).toBe('The refresh token was already used; its token family is revoked.');
    expect((await refreshAt(a, second.refresh_token)).status).toBe(400);
  });
});
