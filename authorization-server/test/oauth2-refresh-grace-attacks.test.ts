import { generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import bcrypt from 'bcryptjs';
import express, { type Express } from 'express';
import jwt from 'jsonwebtoken';
import { createClient } from 'redis';
import request from 'supertest';
import { errorHandler, notFound } from '../../src/errors/index.js';
import {
  ALICE,
  AUDIENCE,
  basic,
  decodeJwt,
  ISSUER,
  KEYS,
  seedStores,
  TEST_COST,
  TOKEN_OPTIONS,
  testHasher,
} from '../../test/support/oauth2.js';
import { closeServer, describeWith, listen, REDIS_SERVER, type RedisServer, startRedis } from '../../test/support/services.js';
import { MACHINE_ALLOWANCE_MS, waitUntil } from '../../test/support/timing.js';
import {
  MemoryRefreshTokenStore,
  RedisClientStore,
  RedisRefreshTokenStore,
  RedisUserStore,
  type RefreshTokenStore,
  tokenRouter,
} from '../src/index.js';
import { hashRefreshToken } from '../src/stores/stores.js';

/**
 * The refresh grace (a retry after a lost answer) must
 * not be a ride for a thief. Each attack of the review runs on one instance
 * with the memory store and on two instances over one real redis-server:
 * one retry per rotation, only for clients that prove themselves, never two
 * rotations retried in a row, and a retry answers the very access token the
 * rotation issued (same jti, iat, exp), not another one.
 */

type Target = Express | string;
interface Tokens {
  readonly access_token: string;
  readonly refresh_token: string;
}

const DEMO = { Authorization: basic('demo-client', 'demo-secret') };
const REUSED = 'The refresh token was already used; its token family is revoked.';

const post = (target: Target, form: Record<string, string>, confidential: boolean) => {
  const req = request(target as Express)
    .post('/v1/oauth2/token')
    .type('form');
  if (confidential) req.set(DEMO);
  return req.send(confidential ? form : { ...form, client_id: 'public-app' });
};

const refresh = (target: Target, token: string, confidential = true) =>
  post(target, { grant_type: 'refresh_token', refresh_token: token }, confidential);

async function signIn(target: Target, confidential = true): Promise<Tokens> {
  const res = await post(target, ALICE, confidential);
  expect(res.status).toBe(200);
  return res.body;
}

const claims = (token: string) => {
  const { jti, iat, exp, sid } = decodeJwt(token).payload;
  return { jti, iat, exp, sid };
};

/** The attacks, with `victim` and `thief` reaching the service (one app, or two instances). */
function attacks(instances: () => { victim: Target; thief: Target }): void {
  it('each retry minted another access token: a retry answers the same access token, and a second retry revokes the family', async () => {
    const { victim, thief } = instances();
    const first = await signIn(victim);
    const rotated = await refresh(victim, first.refresh_token);
    expect(rotated.status).toBe(200);
    const retry = await refresh(thief, first.refresh_token);
    expect(retry.status).toBe(200);
    expect(retry.body.refresh_token).toBe(rotated.body.refresh_token);
    // Not a second live access token: the one the rotation issued (same jti, iat, exp).
    expect(claims(retry.body.access_token)).toEqual(claims(rotated.body.access_token));
    const again = await refresh(victim, first.refresh_token);
    expect(again.status).toBe(400);
    expect(again.body.error_description).toBe(REUSED);
    expect((await refresh(thief, rotated.body.refresh_token)).status).toBe(400);
  });

  it('a thief after the victim, within the grace, on a public client without DPoP: no grace, the family is revoked', async () => {
    const { victim, thief } = instances();
    const first = await signIn(victim, false);
    const rotated = await refresh(victim, first.refresh_token, false);
    expect(rotated.status).toBe(200);
    const stolen = await refresh(thief, first.refresh_token, false);
    expect(stolen.status).toBe(400);
    expect(stolen.body.error_description).toBe(REUSED);
    expect((await refresh(victim, rotated.body.refresh_token, false)).status).toBe(400);
  });

  it('a thief who saw RT1 rotate (polling introspection) cannot ride RT1 to RT2 inside the grace', async () => {
    const { victim, thief } = instances();
    const first = await signIn(victim);
    const rt1 = (await refresh(victim, first.refresh_token)).body as Tokens;
    // The thief follows the victim once: it is answered as a retry, and now holds RT1 too.
    expect((await refresh(thief, first.refresh_token)).body.refresh_token).toBe(rt1.refresh_token);
    const rt2 = await refresh(victim, rt1.refresh_token);
    expect(rt2.status).toBe(200);
    // RT1 went inactive; within the grace the thief sends it: the rotation before was a retry, so it is reuse.
    const ride = await refresh(thief, rt1.refresh_token);
    expect(ride.status).toBe(400);
    expect(ride.body.error_description).toBe(REUSED);
    expect((await refresh(victim, rt2.body.refresh_token)).status).toBe(400);
  });

  it('a thief who refreshes first makes the victim a "retry" once; the next rotation ends the family', async () => {
    const { victim, thief } = instances();
    const first = await signIn(victim);
    const taken = (await refresh(thief, first.refresh_token)).body as Tokens;
    const late = await refresh(victim, first.refresh_token);
    expect(late.status).toBe(200);
    expect(late.body.refresh_token).toBe(taken.refresh_token);
    expect(claims(late.body.access_token)).toEqual(claims(taken.access_token));
    const next = await refresh(thief, taken.refresh_token);
    expect(next.status).toBe(200);
    const victimAgain = await refresh(victim, late.body.refresh_token);
    expect(victimAgain.status).toBe(400);
    expect(victimAgain.body.error_description).toBe(REUSED);
    expect((await refresh(thief, next.body.refresh_token)).status).toBe(400);
  });

  it('a legitimate retry still works after a clean rotation (retries are not forbidden, only two in a row)', async () => {
    const { victim } = instances();
    const first = await signIn(victim);
    const rt1 = (await refresh(victim, first.refresh_token)).body as Tokens;
    expect((await refresh(victim, first.refresh_token)).status).toBe(200);
    const rt2 = (await refresh(victim, rt1.refresh_token)).body as Tokens;
    const rt3 = await refresh(victim, rt2.refresh_token);
    expect(rt3.status).toBe(200);
    const retry = await refresh(victim, rt2.refresh_token);
    expect(retry.status).toBe(200);
    expect(retry.body.refresh_token).toBe(rt3.body.refresh_token);
  });
}

describe('refresh grace attacks, one instance, memory store', () => {
  let app: Express;
  beforeAll(async () => {
    const stores = await seedStores();
    app = express();
    app.use(tokenRouter({ ...TOKEN_OPTIONS, ...stores, refreshGraceSeconds: 10 }));
    app.use(notFound(), errorHandler({ production: true, log: false }));
  });
  attacks(() => ({ victim: app, thief: app }));
});

describe('refresh grace for a public client with DPoP-bound refresh tokens', () => {
  let server: Server;
  let url: string;
  const key = (() => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return { privateKey: privateKey as KeyObject, jwk: publicKey.export({ format: 'jwk' }) };
  })();
  const proof = () =>
    jwt.sign(
      { jti: randomUUID(), iat: Math.floor(Date.now() / 1000), htm: 'POST', htu: `${url}/v1/oauth2/token` },
      key.privateKey,
      {
        algorithm: 'ES256',
        header: { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk } as jwt.JwtHeader,
      },
    );
  const send = (form: Record<string, string>) =>
    request(url)
      .post('/v1/oauth2/token')
      .type('form')
      .set('DPoP', proof())
      .send({ ...form, client_id: 'public-app' });

  beforeAll(async () => {
    const app = express();
    ({ server, url } = await listen(app));
    app.use(tokenRouter({ ...TOKEN_OPTIONS, issuer: url, ...(await seedStores()), dpop: true, refreshGraceSeconds: 10 }));
    app.use(notFound(), errorHandler({ production: true, log: false }));
  });
  afterAll(() => closeServer(server));

  it('proves itself with its key, so a retry after a lost answer is answered once', async () => {
    const first = await send(ALICE);
    expect(first.body.token_type).toBe('DPoP');
    const rotated = await send({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    expect(rotated.status).toBe(200);
    const retry = await send({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    expect(retry.status).toBe(200);
    expect(retry.body.refresh_token).toBe(rotated.body.refresh_token);
    expect(claims(retry.body.access_token)).toEqual(claims(rotated.body.access_token));
    expect((await send({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token })).status).toBe(400);
  });
});

/** The store's own rules on reuse, run on memory and on Redis. */
function rememberedTokens(store: () => RefreshTokenStore): void {
  const family = (id: string) => ({ familyId: id, subject: 'u-1', clientId: 'demo-client', scopes: [] });
  const chain = (id: string, length: number) => Array.from({ length }, (_, i) => hashRefreshToken(`${id}-token-${i}`));

  it('a token rotated 16 times ago still revokes its family; the 17th oldest no longer does, and nothing nearer is lost', async () => {
    const tokens = chain(randomUUID(), 19);
    const s = store();
    await s.create(family(randomUUID()), tokens[0] as string, Date.now() + 60_000);
    for (let i = 0; i < 17; i++) {
      expect((await s.rotate(tokens[i] as string, tokens[i + 1] as string, Date.now() + 60_000)).status).toBe('rotated');
    }
    // tokens[0] has left the 16 remembered; tokens[1] is the oldest remembered one, and must still revoke.
    expect((await s.rotate(tokens[0] as string, tokens[18] as string, Date.now() + 60_000)).status).toBe('invalid');
    expect((await s.rotate(tokens[1] as string, tokens[18] as string, Date.now() + 60_000)).status).toBe('reused');
    expect((await s.rotate(tokens[17] as string, tokens[18] as string, Date.now() + 60_000)).status).toBe('invalid');
  });

  it('a remembered token revokes its family as long as the family lives, past the expiry it was issued with', async () => {
    const tokens = chain(randomUUID(), 4);
    const s = store();
    // Long enough for the first rotation before its end on a loaded machine; Redis's own clock ends its key.
    const issuedUntil = Date.now() + MACHINE_ALLOWANCE_MS;
    await s.create(family(randomUUID()), tokens[0] as string, issuedUntil);
    expect((await s.rotate(tokens[0] as string, tokens[1] as string, Date.now() + 60_000)).status).toBe('rotated');
    await waitUntil(() => Date.now() > issuedUntil, 'the first token’s own expiry');
    // The family lives a minute; tokens[0] was issued to live less, but is remembered with its family.
    expect((await s.rotate(tokens[0] as string, tokens[2] as string, Date.now() + 60_000)).status).toBe('reused');
    expect(await s.find(tokens[1] as string)).toBeUndefined();
  });
}

describe('remembered refresh tokens, memory store', () => {
  const stores: MemoryRefreshTokenStore[] = [];
  afterAll(() => {
    for (const s of stores) s.close();
  });
  rememberedTokens(() => {
    const s = new MemoryRefreshTokenStore();
    stores.push(s);
    return s;
  });
});

describeWith(REDIS_SERVER, 'refresh grace attacks on two instances over one real redis-server', () => {
  let redis: RedisServer;
  const clients: { quit(): Promise<unknown> }[] = [];
  const servers: Server[] = [];
  let a: string;
  let b: string;
  let storeClient: unknown;
  const prefix = 'attacks:';

  beforeAll(async () => {
    redis = await startRedis();
    const connectClient = async () => {
      const client = createClient({ url: redis.url });
      await client.connect();
      clients.push(client);
      return client;
    };
    const seed = await connectClient();
    storeClient = seed as unknown;
    await new RedisUserStore({ client: seed, prefix }).add({
      username: 'alice',
      subject: 'u-1',
      passwordHash: bcrypt.hashSync('wonderland-rabbit-hole', TEST_COST),
    });
    const clientStore = new RedisClientStore({ client: seed, prefix });
    await clientStore.add({ id: 'demo-client', secret: 'demo-secret' });
    await clientStore.add({ id: 'public-app' });
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

  attacks(() => ({ victim: a, thief: b }));
  describe('the Redis store', () => {
    rememberedTokens(() => new RedisRefreshTokenStore({ client: storeClient as never, prefix: `${prefix}store:` }));
  });
});
