import { ConfigurationError } from 'express-api-conventions';
import { MemoryRefreshTokenStore, revokeRefreshToken, signInGuard, tokenRouter } from '../src/index.js';

/**
 * This package's options, read with the library's readOptions(): an old
 * name, or a name from the field's libraries (express-rate-limit,
 * express-brute), is refused at start-up with the name to use.
 */
describe('hints: old names and names from the field’s libraries', () => {
  const CASES: readonly [string, () => unknown, string][] = [
    // Renamed: a unit in the name of every number that has one.
    [
      'tokenRouter accessTokenTtl',
      () => tokenRouter({ accessTokenTtl: 60 } as never),
      'It is now `accessTokenTtlSeconds` (seconds).',
    ],
    [
      'tokenRouter refreshTokenTtl',
      () => tokenRouter({ refreshTokenTtl: 60 } as never),
      'It is now `refreshTokenTtlSeconds` (seconds).',
    ],
    // express-rate-limit and express-brute, on the sign-in guard
    [
      'signInGuard windowMs',
      () => signInGuard({ windowMs: 900_000 } as never),
      "express-rate-limit's `windowMs` is `windowSeconds` here, in seconds",
    ],
    ['signInGuard max', () => signInGuard({ max: 5 } as never), 'The guard counts failures, not requests'],
    [
      'signInGuard freeRetries',
      () => signInGuard({ freeRetries: 5 } as never),
      "express-brute's `freeRetries` is `maxFailuresPerUsernameAndAddress` here",
    ],
    [
      'signInGuard lifetime',
      () => signInGuard({ lifetime: 900 } as never),
      "express-brute's `lifetime` is `windowSeconds` here.",
    ],
  ];

  it.each(CASES)('%s', (_name, make, hint) => {
    expect(make).toThrow(ConfigurationError);
    expect(make).toThrow(hint);
  });

  it('revokeRefreshToken accessTokenTtl', async () => {
    const store = new MemoryRefreshTokenStore();
    try {
      await expect(revokeRefreshToken(store, 'token', { accessTokenTtl: 60 } as never)).rejects.toThrow(
        'revokeRefreshToken(options): received an unsupported option `accessTokenTtl`. It is now `accessTokenTtlSeconds` (seconds).',
      );
    } finally {
      store.close();
    }
  });
});
