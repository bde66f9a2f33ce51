import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import bcrypt from 'bcryptjs';
import express, { type Express } from 'express';
import {
  RedisClientStore,
  RedisRefreshTokenStore,
  RedisSignInGuardStore,
  RedisUserStore,
  signInGuard,
  tokenRouter,
} from 'express-api-conventions-authorization-server';
import { createClient, createCluster } from 'redis';
import { errorHandler, notFound } from '../src/errors/index.js';
import { RedisRevokedFamilies } from '../src/oauth2/index.js';
import { limiter } from '../src/rate-limit/index.js';
import { RedisCounterStore } from '../src/stores/index.js';
import { hashSlot } from '../src/stores/redis/index.js';
import { ALICE, AUDIENCE, ISSUER, KEYS, postToken, TEST_COST, testHasher } from './support/oauth2.js';
import { describeWith, REDIS_SERVER, type RedisCluster, startRedisCluster } from './support/services.js';

const makeCluster = (rootNodes: readonly { url: string }[]) =>
  createCluster({ rootNodes: [...rootNodes], defaults: { socket: { reconnectStrategy: () => 50 } } });
type Cluster = ReturnType<typeof makeCluster>;

const family = (familyId: string) => ({ familyId, subject: 'u-1', clientId: 'c-1', scopes: ['users:read'] });
const inAMinute = () => Date.now() + 60_000;

