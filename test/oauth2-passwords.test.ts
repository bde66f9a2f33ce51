import bcrypt from 'bcryptjs';
import { ConfigurationError } from '../src/config/index.js';
import { DEFAULT_BCRYPT_COST, hashPassword, PasswordHasher, verifyPassword } from '../src/oauth2/index.js';

// Cost 4 (bcrypt's minimum) keeps the suite fast; the pool is the same at cost 12.
const COST = 4;

describe('password hashing off the event loop', () => {
  let hasher: PasswordHasher;
  beforeAll(() => {
    hasher = new PasswordHasher({ threads: 2, cost: COST });
  });
  afterAll(() => hasher.close());

  describe('hash()', () => {
    it('makes a bcrypt hash at the pool cost that bcryptjs itself accepts', async () => {
      const hash = await hasher.hash('wonderland-rabbit-hole');
      expect(hash).toMatch(/^\$2b\$04\$[./A-Za-z0-9]{53}$/);
      expect(bcrypt.getRounds(hash)).toBe(COST);
      expect(bcrypt.compareSync('wonderland-rabbit-hole', hash)).toBe(true);
    });

    it('takes a cost per call', async () => {
      expect(bcrypt.getRounds(await hasher.hash('x', 5))).toBe(5);
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
    expect(bcrypt.getRounds(hash)).toBe(COST);
    await expect(verifyPassword('s3cret', hash)).resolves.toBe(true);
    await expect(verifyPassword('S3cret', hash)).resolves.toBe(false);
  });
});
