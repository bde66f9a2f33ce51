import bcrypt from 'bcryptjs';
import express from 'express';
import supertest from 'supertest';
import { ConfigurationError } from '../../src/config/index.js';
import { ALICE, postToken, tokenApp } from '../../test/support/oauth2.js';
import { FIRST_72_BYTES, passwordPair } from '../../test/support/passwords.js';
import {
  hashPassword,
  MemoryUserStore,
  PasswordHasher,
  type PasswordHashUpdate,
  passwordSignIn,
  verifyPassword,
} from '../src/index.js';
import {
  needsRehash,
  PASSWORD_HASH_VERSION,
  PLAIN_BCRYPT_VERSION,
  PREHASHED_BCRYPT_PREFIX,
  parsePasswordHash,
} from '../src/sign-in/password-hash-format.js';
import { BCRYPT_MAX_INPUT_BYTES, DEFAULT_BCRYPT_COST } from '../src/sign-in/password-hasher.js';

// Cost 4 (bcrypt's minimum) keeps the suite fast; the pool is the same at cost 12.
const COST = 4;

describe('password hashing off the event loop', () => {
  let hasher: PasswordHasher;
  beforeAll(() => {
    hasher = new PasswordHasher({ threads: 2, cost: COST });
  });
  afterAll(() => hasher.close());

  describe('hash()', () => {
    it('makes a versioned hash: the prefix, then a bcrypt hash at the pool cost of the pre-hash', async () => {
      const hash = await hasher.hash('wonderland-rabbit-hole');
      expect(hash).toMatch(/^\$eac-bcrypt-sha384\$v=1\$2b\$04\$[./A-Za-z0-9]{53}$/);
      expect(hash.startsWith(PREHASHED_BCRYPT_PREFIX)).toBe(true);
      expect(bcrypt.getRounds(hash.slice(PREHASHED_BCRYPT_PREFIX.length))).toBe(COST);
      // bcrypt is never given the password itself.
      expect(bcrypt.compareSync('wonderland-rabbit-hole', hash.slice(PREHASHED_BCRYPT_PREFIX.length))).toBe(false);
    });

    it('takes a cost per call', async () => {
      expect(bcrypt.getRounds((await hasher.hash('x', 5)).slice(PREHASHED_BCRYPT_PREFIX.length))).toBe(5);
    });

    it('refuses a cost outside bcrypt’s 4–31', () => {
      expect(() => hasher.hash('x', 3)).toThrow(ConfigurationError);
    });
  });

  describe('verify()', () => {
    it('accepts the right password and refuses a wrong one', async () => {
      const hash = bcrypt.hashSync('right', COST);
      await expect(hasher.verify('right', hash)).resolves.toBe(true);
      await expect(hasher.verify('wrong', hash)).resolves.toBe(false);
    });

    it('never matches a malformed hash', async () => {
      await expect(hasher.verify('right', 'not-a-bcrypt-hash')).resolves.toBe(false);
    });

    it('answers many concurrent requests, each with its own result', async () => {
      const hash = bcrypt.hashSync('right', COST);
      const attempts = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? 'right' : `wrong-${i}`));
      const results = await Promise.all(attempts.map((password) => hasher.verify(password, hash)));
      expect(results).toEqual(attempts.map((password) => password === 'right'));
    });
  });

  describe('the event loop while hashing', () => {
    it('keeps turning while a hash is computed (the work is in a worker thread)', async () => {
      // A cost-10 hash takes tens of milliseconds of CPU; the main thread
      // must keep serving timers meanwhile.
      let ticks = 0;
      const timer = setInterval(() => ticks++, 1);
      await Promise.all([hasher.hash('a', 10), hasher.hash('b', 10)]);
      clearInterval(timer);
      // Hashed on this thread, the interval could not run until both were done.
      expect(ticks).toBeGreaterThan(1);
    });
  });

  describe('close()', () => {
    it('refuses work afterwards', async () => {
      const closing = new PasswordHasher({ threads: 1, cost: COST });
      await closing.hash('x');
      await closing.close();
      await expect(closing.hash('x')).rejects.toThrow('The password hasher was closed');
    });
  });

  describe('options', () => {
    it('defaults to cost 12', () => {
      const pool = new PasswordHasher();
      expect(pool.cost).toBe(DEFAULT_BCRYPT_COST);
      expect(DEFAULT_BCRYPT_COST).toBe(12);
    });

    it.each([
      [{ cost: 3 }, '`cost` must be an integer from 4 to 31; received 3'],
      [{ threads: 0 }, '`threads` must be an integer from 1 to 64; received 0'],
      [{ rounds: 10 }, 'unsupported option `rounds`'],
    ])('refuses %j at construction', (options, message) => {
      expect(() => new PasswordHasher(options as never)).toThrow(message);
    });
  });
});