// The same stores run on a real three-master
// Redis Cluster; a script touching keys of two slots would fail with CROSSSLOT.
describeWith(REDIS_SERVER, 'the Redis stores on a real three-master Redis Cluster', () => {
  let redisCluster: RedisCluster;
  let cluster: Cluster;
  let run = 0;
  const prefix = () => `c${++run}:`;

  beforeAll(async () => {
    redisCluster = await startRedisCluster(3);
    cluster = makeCluster(redisCluster.rootNodes);
    cluster.on('error', () => undefined);
    await cluster.connect();
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
    await redisCluster?.stop();
  });

  /** Which master holds each key, by asking the cluster for the key's slot owner. */
  const mastersOf = (keys: string[]): Set<string> =>
    new Set(keys.map((key) => cluster.slots[hashSlot(key)]?.master.port).map(String));

  it('is three masters sharing the 16384 slots', () => {
    expect(cluster.masters).toHaveLength(3);
    expect(new Set(cluster.masters.map((master) => master.port))).toEqual(new Set(redisCluster.ports));
  });

  it('places keys where hashSlot() says (CLUSTER KEYSLOT)', async () => {
    const keys = ['eac:user:1', 'oauth2:family:{f-1}', 'oauth2:rt:abc', 'foo{}{bar}', 'foo{{bar}}zap', 'ключ'];
    const node = await cluster.nodeClient(cluster.masters[0] as (typeof cluster.masters)[number]);
    for (const key of keys) expect(await node.sendCommand(['CLUSTER', 'KEYSLOT', key])).toBe(hashSlot(key));
  });

  describe('RedisCounterStore', () => {
    it('counts, gives back, reads and resets keys spread over every master', async () => {
      const store = new RedisCounterStore({ client: cluster, prefix: prefix() });
      const keys = Array.from({ length: 30 }, (_, i) => `user:${i}`);
      expect(mastersOf(keys.map((key) => store.prefix + key)).size).toBe(3);
      for (const key of keys) {
        await store.increment(key, 60_000);
        expect(await store.increment(key, 60_000)).toMatchObject({ count: 2 });
        await store.decrement(key);
        expect(await store.get(key)).toMatchObject({ count: 1 });
      }
      await store.reset('user:0');
      expect(await store.get('user:0')).toBeUndefined();
    });

    it('counts 100 concurrent hits on one key exactly', async () => {
      const store = new RedisCounterStore({ client: cluster, prefix: prefix() });
      const counts = await Promise.all(Array.from({ length: 100 }, () => store.increment('hot', 60_000)));
      expect(counts.map((state) => state.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    });

    it('loads its scripts again on every node after SCRIPT FLUSH', async () => {
      const store = new RedisCounterStore({ client: cluster, prefix: prefix() });
      const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
      for (const key of keys) await store.increment(key, 60_000);
      await Promise.all(cluster.masters.map(async (master) => (await cluster.nodeClient(master)).scriptFlush()));
      for (const key of keys) expect(await store.increment(key, 60_000)).toMatchObject({ count: 2 });
    });
  });

  describe('limiter() on the cluster counter store', () => {
    it('refuses the hit after the quota, per identity, and forgets on reset', async () => {
      const policy = limiter({
        name: 'sign-in-failures-username-address',
        limit: 3,
        windowSeconds: 60,
        store: new RedisCounterStore({ client: cluster, prefix: prefix() }),
        partitionSecret: 'a-cluster-test-secret',
      });
      const states = await Promise.all(Array.from({ length: 5 }, () => policy.consume('alice')));
      expect(states.filter((state) => !state.limited)).toHaveLength(3);
      expect(states.filter((state) => state.limited)).toHaveLength(2);
      expect((await policy.peek('bob')).limited).toBe(false);
      await policy.reset('alice');
      expect((await policy.consume('alice')).limited).toBe(false);
    });
  });

  describe('RedisSignInGuardStore', () => {
    const attempt = (guard: ReturnType<typeof signInGuard>, ip: string, username = 'alice') =>
      guard.attempt({ ip, socket: {} } as never, username);

    it('checks and counts in one script per slot: 60 parallel attempts of one pair admit exactly the allowance', async () => {
      const store = new RedisSignInGuardStore({ client: cluster, prefix: prefix() });
      const guard = signInGuard({ store, maxFailuresPerUsernameAndAddress: 3, queueTimeoutMs: 5000 });
      const outcomes = await Promise.allSettled(
        Array.from({ length: 60 }, async () => {
          const admitted = await attempt(guard, '203.0.113.1');
          await admitted.failed();
        }),
      );
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(3);
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ status: 429 });
      }
    });

    it('admits the threshold of 3 addresses of 30 parallel ones, for accounts in many slots', async () => {
      const store = new RedisSignInGuardStore({ client: cluster, prefix: prefix() });
      const guard = signInGuard({ store });
      const usernames = Array.from({ length: 6 }, (_, i) => `user-${i}`);
      for (const username of usernames) {
        const outcomes = await Promise.allSettled(
          Array.from({ length: 30 }, async (_, i) => (await attempt(guard, `198.51.100.${i + 1}`, username)).failed()),
        );
        expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(3);
      }
    });
  });

  describe('RedisClientStore', () => {
    it('keeps each registration in one key, registrations spread over every master', async () => {
      const keyPrefix = prefix();
      const store = new RedisClientStore({ client: cluster, prefix: keyPrefix });
      const ids = Array.from({ length: 30 }, (_, i) => `client-${i}`);
      const registration = (id: string) => ({
        id,
        type: 'public' as const,
        firstParty: true,
        name: `App ${id}`,
        grants: ['authorization_code', 'refresh_token'],
        redirectUris: ['http://127.0.0.1/callback', 'https://app.example/callback'],
        scopes: ['users:read'],
      });
      for (const id of ids) await store.add(registration(id));
      expect(mastersOf(ids.map((id) => `${keyPrefix}client:${id}`)).size).toBe(3);
      for (const id of ids) expect(await store.findById(id)).toEqual({ ...registration(id), blocked: false });
    });
  });

  describe('RedisRefreshTokenStore', () => {
    it('keeps each family’s record in its own slot, families spread over every master', async () => {
      const keyPrefix = prefix();
      const store = new RedisRefreshTokenStore({ client: cluster, prefix: keyPrefix });
      const ids = Array.from({ length: 30 }, (_, i) => `family-${i}`);
      for (const id of ids) await store.create(family(id), `h-${id}`, inAMinute());
      expect(mastersOf(ids.map((id) => `${keyPrefix}family:{${id}}`)).size).toBe(3);
      for (const id of ids) expect(await store.find(`h-${id}`)).toEqual({ ...family(id), current: true });
    });

    it('creates, rotates, and refuses a replayed token by revoking the family', async () => {
      const store = new RedisRefreshTokenStore({ client: cluster, prefix: prefix() });
      await store.create(family('f'), 'h0', inAMinute());
      expect(await store.rotate('h0', 'h1', inAMinute())).toEqual({ status: 'rotated', family: family('f') });
      expect(await store.rotate('h1', 'h2', inAMinute())).toEqual({ status: 'rotated', family: family('f') });
      expect(await store.find('h0')).toEqual({ ...family('f'), current: false });
      // Within a grace, the token rotated last with its successor still current is a retry; an older one is reuse.
      expect(await store.rotate('h1', 'h2', inAMinute(), 10_000)).toEqual({ status: 'retried', family: family('f') });
      expect(await store.rotate('h0', 'h1', inAMinute(), 10_000)).toEqual({ status: 'reused', familyId: 'f' });
      expect(await store.find('h2')).toBeUndefined();
      expect(await store.rotate('h2', 'h3', inAMinute())).toEqual({ status: 'invalid' });
    });

    it('lets exactly one of 10 concurrent rotations of one token win', async () => {
      const store = new RedisRefreshTokenStore({ client: cluster, prefix: prefix() });
      await store.create(family('race'), 'r0', inAMinute());
      const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => store.rotate('r0', `r1-${i}`, inAMinute())));
      const winners = outcomes.filter((outcome) => outcome.status === 'rotated');
      expect(winners).toHaveLength(1);
      // The first loser presents a token that is no longer current: reuse, the family is revoked; the
      // later ones find no family.
      expect(outcomes.filter((outcome) => outcome.status === 'reused').length).toBeGreaterThanOrEqual(1);
      expect(outcomes.filter((outcome) => outcome.status === 'invalid' || outcome.status === 'reused')).toHaveLength(9);
      const winner = outcomes.indexOf(winners[0] as (typeof outcomes)[number]);
      expect(await store.rotate(`r1-${winner}`, 'r2', inAMinute())).toEqual({ status: 'invalid' });
    });

    it('revokes by token and by family id', async () => {
      const store = new RedisRefreshTokenStore({ client: cluster, prefix: prefix() });
      await store.create(family('a'), 'a0', inAMinute());
      await store.create(family('b'), 'b0', inAMinute());
      expect(await store.revokeByTokenHash('a0')).toBe(true);
      expect(await store.revokeByTokenHash('a0')).toBe(false);
      await store.revokeFamily('b');
      expect(await store.find('b0')).toBeUndefined();
    });
  });

  describe('RedisRevokedFamilies', () => {
    it('shares a revocation between two instances', async () => {
      const keyPrefix = prefix();
      const a = new RedisRevokedFamilies({ client: cluster, prefix: keyPrefix, pollIntervalMs: 50 });
      const b = new RedisRevokedFamilies({ client: cluster, prefix: keyPrefix, pollIntervalMs: 50 });
      try {
        await a.revoke('f-1', Date.now() + 60_000);
        await b.refresh();
        expect(b.isRevoked('f-1')).toBe(true);
      } finally {
        a.close();
        b.close();
      }
    });
  });

  describe('the token endpoint with every store on the cluster', () => {
    async function app(keyPrefix: string): Promise<Express> {
      const users = new RedisUserStore({ client: cluster, prefix: keyPrefix });
      await users.add({ username: 'alice', subject: 'u-1', passwordHash: bcrypt.hashSync(ALICE.password, TEST_COST) });
      const built = express();
      built.use(
        tokenRouter({
          keys: KEYS,
          issuer: ISSUER,
          audience: AUDIENCE,
          scopes: ['users:read'],
          users,
          clients: new RedisClientStore({ client: cluster, prefix: keyPrefix }),
          refreshTokens: new RedisRefreshTokenStore({ client: cluster, prefix: keyPrefix }),
          passwordHasher: testHasher,
          passwordCost: TEST_COST,
          signInGuard: {
            store: new RedisSignInGuardStore({ client: cluster, prefix: `${keyPrefix}login:` }),
            maxFailuresPerUsernameAndAddress: 3,
          },
        }),
      );
      built.use(notFound(), errorHandler({ production: true, log: false }));
      return built;
    }

    it('signs in, refreshes, catches reuse and throttles a guessed username', async () => {
      const tokenApp = await app(prefix());
      const signIn = await postToken(tokenApp, ALICE);
      expect(signIn.status).toBe(200);
      const refreshed = await postToken(tokenApp, { grant_type: 'refresh_token', refresh_token: signIn.body.refresh_token });
      expect(refreshed.status).toBe(200);
      const replay = await postToken(tokenApp, { grant_type: 'refresh_token', refresh_token: signIn.body.refresh_token });
      expect(replay.body).toEqual({
        error: 'invalid_grant',
        error_description: 'The refresh token was already used; its token family is revoked.',
      });
      for (let i = 0; i < 3; i++) expect((await postToken(tokenApp, { ...ALICE, password: 'guess' })).status).toBe(400);
      expect((await postToken(tokenApp, ALICE)).status).toBe(429);
    });
  });

  it('is not what a single-node client can talk to (the layer routes by key)', async () => {
    // A plain client on one master gets MOVED for keys of other masters'
    // slots: the stores' passing above is the cluster client's routing.
    const single = createClient({ url: redisCluster.rootNodes[0]?.url });
    await single.connect();
    try {
      const store = new RedisCounterStore({ client: single, prefix: prefix() });
      const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
      const results = await Promise.allSettled(keys.map((key) => store.increment(key, 60_000)));
      expect(results.some((result) => result.status === 'rejected' && /MOVED/.test(String(result.reason)))).toBe(true);
    } finally {
      await single.close();
    }
  });
});

describeWith(REDIS_SERVER, 'startRedisCluster()', () => {
  const accepts = (port: number): Promise<boolean> =>
    new Promise((resolve) => {
      const socket = createConnection(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });

  it('stops every node and removes its directory', async () => {
    const started = await startRedisCluster(3);
    expect(existsSync(started.dir)).toBe(true);
    expect(await Promise.all(started.ports.map(accepts))).toEqual([true, true, true]);
    await started.stop();
    expect(existsSync(started.dir)).toBe(false);
    expect(await Promise.all(started.ports.map(accepts))).toEqual([false, false, false]);
  }, 60_000);
});
