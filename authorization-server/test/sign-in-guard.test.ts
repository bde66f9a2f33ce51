import express, { type Express } from 'express';
import { createClient } from 'redis';
import request from 'supertest';
import { ConfigurationError } from '../../src/config/index.js';
import { apiError } from '../../src/errors/api-error.js';
import { errorHandler, notFound } from '../../src/errors/index.js';
import { rateLimit } from '../../src/rate-limit/index.js';
import { parseBodies } from '../../src/request/index.js';
import type { CounterStore } from '../../src/stores/counter-store.js';
import { MemoryCounterStore } from '../../src/stores/memory-counter-store.js';
import { expectHeaders } from '../../test/helpers.js';
import { ALICE, basic, postToken, seedStores, TEST_COST, TOKEN_OPTIONS, testHasher } from '../../test/support/oauth2.js';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../../test/support/services.js';
import { MACHINE_ALLOWANCE_MS, useFakeDate, waitUntil } from '../../test/support/timing.js';
import { packageError } from '../src/error-entries.js';
import {
  deviceCookies,
  MemorySignInGuardStore,
  passwordSignIn,
  RedisSignInGuardStore,
  type SignInGuard,
  type SignInGuardOptions,
  type SignInGuardStore,
  type SignInLimits,
  signInGuard,
  tokenEndpointErrors,
  tokenRouter,
} from '../src/index.js';
import { tokenErrorShape } from '../src/protocol/token-errors.js';
import { signInAddressKey } from '../src/sign-in/sign-in-guard.js';

/**
 * The sign-in guard: one allowance of failed sign-ins
 * for every door that checks a password, counted before the check, per
 * username and per address; a success never throttles.
 */

const WRONG = { ...ALICE, password: 'guess' };
const DEVICES = deviceCookies({ secret: 'a-device-cookie-secret-of-32-bytes!!' });
const SIGN_IN_PATH = '/v1/sessions';

/**
 * Two doors on one guard, as the reference server has them: the token
 * endpoint, and a browser-style sign-in (201 / 401) through passwordSignIn().
 */
async function twoDoors(guard: SignInGuard, trustProxy = false): Promise<Express> {
  const stores = await seedStores();
  const app = express();
  if (trustProxy) app.set('trust proxy', true);
  const checkPassword = passwordSignIn({
    users: stores.users,
    signInGuard: guard,
    passwordHasher: testHasher,
    passwordCost: TEST_COST,
  });
  app.use(
    tokenRouter({
      ...TOKEN_OPTIONS,
      signInGuard: guard,
      ...stores,
    }),
  );
  app.post(SIGN_IN_PATH, express.urlencoded({ extended: false }), async (req, res, next) => {
    try {
      const device = DEVICES.deviceOf(req);
      const user = await checkPassword(req, String(req.body.username), String(req.body.password), { device: device.device });
      if (!user) throw apiError('unauthenticated', { message: 'The username or password is not right.' });
      DEVICES.remember(res, device);
      res.status(201).json({ subject: user.subject });
    } catch (error) {
      next(error);
    }
  });
  app.use(notFound(), errorHandler({ production: true, log: false }));
  return app;
}

const browserSignIn = (app: Express, form: Record<string, string>, headers: Record<string, string> = {}) => {
  const req = request(app).post(SIGN_IN_PATH).type('form');
  for (const [name, value] of Object.entries(headers)) req.set(name, value);
  return req.send({ username: form.username, password: form.password });
};

const newGuard = (options: SignInGuardOptions = {}) => signInGuard({ store: new MemorySignInGuardStore(), ...options });

const count = (statuses: readonly number[], status: number) => statuses.filter((value) => value === status).length;

