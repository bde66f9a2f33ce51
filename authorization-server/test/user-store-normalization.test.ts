import { postToken, TEST_COST, tokenApp } from '../../test/support/oauth2.js';
import { hashPassword, MemoryUserStore, type UserRecord, type UserStore } from '../src/index.js';
import { usernameAllowed } from '../src/stores/stores.js';

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

/**
 * RFC 8265's UsernameCaseMapped profile (PRECIS
 * IdentifierClass) disallows control and default-ignorable code points, so
 * "\u200Balice" can be no look-alike of "alice": refused when the account is
 * added, and never looked up at sign-in.
 */
describe('usernames with control or default-ignorable code points (PRECIS)', () => {
  const REFUSED = [
    '\u200Balice', // ZERO WIDTH SPACE
    'ali\u00ADce', // SOFT HYPHEN
    'alice\u200D', // ZERO WIDTH JOINER
    '\u2060alice', // WORD JOINER
    'al\uFEFFice', // ZERO WIDTH NO-BREAK SPACE
    'alice\u0007', // BELL (a control)
    'ali\u0000ce', // NUL
    'alice\u034F', // COMBINING GRAPHEME JOINER
    'alice\u{E0041}', // TAG LATIN CAPITAL LETTER A
  ];

  const codePoints = (name: string) =>
    [...name].map((c) => `U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`).join(' ');

  it.each(REFUSED.map((name) => [codePoints(name), name]))('MemoryUserStore.add refuses %s', async (_shown, username) => {
    const users = new MemoryUserStore();
    await expect(users.add({ username, subject: 's', passwordHash: 'x' })).rejects.toThrow(
      /control or default-ignorable code point U\+[0-9A-F]{4,6}/,
    );
    expect(usernameAllowed(username)).toBe(false);
  });

  it('accepts names of every script, with spaces and punctuation inside', async () => {
    const users = new MemoryUserStore();
    for (const username of ['alice', 'Zoë', 'José María', 'ＡＬＩＣＥ', '山田', 'o.brien-smith']) {
      expect(usernameAllowed(username)).toBe(true);
      await users.add({ username, subject: username, passwordHash: 'x' });
    }
  });

  it('answers sign-in with such a name like an unknown user, without asking the store', async () => {
    const hash = await hashPassword('correct horse', { cost: TEST_COST });
    const asked: string[] = [];
    // A store from before the rule: it holds a look-alike row, and strips what it cannot show.
    const users: UserStore = {
      findByUsername: async (username) => {
        asked.push(username);
        return username.replace(/\u200B/g, '') === 'alice' ? { subject: 'look-alike', passwordHash: hash } : undefined;
      },
    };
    const app = await tokenApp({ users });
    for (const username of ['\u200Balice', 'A\u200Blice']) {
      const res = await postToken(app, { grant_type: 'password', username, password: 'correct horse' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'The username or password is not correct.' });
    }
    expect(asked).toEqual([]);
    expect((await postToken(app, { grant_type: 'password', username: 'alice', password: 'correct horse' })).status).toBe(200);
  });
});
