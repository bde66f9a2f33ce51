import bcrypt from 'bcryptjs';
import express from 'express';
import { createClient } from 'redis';
import { type ErrorLogEntry, errorHandler, notFound } from '../../src/errors/index.js';
import { RedisCounterStore } from '../../src/stores/index.js';
import { ALICE, postToken, TEST_COST, TOKEN_OPTIONS, testHasher } from '../../test/support/oauth2.js';
import {
  RedisClientStore,
  RedisRefreshTokenStore,
  RedisSessionStore,
  RedisSignInGuardStore,
  RedisUserStore,
  tokenRouter,
  type UserStore,
} from '../src/index.js';
import { passwordSignIn } from '../src/sign-in/password-sign-in.js';
import { USER_RECORD_INVALID, UserRecordError } from '../src/sign-in/user-record.js';

/**
 * The user store's answer is checked where it enters the package: a record
 * the package cannot use (no `subject`, no usable hash) is a clear
 * EAC_USER_RECORD_INVALID naming the store and the field, a 500 at the token
 * endpoint, and never a token nor a silent "wrong password". A Redis client
 * that is not connected is refused when the store is built.
 */

const HASH = bcrypt.hashSync(ALICE.password, TEST_COST);

/** A store of one user, answering `record` for "alice" as a custom store might. */
class OneRowStore implements UserStore {
  constructor(private readonly record: unknown) {}
  async findByUsername(username: string) {
    return (username === 'alice' ? this.record : undefined) as never;
  }
}

/** The token app, with the 5xx log kept. */
function appWith(users: UserStore): { app: express.Express; logged: ErrorLogEntry[] } {
  const logged: ErrorLogEntry[] = [];
  const app = express();
  app.use(tokenRouter({ ...TOKEN_OPTIONS, users, signInGuard: false }));
  app.use(notFound(), errorHandler({ production: true, log: (entry) => logged.push(entry) }));
  return { app, logged };
}

const silenced = () => jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);

describe('a user store that answers a record the package cannot use', () => {
  it.each([
    ['`id` instead of `subject`', { id: 'u-1', passwordHash: HASH }, 'subject', 'It has `id`: name that field `subject`'],
    ['an empty `subject`', { subject: '', passwordHash: HASH }, 'subject', 'is empty'],
    ['a null passwordHash', { subject: 'u-1', passwordHash: null }, 'passwordHash', 'is null'],
    ['a passwordHash of the wrong type', { subject: 'u-1', passwordHash: 42 }, 'passwordHash', 'is number'],
    [
      'a passwordHash of no known format',
      { subject: 'u-1', passwordHash: '$argon2id$v=19$m=65536' },
      'passwordHash',
      'is no bcrypt hash',
    ],
    ['scopes that are not a list', { subject: 'u-1', passwordHash: HASH, scopes: 'users:read' }, 'scopes', 'is a string'],
    ['no object at all', 'u-1', '(record)', 'is a string'],
  ])(
    'answers %s with 500 server_error, no token, and EAC_USER_RECORD_INVALID naming the store and the field',
    async (_name, record, field, words) => {
      const warned = silenced();
      try {
        const { app, logged } = appWith(new OneRowStore(record));
        const res = await postToken(app, ALICE);
        expect(res.status).toBe(500);
        expect(res.body).toEqual({ error: 'server_error', error_description: 'The token endpoint failed; try again later.' });
        expect(res.body.access_token).toBeUndefined();
        // The log gets the store's error itself, not the generic answer.
        const cause = logged[0]?.error;
        expect(cause).toBeInstanceOf(UserRecordError);
        expect(cause).toMatchObject({ code: USER_RECORD_INVALID, store: 'OneRowStore', field });
        expect((cause as Error).message).toContain(`OneRowStore.findByUsername() answered a user whose`);
        expect((cause as Error).message).toContain(words);
        expect((cause as Error).message).toContain('#eac_user_record_invalid]');
        // Said on stderr once per store, in production too.
        expect(
          warned.mock.calls.filter(([, options]) => (options as { code?: string }).code === USER_RECORD_INVALID),
        ).toHaveLength(1);
      } finally {
        warned.mockRestore();
      }
    },
  );

  it('rejects passwordSignIn() with the error before any bcrypt work, and gives the guard its attempt back', async () => {
    const warned = silenced();
    try {
      const verify = jest.spyOn(testHasher, 'verify');
      const cancelled = jest.fn(async () => undefined);
      const guard = { attempt: async () => ({ succeeded: jest.fn(), failed: jest.fn(), cancelled }) };
      const check = passwordSignIn({
        users: new OneRowStore({ id: 'u-1', passwordHash: HASH }),
        passwordHasher: testHasher,
        signInGuard: guard as never,
      });
      await expect(check({ headers: {} } as never, 'alice', ALICE.password)).rejects.toMatchObject({
        code: USER_RECORD_INVALID,
        field: 'subject',
      });
      expect(verify).not.toHaveBeenCalled();
      expect(cancelled).toHaveBeenCalledTimes(1);
      verify.mockRestore();
    } finally {
      warned.mockRestore();
    }
  });

  it('still answers undefined and null as "no such user" (400 invalid_grant)', async () => {
    for (const record of [undefined, null]) {
      const { app } = appWith(new OneRowStore(record));
      const res = await postToken(app, ALICE);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
    }
  });
});

describe('a Redis client that is not connected', () => {
  const notConnected = () => createClient({ url: 'redis://127.0.0.1:1' });
  const message = (factory: string) =>
    `${factory}(options): \`client\` must be a connected node-redis client; received one that is not connected (connect() was never called, or it was closed). Call \`await client.connect()\` before building the store and the routers given it, and keep the client open while they serve.`;

  it.each([
    ['RedisUserStore', (client: never) => new RedisUserStore({ client })],
    ['RedisClientStore', (client: never) => new RedisClientStore({ client })],
    ['RedisRefreshTokenStore', (client: never) => new RedisRefreshTokenStore({ client })],
    ['RedisSignInGuardStore', (client: never) => new RedisSignInGuardStore({ client })],
    ['RedisSessionStore', (client: never) => new RedisSessionStore({ client })],
    ['RedisCounterStore', (client: never) => new RedisCounterStore({ client })],
  ])('is refused when %s is built, with what to do (EAC_OPTION_INVALID)', (factory, build) => {
    const client = notConnected() as never;
    expect(() => build(client)).toThrow(expect.objectContaining({ code: 'EAC_OPTION_INVALID', option: 'client' }));
    expect(() => build(client)).toThrow(message(factory));
  });

  it('is refused before the token router can spend a bcrypt check on it', () => {
    const client = notConnected() as never;
    const verify = jest.spyOn(testHasher, 'verify');
    expect(() => tokenRouter({ ...TOKEN_OPTIONS, users: new RedisUserStore({ client }) })).toThrow(message('RedisUserStore'));
    expect(verify).not.toHaveBeenCalled();
    verify.mockRestore();
  });

  it('is refused when still connecting without its offline queue, and taken when still connecting with it', () => {
    const offline = {
      sendCommand: async () => 'OK',
      isOpen: true,
      isReady: false,
      options: { disableOfflineQueue: true },
    } as never;
    expect(() => new RedisUserStore({ client: offline })).toThrow(
      'must be a ready node-redis client; received one still connecting',
    );
    const queued = { sendCommand: async () => 'OK', isOpen: true, isReady: false, options: {} } as never;
    expect(() => new RedisUserStore({ client: queued })).not.toThrow();
  });
});
