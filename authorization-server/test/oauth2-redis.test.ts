import bcrypt from 'bcryptjs';
import express, { type Express } from 'express';
import { bearerAuth } from 'express-api-conventions/oauth2';
import { createClient } from 'redis';
import request from 'supertest';
import { errorHandler, notFound } from '../../src/errors/index.js';
import { StoreUnavailableError } from '../../src/stores/index.js';
import { DEFAULT_COMMAND_TIMEOUT_MS } from '../../src/stores/redis/index.js';
import { ALICE, AUDIENCE, basic, decodeJwt, ISSUER, KEYS, postToken, TEST_COST, testHasher } from '../../test/support/oauth2.js';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../../test/support/services.js';
import { MACHINE_ALLOWANCE_MS, waitUntil } from '../../test/support/timing.js';
import {
  RedisClientStore,
  RedisRefreshTokenStore,
  RedisSignInGuardStore,
  RedisUserStore,
  revokeRefreshToken,
  tokenRouter,
} from '../src/index.js';
import { PREHASHED_BCRYPT_PREFIX } from '../src/sign-in/password-hash-format.js';
import { hashRefreshToken, REMEMBERED_REFRESH_TOKENS } from '../src/stores/stores.js';

const makeClient = (url: string) => createClient({ url });
type Client = ReturnType<typeof makeClient>;

