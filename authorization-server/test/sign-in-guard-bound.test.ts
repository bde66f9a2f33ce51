import type { ApiError } from 'express-api-conventions/errors';
import { createClient } from 'redis';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../../test/support/services.js';
import { useFakeDate } from '../../test/support/timing.js';
import { MemorySignInGuardStore, RedisSignInGuardStore, type SignInGuardStore, signInGuard } from '../src/index.js';

/**
 * The guard's documented bound (docs/oauth2-choices.md, "Lock-outs that
 * cannot be aimed"), attacked as the docs describe it: sequential wrong
 * passwords for one username, each from whichever address is still allowed,
 * each delayed guess from a new address, a pool of addresses reused as soon
 * as their own counts have ended. The clock is a fake one, moved by exactly
 * the Retry-After each refusal names, so the attacker loses no time.
 */

const WINDOW_MS = 900_000;
/** 2 addresses × 10 failures, the third address's first, then one per delay: 1, 3, 7, 15, 31 s, every 60 s from 63 s to 843 s. */
const DOCUMENTED_BOUND = 40;
const POOL = 25;

/** The guard's refusal reasons, told apart by the 429's message (the store's reply is not public). */
const isDelay = (error: ApiError) => error.message.startsWith('Sign-in for this username is slowed down');

/**
 * Runs the attack for `durationMs` of fake time; resolves the instants (ms
 * from the start) at which a guess was checked. Outside a delay it guesses
 * from the addresses it used last first (their failures may not count as a
 * new address); after a delay, from the one it used least recently.
 */
async function straddle(store: SignInGuardStore, durationMs: number): Promise<number[]> {
  const guard = signInGuard({ store });
  const start = Date.now();
  const checked: number[] = [];
  const lastUsed = new Map(Array.from({ length: POOL }, (_, i) => [`203.0.113.${i + 1}`, Number.NEGATIVE_INFINITY]));
  let afterDelay = false;
  while (Date.now() - start < durationMs) {
    const order = [...lastUsed.keys()].sort((a, b) => (lastUsed.get(a) as number) - (lastUsed.get(b) as number));
    const outcome = await firstAdmitted(guard, afterDelay ? order : order.reverse());
    if (outcome.admitted) {
      checked.push(Date.now() - start);
      lastUsed.set(outcome.admitted, Date.now() + checked.length / 1e6);
      afterDelay = false;
    } else {
      // Every address is refused, or the username is delayed: wait exactly what Retry-After says.
      jest.setSystemTime(Date.now() + outcome.retryAfterMs);
      afterDelay = outcome.delayed;
    }
  }
  return checked;
}

interface Outcome {
  readonly admitted?: string;
  readonly retryAfterMs: number;
  readonly delayed: boolean;
}

/** Tries the addresses in order until one is checked (and fails); else the shortest wait, and whether it is the username's delay. */
async function firstAdmitted(guard: ReturnType<typeof signInGuard>, addresses: readonly string[]): Promise<Outcome> {
  let soonest = Number.POSITIVE_INFINITY;
  for (const ip of addresses) {
    try {
      const attempt = await guard.attempt({ ip, socket: {} } as never, 'alice');
      await attempt.failed();
      return { admitted: ip, retryAfterMs: 0, delayed: false };
    } catch (error) {
      const refusal = error as ApiError;
      if (refusal.status !== 429) throw error;
      const retryAfterMs = Number(refusal.headers?.['Retry-After']) * 1000;
      if (isDelay(refusal)) return { retryAfterMs, delayed: true };
      soonest = Math.min(soonest, retryAfterMs);
    }
  }
  return { retryAfterMs: soonest, delayed: false };
}

/** The most guesses checked in any `windowMs` of the attack. */
function mostInAnyWindow(instants: readonly number[], windowMs: number): number {
  let most = 0;
  let first = 0;
  for (let last = 0; last < instants.length; last++) {
    while ((instants[last] as number) - (instants[first] as number) >= windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * 1,000 successful sign-ins of one account, each from a new device (a
 * cookie-less browser, a new DPoP key), half of them after a wrong password
 * from a new address: the account's known devices stay at
 * `maxKnownDevicesPerUsername`, its failed addresses within the window's.
 */
async function signInsFromNewDevices(store: SignInGuardStore, count: number): Promise<void> {
  const guard = signInGuard({ store, maxKnownDevicesPerUsername: 5, maxFailuresPerAddress: 100_000 });
  for (let i = 0; i < count; i++) {
    const ip = `198.51.${(i >> 8) & 255}.${i & 255}`;
    if (i % 2 === 1) await (await guard.attempt({ ip, socket: {} } as never, 'alice')).failed();
    // The owner signs in once a delay (its failures make a few) has passed.
    jest.setSystemTime(Date.now() + 61_000);
    await (await guard.attempt({ ip, socket: {} } as never, 'alice', { device: `cookie:device-${i}` })).succeeded();
  }
}

function bound(makeStore: () => Promise<SignInGuardStore>): void {
  beforeEach(useFakeDate);
  afterEach(() => jest.useRealTimers());

  it(`checks at most ${DOCUMENTED_BOUND} guesses in the first 15 minutes, and reaches it`, async () => {
    const instants = await straddle(await makeStore(), WINDOW_MS);
    expect(instants).toHaveLength(DOCUMENTED_BOUND);
  });

  it(`checks at most ${DOCUMENTED_BOUND} guesses in any 15 minutes of a 2-hour attack`, async () => {
    const instants = await straddle(await makeStore(), 8 * WINDOW_MS);
    expect(mostInAnyWindow(instants, WINDOW_MS)).toBe(DOCUMENTED_BOUND);
  }, 60_000);
}

describe('the sign-in guard’s bound against the straddling attack: MemorySignInGuardStore', () => {
  bound(async () => new MemorySignInGuardStore());

  it('keeps one account at its cap of known devices over 1,000 sign-ins from new devices', async () => {
    useFakeDate();
    try {
      const store = new MemorySignInGuardStore();
      await signInsFromNewDevices(store, 1000);
      const size = store.size();
      expect(size.accounts).toBe(1);
      expect(size.knownDevices).toBe(5);
      expect(size.deviceFailures).toBe(0);
      // The addresses that failed in the last 15 minutes: one every 122 s.
      expect(size.failedAddresses).toBeLessThanOrEqual(8);
    } finally {
      jest.useRealTimers();
    }
  });
});

describeWith(REDIS_SERVER, 'the sign-in guard’s bound against the straddling attack: RedisSignInGuardStore', () => {
  let redis: RedisServer;
  let client: ReturnType<typeof createClient>;
  let round = 0;
  beforeAll(async () => {
    redis = await startRedis();
    client = createClient({ url: redis.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.quit();
    await redis?.stop();
  });

  bound(async () => new RedisSignInGuardStore({ client, prefix: `bound-${round++}:` }));

  it('keeps one account at three keys and its cap of known devices over 1,000 sign-ins from new devices', async () => {
    useFakeDate();
    try {
      await signInsFromNewDevices(new RedisSignInGuardStore({ client, prefix: 'devices:' }), 1000);
    } finally {
      jest.useRealTimers();
    }
    const keys = (await client.keys('devices:sign-in:{*')).sort();
    expect(keys.map((key) => key.slice(key.indexOf('}:') + 2))).toEqual(['delay', 'devices', 'failed']);
    const tagged = (name: string) => keys.find((key) => key.endsWith(`}:${name}`)) as string;
    expect(await client.zCard(tagged('devices'))).toBe(5);
    expect(await client.hLen(tagged('failed'))).toBeLessThanOrEqual(8);
  }, 120_000);
});
