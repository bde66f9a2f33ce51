import type { UserRecord, UserStore } from '../src/oauth2/index.js';
import { hashPassword } from '../src/oauth2/index.js';
import { postToken, TEST_COST, tokenApp } from './support/oauth2.js';

/**
 * A custom UserStore that keeps usernames as typed: the library asks it for
 * the normalized name, so "Bob" never signs in. The answer stays the generic
 * invalid_grant (no user enumeration); in development the server says why,
 * once, as a process warning.
 */
class RowsAsTyped implements UserStore {
  readonly asked: string[] = [];
  constructor(private readonly rows: Map<string, UserRecord>) {}
  async findByUsername(username: string): Promise<UserRecord | undefined> {
    this.asked.push(username);
    return this.rows.get(username);
  }
}

/** The library's warnings of one code, as process.emitWarning() received them. */
const warnings = (): { of: (code: string) => string[]; stop: () => void } => {
  const spy = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  return {
    of: (code) =>
      spy.mock.calls
        .filter(([, options]) => (options as { code?: string } | undefined)?.code === code)
        .map(([message]) => String(message)),
    stop: () => spy.mockRestore(),
  };
};

describe('a custom UserStore that does not normalize usernames', () => {
  const environment = process.env.NODE_ENV;
  afterEach(() => {
    process.env.NODE_ENV = environment;
  });

  const storeWithBob = async (): Promise<RowsAsTyped> =>
    new RowsAsTyped(new Map([['Bob', { subject: '7', passwordHash: await hashPassword('correct horse', { cost: TEST_COST }) }]]));

  it('answers invalid_grant and, in development, warns once naming normalizeUsername()', async () => {
    process.env.NODE_ENV = 'development';
    const users = await storeWithBob();
    const app = await tokenApp({ users });
    const seen = warnings();
    try {
      const form = { grant_type: 'password', username: 'Bob', password: 'correct horse' };
      const first = await postToken(app, form);
      const second = await postToken(app, form);
      expect(first.status).toBe(400);
      expect(first.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
      expect(second.body.error).toBe('invalid_grant');
      expect(users.asked).toEqual(['bob', 'Bob', 'bob']);
      expect(seen.of('EAC_USER_STORE_NOT_NORMALIZED')).toEqual([
        'UserStore.findByUsername("bob") found no user, but findByUsername("Bob") did: the library looks users up by ' +
          'normalizeUsername(username) (NFKC, trimmed, lower case), so this user can never sign in. Store the normalized ' +
          'name, or compare with it in findByUsername() (docs/oauth2-token.md#your-own-user-store).',
      ]);
    } finally {
      seen.stop();
    }
  });

  it('does not ask the store twice, nor warn, in production', async () => {
    process.env.NODE_ENV = 'production';
    const users = await storeWithBob();
    const app = await tokenApp({ users });
    const seen = warnings();
    try {
      const res = await postToken(app, { grant_type: 'password', username: 'Bob', password: 'correct horse' });
      expect(res.body.error).toBe('invalid_grant');
      expect(users.asked).toEqual(['bob']);
      expect(seen.of('EAC_USER_STORE_NOT_NORMALIZED')).toEqual([]);
    } finally {
      seen.stop();
    }
  });

  it('stays silent for a name that is simply unknown', async () => {
    process.env.NODE_ENV = 'development';
    const users = await storeWithBob();
    const app = await tokenApp({ users });
    const seen = warnings();
    try {
      const res = await postToken(app, { grant_type: 'password', username: 'Carol', password: 'x' });
      expect(res.body.error).toBe('invalid_grant');
      expect(users.asked).toEqual(['carol', 'Carol']);
      expect(seen.of('EAC_USER_STORE_NOT_NORMALIZED')).toEqual([]);
    } finally {
      seen.stop();
    }
  });
});