describe('signInGuard(): one guard for every door', () => {
  it('admits exactly the allowance of 60 parallel wrong passwords, across both doors on one store', async () => {
    const app = await twoDoors(newGuard());
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? postToken(app, WRONG) : browserSignIn(app, WRONG))),
    );
    const statuses = results.map((res) => res.status);
    // 400 invalid_grant at the token endpoint, 401 at the browser door: each one password checked.
    expect(count(statuses, 400) + count(statuses, 401)).toBe(10);
    expect(count(statuses, 429)).toBe(50);
  });

  it('throttles the browser door once the token endpoint has throttled the user', async () => {
    const app = await twoDoors(newGuard({ maxFailuresPerUsernameAndAddress: 3 }));
    for (let i = 0; i < 3; i++) expect((await postToken(app, WRONG)).status).toBe(400);
    expect((await postToken(app, ALICE)).status).toBe(429);
    const browser = await browserSignIn(app, ALICE);
    expect(browser.status).toBe(429);
    expect(browser.body).toEqual({
      errors: [
        {
          message: 'Too many failed sign-in attempts for this username from this address; retry after the time in Retry-After.',
          code: 42901,
        },
      ],
    });
    expect(Number(browser.headers['retry-after'])).toBeGreaterThan(800);
  });

  it('throttles the token endpoint once the browser door has throttled the user', async () => {
    const app = await twoDoors(newGuard({ maxFailuresPerUsernameAndAddress: 3 }));
    for (let i = 0; i < 3; i++) expect((await browserSignIn(app, WRONG)).status).toBe(401);
    const token = await postToken(app, ALICE);
    expect(token.status).toBe(429);
    expect(token.body).toEqual({
      error: 'too_many_requests',
      error_description:
        'Too many failed sign-in attempts for this username from this address; retry after the time in Retry-After.',
    });
  });

  it('never answers 429 to 200 sequential correct sign-ins from one address', async () => {
    const app = await twoDoors(newGuard());
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++)
      statuses.push((i % 2 === 0 ? await postToken(app, ALICE) : await browserSignIn(app, ALICE)).status);
    expect(count(statuses, 200)).toBe(100);
    expect(count(statuses, 201)).toBe(100);
  });

  it('never answers 429 to 50 parallel correct sign-ins of one user from one address', async () => {
    const app = await twoDoors(newGuard());
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? postToken(app, ALICE) : browserSignIn(app, ALICE))),
    );
    const statuses = results.map((res) => res.status);
    expect(count(statuses, 200)).toBe(25);
    expect(count(statuses, 201)).toBe(25);
  });

  it('does not count successes against the address', async () => {
    const app = await twoDoors(newGuard({ maxFailuresPerAddress: 3 }));
    for (let i = 0; i < 20; i++) expect((await postToken(app, ALICE)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await postToken(app, { ...WRONG, username: `user-${i}` })).status).toBe(400);
    expect((await postToken(app, ALICE)).status).toBe(429);
  });

  it('is not fooled by case, width or space variants of the username at either door', async () => {
    const app = await twoDoors(newGuard({ maxFailuresPerUsernameAndAddress: 3 }));
    expect((await postToken(app, { ...WRONG, username: 'ALICE' })).status).toBe(400);
    expect((await browserSignIn(app, { ...WRONG, username: ' alice ' })).status).toBe(401);
    expect((await postToken(app, { ...WRONG, username: 'ａｌｉｃｅ' })).status).toBe(400);
    expect((await browserSignIn(app, { ...ALICE, username: 'Alice' })).status).toBe(429);
  });

  it('takes the address from req.ip: a spoofed X-Forwarded-For does not give a fresh allowance', async () => {
    const app = await twoDoors(newGuard({ maxFailuresPerUsernameAndAddress: 100, maxFailuresPerAddress: 3 }));
    for (let i = 0; i < 3; i++) {
      const spoofed = { 'X-Forwarded-For': `198.51.100.${i}` };
      expect((await browserSignIn(app, { ...WRONG, username: `user-${i}` }, spoofed)).status).toBe(401);
    }
    const res = await postToken(app, { ...WRONG, username: 'user-9' }, { 'X-Forwarded-For': '203.0.113.77' });
    expect(res.status).toBe(429);
    expect(res.body.error_description).toBe(
      'Too many failed sign-in attempts from this address; retry after the time in Retry-After.',
    );
  });

  it('counts per address behind a trusted proxy, where req.ip is the forwarded address', async () => {
    const app = await twoDoors(newGuard({ maxFailuresPerUsernameAndAddress: 100, maxFailuresPerAddress: 2 }), true);
    const from = (address: string) => ({ 'X-Forwarded-For': address });
    for (let i = 0; i < 2; i++) await postToken(app, { ...WRONG, username: `u-${i}` }, from('203.0.113.1'));
    expect((await postToken(app, { ...WRONG, username: 'u-3' }, from('203.0.113.1'))).status).toBe(429);
    expect((await postToken(app, { ...WRONG, username: 'u-4' }, from('203.0.113.2'))).status).toBe(400);
  });

  it('fails closed with 503 and Retry-After when its store is down', async () => {
    const down = () => Promise.reject(new Error('down'));
    const broken: SignInGuardStore = { reserve: down, settle: down };
    const app = await twoDoors(signInGuard({ store: broken }));
    const res = await browserSignIn(app, ALICE);
    expect(res.status).toBe(503);
    expectHeaders(res, { 'Retry-After': '5' });
    expect(res.body).toEqual({ errors: [{ message: 'Sign-in is unavailable; try again later.', code: 50302 }] });
  });

  it('gives the reservation back when the user store fails, so the user is not throttled by outages', async () => {
    const guard = newGuard({ maxFailuresPerUsernameAndAddress: 1 });
    let failing = true;
    const users = {
      findByUsername: async () => {
        if (failing) throw new Error('database down');
        return (await seedStores()).users.findByUsername('alice');
      },
    };
    const check = passwordSignIn({ users, signInGuard: guard, passwordHasher: testHasher, passwordCost: TEST_COST });
    const req = { ip: '192.0.2.1', socket: {} } as never;
    for (let i = 0; i < 3; i++) await expect(check(req, 'alice', 'wonderland-rabbit-hole')).rejects.toThrow('database down');
    failing = false;
    await expect(check(req, 'alice', 'wonderland-rabbit-hole')).resolves.toMatchObject({ subject: 'u-1' });
  });

  describe('address keys: express-rate-limit’s ipKeyGenerator', () => {
    const key = (ip: string) => signInAddressKey({ ip, socket: {} } as never);

    it.each([
      ['203.0.113.9', '203.0.113.9'],
      ['::ffff:203.0.113.9', '203.0.113.9'],
    ])('counts %s as %s', (ip, expected) => {
      expect(key(ip)).toBe(expected);
    });

    it('keeps IPv4-mapped addresses written in hex apart (::ffff:102:304 is 1.2.3.4, not one bucket for all)', () => {
      expect(key('::ffff:102:304')).not.toBe(key('::ffff:506:708'));
      expect(key('::ffff:102:304')).not.toBe(key('::1'));
    });

    it('counts an IPv6 client by its /56 block, as rateLimit() does', () => {
      expect(key('2001:db8:1:2::1')).toBe(key('2001:db8:1:ff::9'));
      expect(key('2001:db8:1:2::1')).not.toBe(key('2001:db8:1:100::1'));
    });
  });

  describe('options, checked at construction', () => {
    it.each([
      [{ maxFailuresPerUsernameAndAddress: 0 }, '`maxFailuresPerUsernameAndAddress` must be an integer at least 1'],
      [{ maxFailuresPerUsername: 10 }, 'maxFailuresPerUsernameAndAddress'],
      [{ usernameDelayAfterAddresses: 1 }, '`usernameDelayAfterAddresses` must be an integer from 2'],
      [{ maxUsernameDelaySeconds: 0 }, '`maxUsernameDelaySeconds` must be an integer from 1'],
      [{ maxFailuresPerAddress: 1.5 }, '`maxFailuresPerAddress` must be an integer'],
      [{ windowSeconds: 0 }, '`windowSeconds` must be an integer from 1'],
      [{ store: {} }, '`store` must be a SignInGuardStore (reserve and settle)'],
      [{ store: new MemoryCounterStore() }, 'a CounterStore cannot check and count in one step'],
      [{ maxAttemptsPerAddress: 5 }, 'unsupported option `maxAttemptsPerAddress`'],
      [{ queueTimeoutMs: 50 }, '`queueTimeoutMs` must be an integer from 100 to 60000'],
      [{ maxKnownDevicesPerUsername: 0 }, '`maxKnownDevicesPerUsername` must be an integer from 1 to 1000'],
    ])('refuses %j', (wrong, message) => {
      expect(() => signInGuard(wrong as never)).toThrow(ConfigurationError);
      expect(() => signInGuard(wrong as never)).toThrow(message);
    });

    it('holds an attempt that waits only for attempts in flight at most queueTimeoutMs, then answers 429 with Retry-After: 1', async () => {
      const guard = signInGuard({ maxFailuresPerUsernameAndAddress: 1, queueTimeoutMs: 1000 });
      const req = { ip: '127.0.0.1' } as never;
      const first = await guard.attempt(req, 'alice');
      const started = Date.now();
      const held = guard.attempt(req, 'alice');
      await expect(held).rejects.toMatchObject({ status: 429, code: 42901, headers: { 'Retry-After': '1' } });
      const waited = Date.now() - started;
      // It gives up when its next back-off step (at most 200 ms) would pass the deadline, and not later.
      expect(waited).toBeGreaterThanOrEqual(1000 - 200);
      expect(waited).toBeLessThan(1000 + MACHINE_ALLOWANCE_MS);
      await first.succeeded();
    });

    it('reports its allowances, delays, window and known devices (defaults: 10, 100, 3 addresses, 60 s, 900 s, 20)', () => {
      const guard = signInGuard();
      expect([
        guard.maxFailuresPerUsernameAndAddress,
        guard.maxFailuresPerAddress,
        guard.usernameDelayAfterAddresses,
        guard.maxUsernameDelaySeconds,
        guard.windowSeconds,
        guard.maxKnownDevicesPerUsername,
      ]).toEqual([10, 100, 3, 60, 900, 20]);
    });
  });
});

