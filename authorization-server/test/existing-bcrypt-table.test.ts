import bcrypt from 'bcryptjs';
import express, { type Express } from 'express';
import { createClient } from 'redis';
import initSqlJs, { type Database } from 'sql.js';
import { type ErrorLogEntry, errorHandler, notFound } from '../../src/errors/index.js';
import { AUDIENCE, decodeJwt, ISSUER, KEYS, postToken } from '../../test/support/oauth2.js';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../../test/support/services.js';
import { waitUntil } from '../../test/support/timing.js';
import {
  normalizeUsername,
  PasswordHasher,
  type PasswordHashUpdate,
  RedisRefreshTokenStore,
  RedisSignInGuardStore,
  type TokenRouterOptions,
  tokenRouter,
  type UserRecord,
  type UserStore,
} from '../src/index.js';
import { parsePasswordHash } from '../src/sign-in/password-hash-format.js';
import { defaultPasswordHasher } from '../src/sign-in/password-hasher.js';
import { USER_RECORD_INVALID } from '../src/sign-in/user-record.js';

/**
 * A new user's existing app: a SQLite table of plain bcrypt hashes at cost 10
 * made by another system (bcryptjs here), read through a UserStore written as
 * the package's docs show (README, docs/oauth2-token.md "Your own user
 * store"), two instances of the token router sharing that table, with refresh
 * tokens and the sign-in guard on one Redis, the package's defaults
 * otherwise. Unknown and known usernames answer in the same median time, a
 * row or a store of the wrong shape is a named error and no token, and the
 * password pool answers again after a load spike.
 */

const TABLE_COST = 10;
const USERS = Array.from({ length: 8 }, (_, i) => ({ username: `User-${i}`, password: `pass-${i}-correct` }));
/** Pairs of sign-ins (a known username with a wrong password, then an unknown username) timed. */
const PAIRS = 24;
/** The most the two medians may differ, as a share of the larger. */
const TOLERANCE = 0.1;

/** The other system's table, as it stands; `username_key` is the column the docs ask for (normalizeUsername()). */
const TABLE = `CREATE TABLE users (
  id            INTEGER PRIMARY KEY,
  username      TEXT NOT NULL,
  username_key  TEXT NOT NULL UNIQUE,
  password_hash TEXT
)`;

/** The adapter a new user writes from the docs: one SELECT by the normalized username, one guarded UPDATE. */
class SqliteUserStore implements UserStore {
  constructor(private readonly db: Database) {}

  async findByUsername(username: string): Promise<UserRecord | undefined> {
    const row = this.row(username);
    if (row === undefined) return undefined;
    return { subject: String(row.id), passwordHash: row.password_hash as string };
  }

  async updatePasswordHash(update: Readonly<PasswordHashUpdate>): Promise<void> {
    this.db.run('UPDATE users SET password_hash = ? WHERE username_key = ? AND password_hash = ?', [
      update.passwordHash,
      update.username,
      update.previousHash,
    ]);
  }

  protected row(username: string): { id: number; password_hash: string | null } | undefined {
    const statement = this.db.prepare('SELECT id, password_hash FROM users WHERE username_key = ?');
    try {
      statement.bind([normalizeUsername(username)]);
      return statement.step() ? (statement.getAsObject() as { id: number; password_hash: string | null }) : undefined;
    } finally {
      statement.free();
    }
  }
}

/** The mistake the docs warn of: the row mapped as it is, `{ id }` where the package reads `subject`. */
class RowAsItIsUserStore extends SqliteUserStore {
  override async findByUsername(username: string): Promise<UserRecord | undefined> {
    const row = this.row(username);
    return row === undefined ? undefined : ({ id: row.id, passwordHash: row.password_hash } as unknown as UserRecord);
  }
}

const makeClient = (url: string) => createClient({ url });
type Client = ReturnType<typeof makeClient>;

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