describe('hashPassword() and verifyPassword() on the shared pool', () => {
  it('hash and verify through the shared pool', async () => {
    const hash = await hashPassword('s3cret', { cost: COST });
    expect(bcrypt.getRounds(hash.slice(PREHASHED_BCRYPT_PREFIX.length))).toBe(COST);
    await expect(verifyPassword('s3cret', hash)).resolves.toBe(true);
    await expect(verifyPassword('S3cret', hash)).resolves.toBe(false);
  });
});

describe('no password truncation: two different passwords are never one', () => {
  let hasher: PasswordHasher;
  beforeAll(() => {
    hasher = new PasswordHasher({ threads: 2, cost: COST });
  });
  afterAll(() => hasher.close());

  describe.each([72, 73, 1024])('a password of %i UTF-8 bytes, multi-byte characters included', (bytes) => {
    const { password, twin } = passwordPair(bytes);

    it('is exactly that long, and its twin differs only where bcrypt alone would not look (over 72 bytes)', () => {
      expect(Buffer.byteLength(password, 'utf8')).toBe(bytes);
      expect(Buffer.byteLength(twin, 'utf8')).toBe(bytes);
      expect(twin).not.toBe(password);
      expect([...password].some((char) => Buffer.byteLength(char) > 1)).toBe(true);
      if (bytes > BCRYPT_MAX_INPUT_BYTES) {
        expect(Buffer.from(twin).subarray(0, 72).equals(Buffer.from(password).subarray(0, 72))).toBe(true);
        // What bcrypt alone would do: both match one plain hash.
        const plain = bcrypt.hashSync(password, COST);
        expect(bcrypt.compareSync(twin, plain)).toBe(true);
      }
    });

    it('verifies against its own hash, and neither its twin nor its first 72 bytes do', async () => {
      const hash = await hasher.hash(password);
      await expect(hasher.verify(password, hash)).resolves.toBe(true);
      await expect(hasher.verify(twin, hash)).resolves.toBe(false);
      if (bytes > BCRYPT_MAX_INPUT_BYTES) await expect(hasher.verify(FIRST_72_BYTES, hash)).resolves.toBe(false);
    });

    it('signs in at the token endpoint with it, and not with its twin', async () => {
      const users = new MemoryUserStore();
      await users.add({ username: 'long', subject: 'u-long', passwordHash: await hasher.hash(password) });
      const app = await tokenApp({ users });
      const right = await postToken(app, { ...ALICE, username: 'long', password });
      expect(right.status).toBe(200);
      const wrong = await postToken(app, { ...ALICE, username: 'long', password: twin });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toEqual({ error: 'invalid_grant', error_description: 'The username or password is not correct.' });
    });
  });

  describe('a plain bcrypt hash (made before the versioned format, or by another tool)', () => {
    it('still verifies a password of up to 72 bytes', async () => {
      const { password, twin } = passwordPair(72);
      const plain = bcrypt.hashSync(password, COST);
      await expect(hasher.verify(password, plain)).resolves.toBe(true);
      await expect(hasher.verify(twin, plain)).resolves.toBe(false);
    });

    it('never matches a password over 72 bytes, since bcrypt would compare only its first 72', async () => {
      const { password, twin } = passwordPair(73);
      const plain = bcrypt.hashSync(password, COST);
      await expect(hasher.verify(password, plain)).resolves.toBe(false);
      await expect(hasher.verify(twin, plain)).resolves.toBe(false);
    });
  });
});