const from = (address: string) => ({ 'X-Forwarded-For': address });

/** How a test moves time past a delay: a faked Date for the memory store, real time for Redis's own clock. */
interface Clock {
  start(): void;
  advance(ms: number): Promise<void>;
  stop(): void;
}
const FAKE_DATE: Clock = {
  start: useFakeDate,
  advance: async (ms) => jest.setSystemTime(Date.now() + ms),
  stop: () => jest.useRealTimers(),
};
const REAL_TIME: Clock = {
  start: () => undefined,
  advance: (ms) => {
    const until = Date.now() + ms;
    return waitUntil(() => Date.now() >= until, `${ms} ms to pass`);
  },
  stop: () => undefined,
};

/** The lock-out policy, on the doors of `apps` (one app, or two instances on one store). */
function lockOuts(apps: () => Promise<[Express, Express]>, clock: Clock): void {
  it('ten wrong passwords from one address throttle that address only: the owner signs in from another, at both doors', async () => {
    const [a, b] = await apps();
    for (let i = 0; i < 10; i++) expect((await postToken(a, WRONG, from('203.0.113.1'))).status).toBe(400);
    const aimed = await postToken(b, ALICE, from('203.0.113.1'));
    expect(aimed.status).toBe(429);
    expect(aimed.body.error_description).toBe(
      'Too many failed sign-in attempts for this username from this address; retry after the time in Retry-After.',
    );
    // The owner, from addresses without recent failures: signed in at both doors, on both instances.
    expect((await postToken(b, ALICE, from('198.51.100.7'))).status).toBe(200);
    expect((await browserSignIn(a, ALICE, from('198.51.100.8'))).status).toBe(201);
    // The failing address stays throttled, at both doors.
    expect((await browserSignIn(a, ALICE, from('203.0.113.1'))).status).toBe(429);
    expect((await postToken(b, ALICE, from('203.0.113.1'))).status).toBe(429);
  });

  it('counts an address once per window: an owner who mistypes now and then from one address never delays the username', async () => {
    const [a, b] = await apps();
    // Fail, then sign in, five times from one address (no device proven): one failed address, not five.
    for (let i = 0; i < 5; i++) {
      expect((await postToken(i % 2 ? a : b, WRONG, from('198.51.100.7'))).status).toBe(400);
      expect((await browserSignIn(i % 2 ? b : a, ALICE, from('198.51.100.7'))).status).toBe(201);
    }
    // A second address failing once is the second failed address: still no username-wide delay.
    expect((await postToken(a, WRONG, from('192.0.2.1'))).status).toBe(400);
    expect((await postToken(b, ALICE, from('198.51.100.9'))).status).toBe(200);
    expect((await browserSignIn(a, ALICE, from('198.51.100.10'))).status).toBe(201);
  });

  it('failures from several addresses bring short, progressive delays for the username, never one long lock', async () => {
    clock.start();
    try {
      const [a, b] = await apps();
      // Two addresses with failures: no username-wide delay yet.
      expect((await postToken(a, WRONG, from('192.0.2.1'))).status).toBe(400);
      expect((await browserSignIn(b, WRONG, from('192.0.2.2'))).status).toBe(401);
      expect((await postToken(b, WRONG, from('192.0.2.2'))).status).toBe(400);
      // The third address: from now on every failure delays the username, 1 s, then 2 s, ... at most 2 s here.
      expect((await postToken(a, WRONG, from('192.0.2.3'))).status).toBe(400);
      const delayed = await postToken(b, ALICE, from('198.51.100.9'));
      expect(delayed.status).toBe(429);
      expect(delayed.body.error_description).toBe(
        'Sign-in for this username is slowed down after failed attempts from several addresses; retry after the time in Retry-After.',
      );
      expect(Number(delayed.headers['retry-after'])).toBe(1);
      await clock.advance(1100);
      expect((await browserSignIn(a, WRONG, from('192.0.2.4'))).status).toBe(401);
      const longer = await browserSignIn(b, ALICE, from('198.51.100.9'));
      expect(longer.status).toBe(429);
      expect(Number(longer.headers['retry-after'])).toBe(2);
      await clock.advance(2100);
      expect((await postToken(a, WRONG, from('192.0.2.5'))).status).toBe(400);
      // Capped at maxUsernameDelaySeconds (2 here).
      expect(Number((await postToken(b, ALICE, from('198.51.100.9'))).headers['retry-after'])).toBe(2);
      await clock.advance(2100);
      // Once the delay has passed, the owner signs in.
      expect((await postToken(b, ALICE, from('198.51.100.9'))).status).toBe(200);
    } finally {
      clock.stop();
    }
  });
}