describeWith(REDIS_SERVER, 'an existing app with a cost-10 bcrypt table in SQLite, two instances over Redis', () => {
  let redis: RedisServer;
  let SQL: Awaited<ReturnType<typeof initSqlJs>>;
  const clients: Client[] = [];
  const databases: Database[] = [];
  let run = 0;

  beforeAll(async () => {
    redis = await startRedis();
    SQL = await initSqlJs();
  });
  afterAll(async () => {
    for (const db of databases) db.close();
    await Promise.all(clients.map((client) => client.quit()));
    await redis?.stop();
  });

  async function connect(): Promise<Client> {
    const client = makeClient(redis.url);
    await client.connect();
    clients.push(client);
    return client;
  }

  /** The table, one database per scenario, seeded as the other system wrote it (subjects are the row ids). */
  function seedTable(): Database {
    const db = new SQL.Database();
    databases.push(db);
    db.run(TABLE);
    for (const user of USERS) {
      db.run('INSERT INTO users (username, username_key, password_hash) VALUES (?, ?, ?)', [
        user.username,
        normalizeUsername(user.username),
        bcrypt.hashSync(user.password, TABLE_COST),
      ]);
    }
    return db;
  }

  /** A row as the other system reads it: [id, password_hash]. */
  const rowOf = (db: Database, username: string) =>
    db.exec('SELECT id, password_hash FROM users WHERE username_key = ?', [normalizeUsername(username)])[0]?.values[0];

  /**
   * Two instances, each with its own store over the one table and its own
   * Redis connection, the package's defaults unless `options` says otherwise.
   */
  async function twoInstances(db: Database, options: Partial<TokenRouterOptions> = {}, Store = SqliteUserStore) {
    const prefix = `app${++run}:`;
    const logged: ErrorLogEntry[] = [];
    const build = async (): Promise<Express> => {
      const client = await connect();
      const app = express();
      app.use(
        tokenRouter({
          keys: KEYS,
          issuer: ISSUER,
          audience: AUDIENCE,
          users: new Store(db),
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
    const { apps } = await twoInstances(seedTable());
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

  it('signs known users in on either instance and upgrades their row, unless told to leave a shared table alone', async () => {
    const db = seedTable();
    const { apps } = await twoInstances(db);
    const [first, second] = USERS as [(typeof USERS)[number], (typeof USERS)[number]];
    for (const [app, user] of [
      [apps[0], first],
      [apps[1], second],
    ] as const) {
      // Typed as the person spells it; the store is asked for the normalized name.
      const res = await signIn(app, user.username, user.password);
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.access_token).payload.sub).toBe(String(rowOf(db, user.username)?.[0]));
    }
    const hashOf = (username: string) => rowOf(db, username)?.[1] as string;
    await waitUntil(() => hashOf(first.username).startsWith('$eac-bcrypt-sha384$'), 'the upgrade to be written to the row');
    expect(parsePasswordHash(hashOf(first.username))).toMatchObject({ version: 1, cost: 12 });
    // The upgraded row still signs in, on the other instance.
    expect((await signIn(apps[1], first.username, first.password)).status).toBe(200);

    const shared = seedTable();
    const { apps: sharing } = await twoInstances(shared, { upgradePasswordHashes: false });
    const stored = rowOf(shared, first.username);
    expect((await signIn(sharing[0], first.username, first.password)).status).toBe(200);
    expect((await signIn(sharing[1], first.username, first.password)).status).toBe(200);
    await waitUntil(
      () => defaultPasswordHasher().stats.queued + defaultPasswordHasher().stats.running === 0,
      'the pool to be idle',
    );
    // The other system still reads the row it wrote.
    expect(rowOf(shared, first.username)).toEqual(stored);
    expect(bcrypt.compareSync(first.password, stored?.[1] as string)).toBe(true);
  }, 120_000);

  /** Signs in on both instances; each answers 500 server_error, no token, and logs EAC_USER_RECORD_INVALID. */
  async function expectRecordInvalid(apps: readonly Express[], logged: readonly ErrorLogEntry[], user: (typeof USERS)[number]) {
    const warned = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      for (const app of apps) {
        const res = await signIn(app, user.username, user.password);
        expect(res.status).toBe(500);
        expect(res.body).toEqual({ error: 'server_error', error_description: 'The token endpoint failed; try again later.' });
      }
      expect(logged).toHaveLength(apps.length);
      return logged.map((entry) => entry.error);
    } finally {
      warned.mockRestore();
    }
  }

  it('answers a row without a password hash with 500 and EAC_USER_RECORD_INVALID naming the store, never a token', async () => {
    const db = seedTable();
    db.run('UPDATE users SET password_hash = NULL WHERE username_key = ?', ['user-3']);
    const { apps, logged } = await twoInstances(db);
    const errors = await expectRecordInvalid(apps, logged, USERS[3] as (typeof USERS)[number]);
    for (const error of errors) {
      expect(error).toMatchObject({ code: USER_RECORD_INVALID, store: 'SqliteUserStore', field: 'passwordHash' });
    }
  }, 60_000);

  it('answers a store that maps the row as { id } with 500 and EAC_USER_RECORD_INVALID on subject, never a token', async () => {
    const { apps, logged } = await twoInstances(seedTable(), {}, RowAsItIsUserStore);
    const errors = await expectRecordInvalid(apps, logged, USERS[4] as (typeof USERS)[number]);
    for (const error of errors) {
      expect(error).toMatchObject({ code: USER_RECORD_INVALID, store: 'RowAsItIsUserStore', field: 'subject' });
      expect((error as Error).message).toContain('It has `id`: name that field `subject`');
    }
  }, 60_000);

  it('answers again on both instances after a load spike that priced the pool out of the sign-in deadline', async () => {
    const db = seedTable();
    const pool = new PasswordHasher({ threads: 1 });
    try {
      // The spike: two cost-12 hashes, each well over what a 300 ms deadline leaves the pool.
      await Promise.all([pool.hash('spike'), pool.hash('spike')]);
      // No upgrade: its cost-12 hash would hold the one thread (a busy pool, not a frozen one).
      const { apps } = await twoInstances(db, { passwordHasher: pool, signInDeadlineMs: 300, upgradePasswordHashes: false });
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