describe('the stored hash format (docs/password-hashes.md)', () => {
  let hasher: PasswordHasher;
  beforeAll(() => {
    hasher = new PasswordHasher({ threads: 2, cost: COST });
  });
  afterAll(() => hasher.close());

  describe('every version this package wrote stays readable', () => {
    // Made by hashPassword() on 2026-11-28, with version 1 and the default cost 12. Never change this
    // literal: a release that cannot verify it breaks every user who signed up before it.
    const MADE_2026_11_28 = '$eac-bcrypt-sha384$v=1$2b$12$5bpegZWV7iFWUY24irrH0.B0oUwGoFVzMivaprDf6hC7B0hYZ2uPm';
    const PASSWORD = 'correct horse battery staple 🐎';

    it('verifies a version 1 hash of the default cost made on 2026-11-28, and refuses another password', async () => {
      await expect(hasher.verify(PASSWORD, MADE_2026_11_28)).resolves.toBe(true);
      await expect(hasher.verify(`${PASSWORD} `, MADE_2026_11_28)).resolves.toBe(false);
    });

    it('reads it as version 1 of cost 12, which is what the package writes today', () => {
      expect(parsePasswordHash(MADE_2026_11_28)).toEqual({
        version: 1,
        bcrypt: MADE_2026_11_28.slice('$eac-bcrypt-sha384$v=1'.length),
        cost: 12,
      });
      expect(PASSWORD_HASH_VERSION).toBe(1);
      expect(new PasswordHasher().needsRehash(MADE_2026_11_28)).toBe(false);
    });
  });

  describe('plain bcrypt hashes of other systems', () => {
    it.each([
      ['$2a$ (the Openwall crypt_blowfish test vector)', 'U*U', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'],
      ['$2b$ (bcryptjs, OpenBSD)', 'U*U*U', '$2b$05$DvSLNfEoA5FcgVAn4BWTxupNBDe3GLaNhsAVDuNkl6JofLWfqj3E6'],
      [
        '$2y$ (PHP password_hash(), from its manual)',
        'rasmuslerdorf',
        '$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a',
      ],
    ])('verify a %s hash with its password, and not with another', async (_kind, password, hash) => {
      await expect(hasher.verify(password, hash)).resolves.toBe(true);
      await expect(hasher.verify(`${password}!`, hash)).resolves.toBe(false);
      expect(parsePasswordHash(hash)?.version).toBe(PLAIN_BCRYPT_VERSION);
    });

    it.each([4, 10, 31])('are read at cost %i (bcrypt’s 4 to 31)', (cost) => {
      const hash = `$2b$${String(cost).padStart(2, '0')}$${'C'.repeat(53)}`;
      expect(parsePasswordHash(hash)).toEqual({ version: PLAIN_BCRYPT_VERSION, bcrypt: hash, cost });
    });

    it.each([
      ['a cost below 4', `$2b$03$${'C'.repeat(53)}`],
      ['a cost above 31', `$2b$32$${'C'.repeat(53)}`],
      ['a minor version bcryptjs does not compute ($2x$)', `$2x$05$${'C'.repeat(53)}`],
      ['a short digest', `$2b$05$${'C'.repeat(52)}`],
      ['a version this package never wrote', `$eac-bcrypt-sha384$v=2$2b$05$${'C'.repeat(53)}`],
      ['version 1 around no bcrypt hash', '$eac-bcrypt-sha384$v=1$x'],
    ])('are unreadable with %s, and never match', async (_case, hash) => {
      expect(parsePasswordHash(hash)).toBeUndefined();
      expect(hasher.needsRehash(hash)).toBe(false);
      await expect(hasher.verify('U*U', hash)).resolves.toBe(false);
    });
  });

  describe('needsRehash()', () => {
    it('is true for a plain bcrypt hash, even of a higher cost', () => {
      expect(hasher.needsRehash(bcrypt.hashSync('x', COST))).toBe(true);
      expect(hasher.needsRehash(bcrypt.hashSync('x', COST + 1))).toBe(true);
    });

    it('is true for a hash of today’s version below the cost, false at or above it', async () => {
      const atCost = await hasher.hash('x');
      const above = await hasher.hash('x', COST + 1);
      expect(hasher.needsRehash(atCost)).toBe(false);
      expect(hasher.needsRehash(above)).toBe(false);
      expect(hasher.needsRehash(atCost, COST + 1)).toBe(true);
      expect(needsRehash(above, COST + 1)).toBe(false);
    });
  });
});

describe('an outdated hash is upgraded at the next successful sign-in', () => {
  const PASSWORD = 'wonderland-rabbit-hole';

  /** A user store that counts its upgrades and can be told to fail them. */
  class CountingUserStore extends MemoryUserStore {
    readonly updates: PasswordHashUpdate[] = [];
    failing = false;
    override async updatePasswordHash(update: Readonly<PasswordHashUpdate>): Promise<void> {
      this.updates.push(update);
      if (this.failing) throw new Error('the store is read-only');
      await super.updatePasswordHash(update);
    }
  }

  let hasher: PasswordHasher;
  beforeEach(() => {
    hasher = new PasswordHasher({ threads: 1, cost: COST });
  });
  afterEach(() => hasher.close());

  /** Waits until the pool holds no work, the sign-in's own check and any upgrade included. */
  async function settled(): Promise<void> {
    while (hasher.stats.queued > 0 || hasher.stats.running > 0) await new Promise((done) => setTimeout(done, 5));
    await new Promise((done) => setImmediate(done));
  }

  async function storeWith(passwordHash: string): Promise<CountingUserStore> {
    const users = new CountingUserStore();
    await users.add({ username: 'alice', subject: 'u-1', passwordHash });
    return users;
  }

  const storedHash = async (users: MemoryUserStore) => (await users.findByUsername('alice'))?.passwordHash;

  /** The two doors, each answering whether the user signed in: the token endpoint's password grant and a sign-in form on passwordSignIn(). */
  const doors = {
    'the token endpoint’s password grant': async (users: MemoryUserStore, passwordCost: number, password: string) => {
      const app = await tokenApp({ users, passwordHasher: hasher, passwordCost, signInGuard: false });
      return (await postToken(app, { ...ALICE, password })).status === 200;
    },
    'a sign-in form on passwordSignIn()': async (users: MemoryUserStore, passwordCost: number, password: string) => {
      const checkPassword = passwordSignIn({ users, passwordHasher: hasher, passwordCost, signInGuard: false });
      const app = express();
      app.post('/v1/sessions', express.json(), async (req, res, next) => {
        try {
          res.status((await checkPassword(req, req.body.username, req.body.password)) ? 201 : 401).json({});
        } catch (error) {
          next(error);
        }
      });
      return (await supertest(app).post('/v1/sessions').send({ username: 'alice', password })).status === 201;
    },
  };

  describe.each(Object.entries(doors))('at %s', (_door, signIn) => {
    it('replaces a plain bcrypt hash by one of today’s version and cost, which then verifies', async () => {
      const plain = bcrypt.hashSync(PASSWORD, COST);
      const users = await storeWith(plain);
      expect(await signIn(users, COST, PASSWORD)).toBe(true);
      await settled();
      const upgraded = (await storedHash(users)) as string;
      expect(users.updates).toEqual([{ username: 'alice', subject: 'u-1', previousHash: plain, passwordHash: upgraded }]);
      expect(parsePasswordHash(upgraded)).toMatchObject({ version: PASSWORD_HASH_VERSION, cost: COST });
      await expect(hasher.verify(PASSWORD, upgraded)).resolves.toBe(true);
      expect(await signIn(users, COST, PASSWORD)).toBe(true);
      await settled();
      expect(users.updates).toHaveLength(1);
    });

    it('raises a hash of a lower cost to passwordCost', async () => {
      const users = await storeWith(await hasher.hash(PASSWORD, COST));
      expect(await signIn(users, COST + 1, PASSWORD)).toBe(true);
      await settled();
      expect(parsePasswordHash((await storedHash(users)) as string)).toMatchObject({
        version: PASSWORD_HASH_VERSION,
        cost: COST + 1,
      });
    });

    it('leaves a current hash alone: no second bcrypt task, no store call', async () => {
      const users = await storeWith(await hasher.hash(PASSWORD));
      const completed = hasher.stats.completed;
      expect(await signIn(users, COST, PASSWORD)).toBe(true);
      await settled();
      expect(hasher.stats.completed).toBe(completed + 1); // the check alone
      expect(users.updates).toEqual([]);
    });

    it('upgrades nothing on a wrong password', async () => {
      const users = await storeWith(bcrypt.hashSync(PASSWORD, COST));
      expect(await signIn(users, COST, 'wrong')).toBe(false);
      await settled();
      expect(users.updates).toEqual([]);
    });

    it('signs in even when the store fails the upgrade, and tries again at the next sign-in', async () => {
      const plain = bcrypt.hashSync(PASSWORD, COST);
      const users = await storeWith(plain);
      users.failing = true;
      const warned = jest.spyOn(process, 'emitWarning').mockImplementation(() => {});
      try {
        expect(await signIn(users, COST, PASSWORD)).toBe(true);
        await settled();
        expect(await storedHash(users)).toBe(plain);
        users.failing = false;
        expect(await signIn(users, COST, PASSWORD)).toBe(true);
        await settled();
        expect(users.updates).toHaveLength(2);
        expect(parsePasswordHash((await storedHash(users)) as string)?.version).toBe(PASSWORD_HASH_VERSION);
      } finally {
        warned.mockRestore();
      }
    });
  });

  it('a store without updatePasswordHash() keeps the hash as stored, and the sign-in succeeds', async () => {
    const plain = bcrypt.hashSync(PASSWORD, COST);
    const users = { findByUsername: async () => ({ subject: 'u-1', passwordHash: plain }) };
    const app = await tokenApp({ users, passwordHasher: hasher, passwordCost: COST, signInGuard: false });
    expect((await postToken(app, ALICE)).status).toBe(200);
  });

  describe('MemoryUserStore.updatePasswordHash()', () => {
    it('replaces the hash only while it is still the one the password was verified against', async () => {
      const users = await storeWith('$2b$04$old');
      await users.updatePasswordHash({ username: 'alice', subject: 'u-1', previousHash: '$2b$04$changed', passwordHash: 'new' });
      expect(await storedHash(users)).toBe('$2b$04$old');
      await users.updatePasswordHash({ username: 'alice', subject: 'u-1', previousHash: '$2b$04$old', passwordHash: 'new' });
      expect(await users.findByUsername('alice')).toEqual({ subject: 'u-1', passwordHash: 'new' });
    });
  });
});
