import bcrypt from 'bcryptjs';
import { ConfigurationError } from '../src/config/index.js';
import { hashPassword, MemoryUserStore, PasswordHasher, verifyPassword } from '../src/oauth2/index.js';
import { PREHASHED_BCRYPT_PREFIX } from '../src/oauth2/password-hash-format.js';
import { BCRYPT_MAX_INPUT_BYTES, DEFAULT_BCRYPT_COST } from '../src/oauth2/password-hasher.js';
import { ALICE, postToken, tokenApp } from './support/oauth2.js';
import { FIRST_72_BYTES, passwordPair } from './support/passwords.js';

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
