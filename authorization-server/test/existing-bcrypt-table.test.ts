import bcrypt from 'bcryptjs';
import express, { type Express } from 'express';
import { createClient } from 'redis';
import { type ErrorLogEntry, errorHandler, notFound } from '../../src/errors/index.js';
import { AUDIENCE, decodeJwt, ISSUER, KEYS, postToken } from '../../test/support/oauth2.js';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../../test/support/services.js';
import { waitUntil } from '../../test/support/timing.js';
import {
  PasswordHasher,
  RedisRefreshTokenStore,
  RedisSignInGuardStore,
  RedisUserStore,
  type TokenRouterOptions,
  tokenRouter,
} from '../src/index.js';
import { parsePasswordHash } from '../src/sign-in/password-hash-format.js';
import { defaultPasswordHasher } from '../src/sign-in/password-hasher.js';
import { USER_RECORD_INVALID } from '../src/sign-in/user-record.js';

/**
 * A new user's existing app: a table of plain bcrypt hashes at cost 10 made
 * by another system (bcryptjs here), two instances of the token router over
 * one Redis, the package's defaults otherwise. Unknown and known usernames
 * answer in the same median time, a row of the wrong shape is a named error
 * and no token, and the password pool answers again after a load spike.
 */

const TABLE_COST = 10;
const USERS = Array.from({ length: 8 }, (_, i) => ({ username: `user-${i}`, subject: `s-${i}`, password: `pass-${i}-correct` }));
/** Pairs of sign-ins (a known username with a wrong password, then an unknown username) timed. */
const PAIRS = 24;
/** The most the two medians may differ, as a share of the larger. */
const TOLERANCE = 0.1;

const makeClient = (url: string) => createClient({ url });
type Client = ReturnType<typeof makeClient>;

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