describeWith(REDIS_SERVER, 'oauth2 stores on a real redis-server', () => {
  let redis: RedisServer;
  let clients: Client[];
  let prefix = 0;

  beforeAll(async () => {
    redis = await startRedis();
    clients = [];
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
    await redis?.stop();
  });

  async function connect(): Promise<Client> {
    const client = makeClient(redis.url);
    await client.connect();
    clients.push(client);
    return client;
  }

  /** Two app instances, each with its own Redis connection, sharing one key space. */
  async function twoInstances(): Promise<{
    apps: [Express, Express];
    refreshStore: RedisRefreshTokenStore;
    users: RedisUserStore;
  }> {
    const keyPrefix = `test${++prefix}:`;
    const seedClient = await connect();
    const users = new RedisUserStore({ client: seedClient, prefix: keyPrefix });
    await users.add({ username: 'Alice', subject: 'u-1', passwordHash: bcrypt.hashSync('wonderland-rabbit-hole', TEST_COST) });
    const clientStore = new RedisClientStore({ client: seedClient, prefix: keyPrefix });
    await clientStore.add({ id: 'demo-client', secret: 'demo-secret', scopes: ['users:read'] });
    const build = async (): Promise<[Express, RedisRefreshTokenStore]> => {
      const client = await connect();
      const refreshTokens = new RedisRefreshTokenStore({ client, prefix: keyPrefix });
      const app = express();
      app.use(
        tokenRouter({
          keys: KEYS,
          issuer: ISSUER,
          audience: AUDIENCE,
          scopes: ['users:read', 'users:write'],
          users: new RedisUserStore({ client, prefix: keyPrefix }),
          clients: new RedisClientStore({ client, prefix: keyPrefix }),
          refreshTokens,
          passwordHasher: testHasher,
          passwordCost: TEST_COST,
          signInGuard: {
            store: new RedisSignInGuardStore({ client, prefix: `${keyPrefix}login:` }),
            maxFailuresPerUsernameAndAddress: 3,
          },
        }),
      );
      app.get('/v1/me', bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE }), (req, res) => {
        res.json({ auth: req.auth });
      });
      app.use(notFound(), errorHandler({ production: true, log: false }));
      return [app, refreshTokens];
    };
    const [a, refreshStore] = await build();
    const [b] = await build();
    return { apps: [a, b], refreshStore, users };
  }

  const refresh = (app: Express, token: string) => postToken(app, { grant_type: 'refresh_token', refresh_token: token });

  describe('RedisUserStore and RedisClientStore', () => {
    it('sign a user in on either instance, with the client’s restrictions', async () => {
      const { apps } = await twoInstances();
      for (const app of apps) {
        const res = await postToken(
          app,
          { ...ALICE, username: ' ALICE ' },
          { Authorization: basic('demo-client', 'demo-secret') },
        );
        expect(res.status).toBe(200);
        expect(res.body.scope).toBe('users:read');
        expect(decodeJwt(res.body.access_token).payload).toMatchObject({ sub: 'u-1', client_id: 'demo-client' });
      }
      const wrongSecret = await postToken(apps[1], ALICE, { Authorization: basic('demo-client', 'nope') });
      expect(wrongSecret.status).toBe(401);
    });

    it('find nothing for an unknown user or client', async () => {
      const client = await connect();
      await expect(new RedisUserStore({ client }).findByUsername('nobody')).resolves.toBeUndefined();
      await expect(new RedisClientStore({ client }).findById('nobody')).resolves.toBeUndefined();
    });

    it('refuse to add a username with a default-ignorable code point (no look-alike of alice)', async () => {
      const users = new RedisUserStore({ client: await connect(), prefix: `test${++prefix}:` });
      await expect(users.add({ username: '\u200Balice', subject: 'x', passwordHash: 'h' })).rejects.toThrow(/U\+200B/);
      await expect(users.findByUsername('\u200Balice')).resolves.toBeUndefined();
    });

    it('replace a user’s password hash only while it is still the one the password was verified against', async () => {
      const users = new RedisUserStore({ client: await connect(), prefix: `test${++prefix}:` });
      await users.add({ username: 'alice', subject: 'u-1', passwordHash: 'old', scopes: ['users:read'] });
      await users.updatePasswordHash({
        username: 'alice',
        subject: 'u-1',
        previousHash: 'changed meanwhile',
        passwordHash: 'new',
      });
      await expect(users.findByUsername('alice')).resolves.toEqual({
        subject: 'u-1',
        passwordHash: 'old',
        scopes: ['users:read'],
      });
      await users.updatePasswordHash({ username: 'alice', subject: 'u-1', previousHash: 'old', passwordHash: 'new' });
      await expect(users.findByUsername('alice')).resolves.toEqual({
        subject: 'u-1',
        passwordHash: 'new',
        scopes: ['users:read'],
      });
      await users.updatePasswordHash({ username: 'nobody', subject: 'u-9', previousHash: 'old', passwordHash: 'new' });
      await expect(users.findByUsername('nobody')).resolves.toBeUndefined();
    });

    it('store the upgrade of a plain bcrypt hash after a sign-in, which either instance then verifies', async () => {
      const { apps, users } = await twoInstances();
      const plain = (await users.findByUsername('alice'))?.passwordHash as string;
      expect((await postToken(apps[0], ALICE)).status).toBe(200);
      let upgraded = plain;
      for (let tries = 0; upgraded === plain && tries < 400; tries++) {
        await new Promise((done) => setTimeout(done, 5));
        upgraded = (await users.findByUsername('alice'))?.passwordHash as string;
      }
      expect(upgraded.startsWith(PREHASHED_BCRYPT_PREFIX)).toBe(true);
      expect((await postToken(apps[1], ALICE)).status).toBe(200);
    });

    it('round-trip every client field', async () => {
      const client = await connect();
      const store = new RedisClientStore({ client, prefix: `rt${++prefix}:` });
      await store.add({ id: 'c', secret: 's', grants: ['refresh_token'], scopes: ['a', 'b'], blocked: true });
      await expect(store.findById('c')).resolves.toEqual({
        id: 'c',
        type: 'confidential',
        secretHash: expect.any(String),
        grants: ['refresh_token'],
        scopes: ['a', 'b'],
        blocked: true,
      });
    });
  });

  describe('RedisRefreshTokenStore', () => {
    it('rotates across instances: a token issued by one is refreshed by the other', async () => {
      const { apps } = await twoInstances();
      const first = await postToken(apps[0], ALICE);
      const second = await refresh(apps[1], first.body.refresh_token);
      expect(second.status).toBe(200);
      const third = await refresh(apps[0], second.body.refresh_token);
      expect(third.status).toBe(200);
    });

    it('stores only the hash of a refresh token', async () => {
      const { apps } = await twoInstances();
      const token = (await postToken(apps[0], ALICE)).body.refresh_token as string;
      const client = await connect();
      const keys = await client.keys(`test${prefix}:*`);
      const values = await Promise.all(keys.filter((key) => key.includes(':rt:')).map((key) => client.get(key)));
      expect(keys.some((key) => key.includes(token))).toBe(false);
      expect(keys).toContain(`test${prefix}:rt:${hashRefreshToken(token)}`);
      expect(values).not.toContain(token);
    });

    it('catches reuse on the other instance and revokes the whole family', async () => {
      const { apps } = await twoInstances();
      const old = (await postToken(apps[0], ALICE)).body.refresh_token as string;
      const current = (await refresh(apps[0], old)).body.refresh_token as string;
      const replay = await refresh(apps[1], old);
      expect(replay.status).toBe(400);
      expect(replay.body).toEqual({
        error: 'invalid_grant',
        error_description: 'The refresh token was already used; its token family is revoked.',
      });
      expect((await refresh(apps[0], current)).body.error).toBe('invalid_grant');
    });

    it('lets exactly one of many concurrent refreshes on two instances win', async () => {
      const { apps } = await twoInstances();
      const token = (await postToken(apps[0], ALICE)).body.refresh_token as string;
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => refresh(apps[i % 2] as Express, token)));
      expect(results.filter((res) => res.status === 200)).toHaveLength(1);
      expect(results.filter((res) => res.status === 400)).toHaveLength(7);
    });

    it('revokes a family on logout, seen by every instance', async () => {
      const { apps, refreshStore } = await twoInstances();
      const token = (await postToken(apps[0], ALICE)).body.refresh_token as string;
      await expect(revokeRefreshToken(refreshStore, token)).resolves.toBe(true);
      expect((await refresh(apps[1], token)).body.error).toBe('invalid_grant');
      await expect(revokeRefreshToken(refreshStore, token)).resolves.toBe(false);
    });

    it('revokes a family by id', async () => {
      const client = await connect();
      const store = new RedisRefreshTokenStore({ client, prefix: `fam${++prefix}:` });
      const family = { familyId: 'f-1', subject: 'u-1', clientId: undefined, scopes: ['a'] };
      await store.create(family, 'h1', Date.now() + 60_000);
      await expect(store.find('h1')).resolves.toEqual({ ...family, current: true });
      await store.revokeFamily('f-1');
      await expect(store.find('h1')).resolves.toBeUndefined();
      await expect(store.rotate('h1', 'h2', Date.now() + 60_000)).resolves.toEqual({ status: 'invalid' });
    });

    it('treats an expired family as invalid', async () => {
      const client = await connect();
      const store = new RedisRefreshTokenStore({ client, prefix: `exp${++prefix}:` });
      const end = Date.now() + 150;
      await store.create({ familyId: 'f', subject: 's', clientId: 'c', scopes: [] }, 'h1', end);
      await waitUntil(() => Date.now() > end, 'the family to end');
      await expect(store.find('h1')).resolves.toBeUndefined();
      await expect(store.rotate('h1', 'h2', Date.now() + 60_000)).resolves.toEqual({ status: 'invalid' });
    });

    it('loads its scripts again after SCRIPT FLUSH', async () => {
      const { apps } = await twoInstances();
      const client = await connect();
      await client.sendCommand(['SCRIPT', 'FLUSH']);
      const res = await postToken(apps[0], ALICE);
      expect(res.status).toBe(200);
      expect((await refresh(apps[1], res.body.refresh_token)).status).toBe(200);
    });
  });

  describe('RedisRefreshTokenStore keys (bounded memory)', () => {
    const grant = (familyId: string) => ({ familyId, subject: 'u-1', clientId: undefined, scopes: ['a'] });

    async function rotateMany(
      store: RedisRefreshTokenStore,
      first: string,
      count: number,
      expiresAt = () => Date.now() + 60_000,
    ): Promise<string> {
      let current = first;
      for (let i = 1; i <= count; i++) {
        const next = `${first}-${i}`;
        const outcome = await store.rotate(current, next, expiresAt());
        if (outcome.status !== 'rotated') throw new Error(`rotation ${i}: ${outcome.status}`);
        current = next;
      }
      return current;
    }

    it('stay the same in number after 10,000 rotations of one family, each with a TTL no later than the family’s', async () => {
      const client = await connect();
      const keyPrefix = `bound${++prefix}:`;
      const store = new RedisRefreshTokenStore({ client, prefix: keyPrefix });
      await store.create(grant('f'), 'h', Date.now() + 60_000);
      const current = await rotateMany(store, 'h', 100);
      const after100 = (await client.keys(`${keyPrefix}*`)).length;
      await rotateMany(store, current, 9_900);
      const keys = await client.keys(`${keyPrefix}*`);
      expect(keys).toHaveLength(after100);
      expect(keys).toHaveLength(REMEMBERED_REFRESH_TOKENS + 2);
      const familyTtl = await client.pTTL(`${keyPrefix}family:{f}`);
      expect(familyTtl).toBeGreaterThan(50_000);
      for (const key of keys) {
        const ttl = await client.pTTL(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(familyTtl);
      }
      // Two scripts a rotation (the family and the client index) on a shared 2-core machine: 23 s alone, over 60 s beside the suite.
    }, 180_000);

    it('are all deleted when reuse revokes the family', async () => {
      const client = await connect();
      const keyPrefix = `gone${++prefix}:`;
      const store = new RedisRefreshTokenStore({ client, prefix: keyPrefix });
      await store.create(grant('f'), 'h', Date.now() + 60_000);
      await rotateMany(store, 'h', 5);
      await store.create(grant('other'), 'o', Date.now() + 60_000);
      expect(await store.rotate('h-2', 'x', Date.now() + 60_000)).toEqual({ status: 'reused', familyId: 'f' });
      expect((await client.keys(`${keyPrefix}*`)).sort()).toEqual([`${keyPrefix}family:{other}`, `${keyPrefix}rt:o`]);
    });

    it('all expire with their family', async () => {
      const client = await connect();
      const keyPrefix = `ttl${++prefix}:`;
      const store = new RedisRefreshTokenStore({ client, prefix: keyPrefix });
      // Long enough for the count before the end on a loaded machine; Redis's own clock ends the keys.
      const end = Date.now() + MACHINE_ALLOWANCE_MS;
      await store.create(grant('f'), 'h', end);
      await rotateMany(store, 'h', 3, () => end);
      expect((await client.keys(`${keyPrefix}*`)).length).toBe(5);
      await waitUntil(() => Date.now() > end, 'the family to end');
      expect(await client.keys(`${keyPrefix}*`)).toEqual([]);
    });

    it('remember `rememberedTokens` rotated tokens: reuse of those revokes, older ones are refused', async () => {
      const client = await connect();
      const store = new RedisRefreshTokenStore({ client, prefix: `window${++prefix}:`, rememberedTokens: 3 });
      await store.create(grant('f'), 'h', Date.now() + 60_000);
      const current = await rotateMany(store, 'h', 4);
      expect(await store.find('h')).toBeUndefined();
      expect(await store.rotate('h', 'x', Date.now() + 60_000)).toEqual({ status: 'invalid' });
      expect(await store.find('h-1')).toEqual({ ...grant('f'), current: false });
      expect(await store.rotate('h-1', 'y', Date.now() + 60_000)).toEqual({ status: 'reused', familyId: 'f' });
      expect(await store.find(current)).toBeUndefined();
    });
  });

  describe('a Redis that stops answering (SIGSTOP)', () => {
    it('fails each store’s commands within commandTimeoutMs, then they work again', async () => {
      const frozen = await startRedis();
      const client = makeClient(frozen.url);
      client.on('error', () => undefined);
      await client.connect();
      try {
        const options = { client, commandTimeoutMs: 200 };
        const users = new RedisUserStore(options);
        const clientStore = new RedisClientStore(options);
        const refreshTokens = new RedisRefreshTokenStore(options);
        await refreshTokens.create({ familyId: 'f', subject: 's', clientId: undefined, scopes: [] }, 'h', Date.now() + 60_000);
        frozen.pause();
        const calls = [
          () => users.findByUsername('alice'),
          () => clientStore.findById('c'),
          () => refreshTokens.find('h'),
          () => refreshTokens.rotate('h', 'h2', Date.now() + 60_000),
          () => refreshTokens.revokeFamily('f'),
        ];
        for (const call of calls) {
          const started = Date.now();
          const failure = call();
          await expect(failure).rejects.toThrow(StoreUnavailableError);
          await expect(failure).rejects.toThrow(/within 200 ms|timeout/i);
          expect(Date.now() - started).toBeLessThan(200 + MACHINE_ALLOWANCE_MS);
        }
        frozen.resume();
        await expect(users.findByUsername('alice')).resolves.toBeUndefined();
      } finally {
        frozen.resume();
        client.destroy();
        await frozen.stop();
      }
    });

    it('rejects with StoreUnavailableError when Redis answers with an error', async () => {
      const client = await connect();
      const keyPrefix = `wrong${++prefix}:`;
      await client.set(`${keyPrefix}user:alice`, 'not a hash');
      const failure = new RedisUserStore({ client, prefix: keyPrefix }).findByUsername('alice');
      await expect(failure).rejects.toThrow(StoreUnavailableError);
      await expect(failure).rejects.toThrow('RedisUserStore: Redis failed HMGET: WRONGTYPE');
    });

    it('is bounded by 500 ms by default', async () => {
      const frozen = await startRedis();
      const client = makeClient(frozen.url);
      client.on('error', () => undefined);
      await client.connect();
      try {
        const users = new RedisUserStore({ client });
        frozen.pause();
        const started = Date.now();
        await expect(users.findByUsername('alice')).rejects.toThrow(/within 500 ms|timeout/i);
        // It waited the time-out (less a timer's rounding), and no longer.
        expect(Date.now() - started).toBeGreaterThanOrEqual(DEFAULT_COMMAND_TIMEOUT_MS - 50);
        expect(Date.now() - started).toBeLessThan(DEFAULT_COMMAND_TIMEOUT_MS + MACHINE_ALLOWANCE_MS);
      } finally {
        frozen.resume();
        client.destroy();
        await frozen.stop();
      }
    });
  });

  describe('brute-force counts shared through Redis', () => {
    it('throttles a username on every instance once it used its failures on any', async () => {
      const { apps } = await twoInstances();
      const wrong = { ...ALICE, password: 'guess' };
      for (let i = 0; i < 3; i++) expect((await postToken(apps[i % 2] as Express, wrong)).status).toBe(400);
      const res = await postToken(apps[1], ALICE);
      expect(res.status).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    });
  });

  describe('a bearer token from one instance', () => {
    it('is accepted by the other', async () => {
      const { apps } = await twoInstances();
      const token = (await postToken(apps[0], ALICE)).body.access_token as string;
      const res = await request(apps[1]).get('/v1/me').set('Authorization', `Bearer ${token}`);
      expect(res.body).toEqual({ auth: { subject: 'u-1', scopes: ['users:read', 'users:write'] } });
    });
  });

  describe('options', () => {
    it.each([
      ['RedisUserStore', () => new RedisUserStore({ client: {} as never })],
      ['RedisClientStore', () => new RedisClientStore({ client: undefined as never })],
      [
        'RedisRefreshTokenStore',
        () => new RedisRefreshTokenStore({ client: { sendCommand: () => Promise.resolve() }, prefix: '' }),
      ],
      ['RedisUserStore', () => new RedisUserStore({ client: { sendCommand: () => Promise.resolve() }, commandTimeoutMs: 0 })],
      [
        'RedisRefreshTokenStore',
        () => new RedisRefreshTokenStore({ client: { sendCommand: () => Promise.resolve() }, rememberedTokens: 0 }),
      ],
    ])('%s refuses a wrong option at construction', (_name, make) => {
      expect(make).toThrow(/`(client|prefix|commandTimeoutMs|rememberedTokens)` must be/);
    });
  });
});