/** The `Cookie` header that sends back the device cookie a response set. */
function deviceCookieOf(res: request.Response): string {
  const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const cookie = set.find((line) => line.startsWith('__Host-device='));
  if (!cookie) throw new Error('no device cookie was set');
  expect(cookie).toMatch(/; Path=\/; Max-Age=\d+; HttpOnly; Secure; SameSite=Strict$/);
  return cookie.split(';')[0] as string;
}

/**
 * Known devices: a device that signed the account in before, a
 * browser with its signed device cookie or an authenticated confidential
 * client, has its own allowance; failures from other addresses, however
 * they re-arm the username-wide delay, never refuse it.
 */
function knownDevices(apps: () => Promise<[Express, Express]>, clock: Clock): void {
  const CLIENT = { Authorization: basic('demo-client', 'demo-secret') };

  it('lets the owner on a known device sign in on every try while 5 addresses keep failing and re-arming, at both doors', async () => {
    clock.start();
    try {
      const [a, b] = await apps();
      const browser = await browserSignIn(a, ALICE, from('198.51.100.7'));
      expect(browser.status).toBe(201);
      const cookie = deviceCookieOf(browser);
      expect((await postToken(b, ALICE, { ...from('198.51.100.7'), ...CLIENT })).status).toBe(200);
      for (let round = 0; round < 3; round++) {
        // Five addresses fail again as soon as the delay ends, which re-arms it.
        for (let i = 1; i <= 5; i++) await postToken(round % 2 === 0 ? a : b, WRONG, from(`192.0.2.${i}`));
        // An unknown device is delayed now, the right password included ...
        expect((await browserSignIn(b, ALICE, from(`198.51.100.${50 + round}`))).status).toBe(429);
        // ... a forged device cookie is no device ...
        const forged = { ...from(`198.51.100.${60 + round}`), Cookie: '__Host-device=made-up.c2lnbmF0dXJl' };
        expect((await browserSignIn(a, ALICE, forged)).status).toBe(429);
        // ... and the owner's known devices sign in, at both doors, from any address.
        expect((await browserSignIn(b, ALICE, { ...from(`198.51.100.${20 + round}`), Cookie: cookie })).status).toBe(201);
        expect((await postToken(a, ALICE, { ...from(`198.51.100.${30 + round}`), ...CLIENT })).status).toBe(200);
        await clock.advance(2100);
      }
    } finally {
      clock.stop();
    }
  });

  it("treats another account's device cookie, and one with a wrong signature, as an unknown device", async () => {
    const [a, b] = await apps();
    const readers = deviceCookieOf(
      await browserSignIn(a, { username: 'reader', password: 'read-only-pass' }, from('198.51.100.7')),
    );
    const owners = deviceCookieOf(await browserSignIn(b, ALICE, from('198.51.100.7')));
    for (let i = 1; i <= 3; i++) expect((await postToken(a, WRONG, from(`192.0.2.${i}`))).status).toBe(400);
    // The reader's device is known for the reader only; the owner's id under another signature is no device at all.
    const resigned = `${owners.slice(0, -2)}${owners.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const cookie of [readers, resigned]) {
      expect([cookie, (await browserSignIn(b, ALICE, { ...from('203.0.113.5'), Cookie: cookie })).status]).toEqual([cookie, 429]);
    }
    expect((await browserSignIn(a, ALICE, { ...from('203.0.113.5'), Cookie: owners })).status).toBe(201);
  });

  it('gives a known device its own allowance, then forgets it: a stolen device credential buys one allowance', async () => {
    const [a, b] = await apps();
    const cookie = deviceCookieOf(await browserSignIn(a, ALICE, from('198.51.100.7')));
    // Three addresses fail: the username is delayed for unknown devices.
    for (let i = 1; i <= 3; i++) expect((await postToken(a, WRONG, from(`192.0.2.${i}`))).status).toBe(400);
    expect((await browserSignIn(b, ALICE, from('198.51.100.8'))).status).toBe(429);
    // The stolen cookie has the device's own allowance: ten checked guesses, from any addresses, not delayed.
    const stolen = (address: string) => ({ ...from(address), Cookie: cookie });
    for (let i = 1; i <= 10; i++) expect((await browserSignIn(i % 2 ? a : b, WRONG, stolen(`203.0.113.${i}`))).status).toBe(401);
    // Then the device is forgotten: an unknown device, delayed like any other, the right password included.
    expect((await browserSignIn(a, ALICE, stolen('203.0.113.99'))).status).toBe(429);
  });
}

/**
 * Parallel wrong passwords: the guard's check and count are one
 * atomic step, so however many arrive at once, on one instance or two, at
 * most what the policy allows one after another is checked: 10 from one
 * address (the pair's); from 30 addresses sending one each, 3 (the
 * addresses before the username-wide delay); sending two each, 5 (two
 * addresses use both, a third fails once, and the delay starts). Every
 * other answer is a 429 or the deadline's 503, each with Retry-After.
 */
function parallelGuesses(apps: () => Promise<[Express, Express]>): void {
  it.each([
    [30, 1, 10],
    [60, 1, 10],
    [30, 30, 3],
    [60, 30, 5],
  ])(
    'checks at most the allowance of %i parallel wrong passwords from %i address(es): %i',
    async (total, addresses, allowance) => {
      const [a, b] = await apps();
      const results = await Promise.all(
        Array.from({ length: total }, (_, i) => {
          const app = i % 4 < 2 ? a : b;
          const headers = from(`203.0.113.${(i % addresses) + 1}`);
          return i % 2 === 0 ? postToken(app, WRONG, headers) : browserSignIn(app, WRONG, headers);
        }),
      );
      const statuses = results.map((res) => res.status);
      const checked = count(statuses, 400) + count(statuses, 401);
      expect(checked).toBeGreaterThanOrEqual(1);
      expect(checked).toBeLessThanOrEqual(allowance);
      const refused = results.filter((res) => res.status !== 400 && res.status !== 401);
      expect(refused).toHaveLength(total - checked);
      for (const res of refused) {
        expect([429, 503]).toContain(res.status);
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
    },
  );
}

describe('lock-outs that cannot be aimed: one instance', () => {
  lockOuts(async () => {
    const app = await twoDoors(newGuard({ maxUsernameDelaySeconds: 2 }), true);
    return [app, app];
  }, FAKE_DATE);
});

describe('known devices: one instance', () => {
  knownDevices(async () => {
    const app = await twoDoors(newGuard({ maxUsernameDelaySeconds: 2 }), true);
    return [app, app];
  }, FAKE_DATE);
});

/**
 * What a store's settle() says of a failure (the guard's `authn_login_fail_max`,
 * docs/observability.md): the allowance it used up, the one the next attempt meets.
 */
function allowancesUsed(makeStore: () => Promise<SignInGuardStore>): void {
  const limits: SignInLimits = {
    maxPair: 2,
    maxAddress: 3,
    delayAfterAddresses: 2,
    maxDelayMs: 60_000,
    windowMs: 60_000,
    pendingMs: 60_000,
    deviceMs: 86_400_000,
    maxDevices: 20,
  };
  const attempt = async (store: SignInGuardStore, account: string, address: string, outcome: 'failed' | 'succeeded') => {
    expect(await store.reserve({ account, address }, limits)).toEqual({ kind: 'admit', known: false });
    return store.settle({ account, address }, outcome, limits, false);
  };

  it("settle() names the allowance a failure used up: the pair's, the address's, the username-wide delay's first step", async () => {
    const store = await makeStore();
    expect(await attempt(store, 'account-1', 'address-1', 'failed')).toBeUndefined();
    expect(await attempt(store, 'account-1', 'address-1', 'failed')).toBe('pair');
    // The address's third failure, for another username.
    expect(await attempt(store, 'account-2', 'address-1', 'failed')).toBe('address');
    // A second failed address for one username starts its delay; a success uses nothing up.
    expect(await attempt(store, 'account-3', 'address-2', 'succeeded')).toBeUndefined();
    expect(await attempt(store, 'account-3', 'address-2', 'failed')).toBeUndefined();
    expect(await attempt(store, 'account-3', 'address-3', 'failed')).toBe('account');
  });
}

describe('MemorySignInGuardStore: the allowance a failure used up', () => {
  allowancesUsed(async () => new MemorySignInGuardStore());
});

describe('parallel wrong passwords: one instance', () => {
  parallelGuesses(async () => {
    const app = await twoDoors(newGuard(), true);
    return [app, app];
  });
});

describeWith(REDIS_SERVER, 'signInGuard() on a real redis-server: two instances, one allowance', () => {
  let redis: RedisServer;
  const makeClient = (url: string) => createClient({ url });
  const clients: ReturnType<typeof makeClient>[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
    await redis?.stop();
  });

  /** Two instances, each with its own connection and its own guard object, on one Redis key space. */
  async function twoInstances(prefix: string, options: SignInGuardOptions = {}, trustProxy = false): Promise<[Express, Express]> {
    const instance = async () => {
      const client = makeClient(redis.url);
      await client.connect();
      clients.push(client);
      return twoDoors(signInGuard({ store: new RedisSignInGuardStore({ client, prefix }), ...options }), trustProxy);
    };
    return [await instance(), await instance()];
  }

  describe('lock-outs that cannot be aimed: two instances', () => {
    let round = 0;
    lockOuts(() => twoInstances(`guard-aimed-${round++}:`, { maxUsernameDelaySeconds: 2 }, true), REAL_TIME);
  });

  describe('known devices: two instances', () => {
    let round = 0;
    knownDevices(() => twoInstances(`guard-devices-${round++}:`, { maxUsernameDelaySeconds: 2 }, true), REAL_TIME);
  });

  describe('RedisSignInGuardStore: the allowance a failure used up', () => {
    allowancesUsed(async () => {
      const client = makeClient(redis.url);
      await client.connect();
      clients.push(client);
      return new RedisSignInGuardStore({ client, prefix: 'guard-used-up:' });
    });
  });

  describe('parallel wrong passwords: two instances', () => {
    let round = 0;
    parallelGuesses(() => twoInstances(`guard-parallel-${round++}:`, {}, true));
  });

  it('checks exactly 10 of 60 parallel wrong passwords spread over both instances and both doors', async () => {
    const [a, b] = await twoInstances('guard-parallel:');
    const doors = [(app: Express) => postToken(app, WRONG), (app: Express) => browserSignIn(app, WRONG)];
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (doors[i % 2] as (app: Express) => Promise<request.Response>)(i % 4 < 2 ? a : b)),
    );
    const statuses = results.map((res) => res.status);
    expect(count(statuses, 400) + count(statuses, 401)).toBe(10);
    expect(count(statuses, 429)).toBe(50);
    expect((await browserSignIn(b, ALICE)).status).toBe(429);
  });

  it('never answers 429 to 50 parallel correct sign-ins spread over both instances', async () => {
    const [a, b] = await twoInstances('guard-correct:');
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => postToken(i % 2 === 0 ? a : b, ALICE)));
    expect(
      count(
        results.map((res) => res.status),
        200,
      ),
    ).toBe(50);
  });
});

describe('tokenEndpointErrors(): RFC 6749 shape for errors of shared middleware on the token path', () => {
  const TOKEN_HEADERS = {
    'Cache-Control': 'no-store, max-age=0',
    Pragma: 'no-cache',
    'Content-Type': 'application/json; charset=utf-8',
  };

  /** The shared middleware in front of the token endpoint, as a preset mounts it, with a small quota. */
  async function sharedStack(store: CounterStore = new MemoryCounterStore()): Promise<Express> {
    const app = express();
    app.use(tokenEndpointErrors());
    app.use(
      rateLimit({
        user: { limit: 2, windowSeconds: 60 },
        application: false,
        store,
        storeFailure: 'closed',
        log: () => undefined,
      }),
    );
    app.use(...parseBodies({ limit: '1kb' }));
    app.use(
      tokenRouter({
        ...TOKEN_OPTIONS,
        ...(await seedStores()),
      }),
    );
    app.post('/v1/users', (_req, res) => {
      res.status(201).json({});
    });
    app.use(notFound(), errorHandler({ production: true, log: false }));
    return app;
  }

  it('answers a body over the parser’s limit with 413 invalid_request', async () => {
    const app = await sharedStack();
    const res = await postToken(app, { ...ALICE, password: 'x'.repeat(2000) });
    expect(res.status).toBe(413);
    expectHeaders(res, TOKEN_HEADERS);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'The request body is too large.' });
  });

  it('answers the rate limiter’s 429 with too_many_requests and keeps Retry-After', async () => {
    const app = await sharedStack();
    for (let i = 0; i < 2; i++) expect((await postToken(app, ALICE)).status).toBe(200);
    const res = await postToken(app, ALICE);
    expect(res.status).toBe(429);
    expectHeaders(res, TOKEN_HEADERS);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.body).toEqual({
      error: 'too_many_requests',
      error_description: 'Too many requests; retry after the time in Retry-After.',
    });
  });

  it('answers a store outage of the rate limiter with 503 temporarily_unavailable', async () => {
    const down = () => Promise.reject(new Error('down'));
    const app = await sharedStack({ increment: down, get: down, decrement: down, reset: down });
    const res = await postToken(app, ALICE);
    expect(res.status).toBe(503);
    expectHeaders(res, TOKEN_HEADERS);
    expect(res.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
  });

  it('leaves other paths in the {"errors":[...]} shape', async () => {
    const app = await sharedStack();
    const big = await request(app)
      .post('/v1/users')
      .send({ name: 'x'.repeat(2000) });
    expect(big.status).toBe(413);
    expect(big.headers.pragma).toBeUndefined();
    expect(big.body).toEqual({ errors: [{ message: 'The request body is too large.', code: 41300 }] });
    await request(app).post('/v1/users').send({});
    const limited = await request(app).post('/v1/users').send({});
    expect(limited.status).toBe(429);
    expect(limited.body.errors[0].code).toBe(42900);
  });

  it('maps a 500 to server_error with a generic description, and keeps errors that bring their own body', () => {
    const shaped = tokenErrorShape(apiError('internal', { message: 'secret detail' }));
    expect([shaped.status, shaped.body]).toEqual([
      500,
      { error: 'server_error', error_description: 'The token endpoint failed; try again later.' },
    ]);
    const own = packageError('oauthInvalidGrant', { body: { error: 'invalid_grant', error_description: 'x' } });
    expect(tokenErrorShape(own)).toBe(own);
  });

  it('refuses a path that does not start with a slash', () => {
    expect(() => tokenEndpointErrors({ path: 'token' })).toThrow(ConfigurationError);
  });
});