describeWith(REDIS_SERVER, 'an existing app with a cost-10 bcrypt table, two instances over Redis', () => {
  let redis: RedisServer;
  const clients: Client[] = [];
  let run = 0;

  beforeAll(async () => {
    redis = await startRedis();
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

  /** The table, seeded once per scenario under its own prefix, as the other system wrote it. */
  async function seedTable(): Promise<{ prefix: string; seed: Client; users: RedisUserStore }> {
    const prefix = `app${++run}:`;
    const seed = await connect();
    const users = new RedisUserStore({ client: seed, prefix });
    for (const user of USERS) {
      await users.add({
        username: user.username,
        subject: user.subject,
        passwordHash: bcrypt.hashSync(user.password, TABLE_COST),
      });
    }
    return { prefix, seed, users };
  }

  /** Two instances, each with its own Redis connection and the package's defaults unless `options` says otherwise. */
  async function twoInstances(prefix: string, options: Partial<TokenRouterOptions> = {}) {
    const logged: ErrorLogEntry[] = [];
    const build = async (): Promise<Express> => {
      const client = await connect();
      const app = express();
      app.use(
        tokenRouter({
          keys: KEYS,
          issuer: ISSUER,
          audience: AUDIENCE,
          users: new RedisUserStore({ client, prefix }),
          refreshTokens: new RedisRefreshTokenStore({ client, prefix }),
          signInGuard: { store: new RedisSignInGuardStore({ client, prefix: `${prefix}sign-in:` }) },
          ...options,
        }),
      );
      app.use(notFound(), errorHandler({ production: true, log: (entry) => logged.push(entry) }));
      return app;
    };
    return { apps: [await build(), await build()] as const, logged };
  }

  const signIn = (app: Express, username: string, password: string) =>
    postToken(app, { grant_type: 'password', username, password });

  it(`answers unknown and known usernames within ${TOLERANCE * 100} % of each other in median time, with the default passwordCost (12)`, async () => {
    const { prefix } = await seedTable();
    const { apps } = await twoInstances(prefix);
    const known: number[] = [];
    const unknown: number[] = [];
    const timed = async (app: Express, username: string, into: number[]) => {
      const started = performance.now();
      const res = await signIn(app, username, 'a-guess');
      into.push(performance.now() - started);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
    };
    // Back to back on one instance, so that the machine's load weighs on both of a pair alike.
    for (let i = 0; i < PAIRS; i++) {
      const app = apps[i % 2] as Express;
      await timed(app, (USERS[i % USERS.length] as (typeof USERS)[number]).username, known);
      await timed(app, `nobody-${i}`, unknown);
    }
    const [k, u] = [median(known), median(unknown)];
    expect(Math.abs(k - u) / Math.max(k, u)).toBeLessThanOrEqual(TOLERANCE);
  }, 120_000);

  it('signs known users in on either instance and upgrades their hash, unless told to leave a shared table alone', async () => {
    const { prefix, users } = await seedTable();
    const { apps } = await twoInstances(prefix);
    const [first, second] = USERS as [(typeof USERS)[number], (typeof USERS)[number]];
    for (const [app, user] of [
      [apps[0], first],
      [apps[1], second],
    ] as const) {
      const res = await signIn(app, user.username, user.password);
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.access_token).payload.sub).toBe(user.subject);
    }
    const hashOf = async (username: string) => (await users.findByUsername(username))?.passwordHash as string;
    await waitUntil(async () => (await hashOf(first.username)).startsWith('$eac-bcrypt-sha384$'), 'the upgrade to be stored');
    expect(parsePasswordHash(await hashOf(first.username))).toMatchObject({ version: 1, cost: 12 });

    const shared = await seedTable();
    const { apps: sharing } = await twoInstances(shared.prefix, { upgradePasswordHashes: false });
    const stored = await shared.users.findByUsername(first.username);
    expect((await signIn(sharing[0], first.username, first.password)).status).toBe(200);
    expect((await signIn(sharing[1], first.username, first.password)).status).toBe(200);
    await waitUntil(
      () => defaultPasswordHasher().stats.queued + defaultPasswordHasher().stats.running === 0,
      'the pool to be idle',
    );
    // The other system still reads the row it wrote.
    await expect(shared.users.findByUsername(first.username)).resolves.toEqual(stored);
    expect(bcrypt.compareSync(first.password, stored?.passwordHash as string)).toBe(true);
  }, 120_000);

  it('answers a row without a password hash with 500 and EAC_USER_RECORD_INVALID naming RedisUserStore, never a token', async () => {
    const { prefix, seed } = await seedTable();
    await seed.hDel(`${prefix}user:user-3`, 'passwordHash');
    const { apps, logged } = await twoInstances(prefix);
    const warned = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      for (const app of apps) {
        const res = await signIn(app, 'user-3', 'pass-3-correct');
        expect(res.status).toBe(500);
        expect(res.body).toEqual({ error: 'server_error', error_description: 'The token endpoint failed; try again later.' });
      }
      expect(logged).toHaveLength(2);
      for (const entry of logged) {
        expect(entry.error).toMatchObject({ code: USER_RECORD_INVALID, store: 'RedisUserStore', field: 'passwordHash' });
      }
    } finally {
      warned.mockRestore();
    }
  }, 60_000);

  it('answers again on both instances after a load spike that priced the pool out of the sign-in deadline', async () => {
    const { prefix } = await seedTable();
    const pool = new PasswordHasher({ threads: 1 });
    try {
      // The spike: two cost-12 hashes, each well over what a 300 ms deadline leaves the pool.
      await Promise.all([pool.hash('spike'), pool.hash('spike')]);
      // No upgrade: its cost-12 hash would hold the one thread (a busy pool, not a frozen one).
      const { apps } = await twoInstances(prefix, { passwordHasher: pool, signInDeadlineMs: 300, upgradePasswordHashes: false });
      const user = USERS[5] as (typeof USERS)[number];
      for (const app of apps) {
        const res = await signIn(app, user.username, user.password);
        expect([res.status, res.body.error_description]).toEqual([200, undefined]);
      }
      expect(pool.stats.refused).toBe(0);
    } finally {
      await pool.close();
    }
  }, 60_000);
});
