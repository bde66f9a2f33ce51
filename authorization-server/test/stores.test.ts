import { MemoryCounterStore } from '../../src/stores/index.js';
import { hashSlot, redisKey, taggedKey } from '../../src/stores/redis/index.js';
import { MemoryRefreshTokenStore } from '../src/index.js';
import { REMEMBERED_REFRESH_TOKENS } from '../src/stores/stores.js';

const family = (familyId: string) => ({ familyId, subject: 'u-1', clientId: undefined, scopes: ['a'] });
const later = (ms = 60_000) => Date.now() + ms;

describe('MemoryCounterStore', () => {
  let now: number;
  let store: MemoryCounterStore;
  beforeEach(() => {
    now = 1_000_000;
    store = new MemoryCounterStore({ now: () => now });
  });
  afterEach(() => store.close());

  describe('decrement()', () => {
    it('gives one hit back', async () => {
      await store.increment('k', 60_000);
      await store.increment('k', 60_000);
      await store.decrement('k');
      expect(await store.get('k')).toEqual({ count: 1, resetAt: 1_060_000 });
    });

    it('never goes below 0', async () => {
      await store.increment('k', 60_000);
      await store.decrement('k');
      await store.decrement('k');
      expect(await store.get('k')).toEqual({ count: 0, resetAt: 1_060_000 });
      expect(await store.increment('k', 60_000)).toEqual({ count: 1, resetAt: 1_060_000 });
    });

    it('keeps the window’s end', async () => {
      await store.increment('k', 60_000);
      now += 30_000;
      await store.increment('k', 60_000);
      await store.decrement('k');
      expect(await store.get('k')).toEqual({ count: 1, resetAt: 1_060_000 });
    });

    it('is a no-op on a missing or ended window', async () => {
      await store.decrement('missing');
      expect(await store.get('missing')).toBeUndefined();
      expect(store.size).toBe(0);
      await store.increment('k', 1_000);
      now += 1_000;
      await store.decrement('k');
      expect(await store.get('k')).toBeUndefined();
      expect(await store.increment('k', 1_000)).toEqual({ count: 1, resetAt: now + 1_000 });
    });
  });
});

describe('MemoryRefreshTokenStore', () => {
  let store: MemoryRefreshTokenStore;
  beforeEach(() => {
    store = new MemoryRefreshTokenStore();
  });
  afterEach(() => store.close());

  /** Rotates `count` times from `first`; answers the current hash. */
  async function rotateMany(first: string, count: number, name = 'h'): Promise<string> {
    let current = first;
    for (let i = 1; i <= count; i++) {
      const next = `${name}${i}`;
      expect((await store.rotate(current, next, later())).status).toBe('rotated');
      current = next;
    }
    return current;
  }

  describe('memory per family', () => {
    it('stays the same after 10,000 rotations of one family', async () => {
      await store.create(family('f'), 'h0', later());
      await rotateMany('h0', 100);
      const after100 = store.tokens;
      const current = await rotateMany('h100', 9_900, 'g');
      expect(current).toBe('g9900');
      expect(store.families).toBe(1);
      expect(store.tokens).toBe(after100);
      expect(store.tokens).toBe(REMEMBERED_REFRESH_TOKENS + 1);
    });

    it('keeps at most `rememberedTokens` + 1 hashes per family', async () => {
      const small = new MemoryRefreshTokenStore({ rememberedTokens: 2 });
      try {
        await small.create(family('f'), 'h0', later());
        for (let i = 1; i <= 5; i++) await small.rotate(`h${i - 1}`, `h${i}`, later());
        expect(small.tokens).toBe(3);
      } finally {
        small.close();
      }
    });
  });

  describe('reuse', () => {
    it.each([1, 2, REMEMBERED_REFRESH_TOKENS])('of a token %i rotation(s) old revokes the family', async (age) => {
      await store.create(family('f'), 'h0', later());
      const current = await rotateMany('h0', age);
      expect(await store.find('h0')).toEqual({ ...family('f'), current: false });
      expect(await store.rotate('h0', 'x', later())).toEqual({ status: 'reused', familyId: 'f' });
      expect(await store.rotate(current, 'y', later())).toEqual({ status: 'invalid' });
      expect(store.families).toBe(0);
      expect(store.tokens).toBe(0);
    });

    it('of a token older than the remembered ones is refused, and the family lives on', async () => {
      await store.create(family('f'), 'h0', later());
      const current = await rotateMany('h0', REMEMBERED_REFRESH_TOKENS + 1);
      expect(await store.find('h0')).toBeUndefined();
      expect(await store.rotate('h0', 'x', later())).toEqual({ status: 'invalid' });
      expect((await store.rotate(current, 'next', later())).status).toBe('rotated');
    });
  });

  // Ends are read on the clock jest's fake timers move.
  describe('expiry', () => {
    beforeEach(() => jest.useFakeTimers({ now: Date.UTC(2026, 0, 1) }));
    afterEach(() => jest.useRealTimers());

    it('answers nothing for an expired family and sweeps it out of memory', async () => {
      await store.create(family('old'), 'o0', Date.now() + 50);
      await store.rotate('o0', 'o1', Date.now() + 50);
      await store.create(family('live'), 'l0', later());
      jest.advanceTimersByTime(49);
      expect(await store.find('o1')).toEqual({ ...family('old'), current: true });
      jest.advanceTimersByTime(1);
      expect(await store.find('o1')).toBeUndefined();
      expect(store.families).toBe(2);
      store.sweep();
      expect(store.families).toBe(1);
      expect(store.tokens).toBe(1);
      expect(await store.find('l0')).toEqual({ ...family('live'), current: true });
    });

    it('sweeps on its own timer', async () => {
      const swept = new MemoryRefreshTokenStore({ sweepIntervalMs: 20 });
      try {
        await swept.create(family('f'), 'h0', Date.now() + 10);
        jest.advanceTimersByTime(19);
        expect(swept.families).toBe(1);
        jest.advanceTimersByTime(1);
        expect(swept.families).toBe(0);
        expect(swept.tokens).toBe(0);
      } finally {
        swept.close();
      }
    });
  });

  it.each([
    [
      { rememberedTokens: 0 },
      'MemoryRefreshTokenStore(options): `rememberedTokens` must be an integer from 1 to 1000; received 0.',
    ],
    [
      { sweepIntervalMs: 0 },
      'MemoryRefreshTokenStore(options): `sweepIntervalMs` must be an integer from 1 to 2147483647; received 0.',
    ],
  ])('refuses %j', (options, message) => {
    expect(() => new MemoryRefreshTokenStore(options)).toThrow(message);
  });
});

describe('Redis key naming', () => {
  it('puts keys with one hash tag in one slot, as Redis Cluster does', () => {
    // Slots from the Redis Cluster specification's examples and `CLUSTER KEYSLOT`.
    expect(hashSlot('123456789')).toBe(12739);
    expect(hashSlot('foo')).toBe(12182);
    expect(hashSlot('{user1000}.following')).toBe(hashSlot('user1000'));
    // An empty first tag means no tag: the whole key is hashed.
    expect(hashSlot('foo{}{bar}')).not.toBe(hashSlot('bar'));
    expect(hashSlot('foo{{bar}}zap')).toBe(hashSlot('{bar'));
    expect(hashSlot(taggedKey('oauth2:', 'family', 'f-1'))).toBe(hashSlot('f-1'));
    expect(redisKey('oauth2:', 'rt', 'abc')).toBe('oauth2:rt:abc');
    expect(taggedKey('oauth2:', 'family', 'f-1')).toBe('oauth2:family:{f-1}');
  });
});
