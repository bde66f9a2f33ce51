import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import { type AccessTokenKey, bearerAuth } from 'express-api-conventions/oauth2';
import request from 'supertest';
import { ConfigurationError } from '../../src/config/index.js';
import { ALICE, AUDIENCE, decodeJwt, postToken, seedStores, TOKEN_OPTIONS } from '../../test/support/oauth2.js';
import { useFakeDate, waitUntil } from '../../test/support/timing.js';
import { RotatingKeys, tokenRouter } from '../src/index.js';

/**
 * Key rotation without restarts (docs/oauth2-token.md): two instances, each
 * with a RotatingKeys over one shared list, built once; the operator changes
 * the list in three steps and every instance follows, the JWKS serving both
 * keys during the overlap and a resource server accepting the old key's
 * tokens until the key is withdrawn.
 */

const DERIVATION_SECRET = 'a-derivation-secret-of-32-bytes-or-more';
const es256 = (kid: string): AccessTokenKey => ({
  kid,
  algorithm: 'ES256',
  privateKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
});

/** The list every instance reads: in production a Redis key or a database row. */
function sharedList(initial: AccessTokenKey[]): { set(keys: AccessTokenKey[]): void; load(): Promise<AccessTokenKey[]> } {
  let keys = initial;
  return {
    set: (next) => {
      keys = next;
    },
    load: async () => keys,
  };
}

/** Both instances behind one address, answering in turn as a load balancer would. */
async function balancer(apps: Express[]): Promise<{ issuer: string; server: Server }> {
  let turn = 0;
  const server = createServer((req, res) => (apps[turn++ % apps.length] as Express)(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { issuer: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function instance(issuer: string, keys: RotatingKeys): Promise<Express> {
  const app = express();
  app.use(tokenRouter({ ...TOKEN_OPTIONS, ...(await seedStores()), issuer, keys }));
  return app;
}

async function accessToken(app: Express): Promise<string> {
  const res = await postToken(app, ALICE);
  expect(res.status).toBe(200);
  return res.body.access_token;
}

const kids = async (app: Express): Promise<string[]> =>
  (await request(app).get('/v1/oauth2/keys')).body.keys.map((key: { kid: string }) => key.kid);

describe('tokenRouter({ keys: RotatingKeys }): rotation without restarts', () => {
  const sources: RotatingKeys[] = [];
  let running: { issuer: string; server: Server } | undefined;
  afterEach(async () => {
    jest.useRealTimers();
    for (const source of sources.splice(0)) source.stop();
    if (running !== undefined) await new Promise<void>((resolve) => running?.server.close(() => resolve()));
    running = undefined;
  });

  it('publishes, switches and withdraws on two instances built once; old tokens verify until withdrawn', async () => {
    const old = es256('old');
    const next = es256('next');
    const list = sharedList([old]);
    const start = () => RotatingKeys.start({ load: list.load, derivationSecret: DERIVATION_SECRET });
    sources.push(await start(), await start());
    const [sourceA, sourceB] = sources as [RotatingKeys, RotatingKeys];
    const apps: Express[] = [];
    running = await balancer(apps);
    const a = await instance(running.issuer, sourceA);
    const b = await instance(running.issuer, sourceB);
    apps.push(a, b);
    const refreshBoth = () => Promise.all([sourceA.refresh(), sourceB.refresh()]);
    useFakeDate();
    const api = express();
    api.get('/v1/me', bearerAuth({ issuer: running.issuer, audience: AUDIENCE, jwks: { cooldownSeconds: 1 } }), (req, res) => {
      res.json({ subject: req.auth?.subject });
    });
    const me = (token: string) => request(api).get('/v1/me').set('Authorization', `Bearer ${token}`);

    const first = await accessToken(a);
    expect(decodeJwt(first).header.kid).toBe('old');
    expect((await me(first)).status).toBe(200);

    // 1. Publish: the next key second, on every instance; the old one still signs.
    list.set([old, next]);
    await refreshBoth();
    expect(await kids(a)).toEqual(['old', 'next']);
    expect(await kids(b)).toEqual(['old', 'next']);
    expect(decodeJwt(await accessToken(b)).header.kid).toBe('old');

    // 2. Switch: the next key first; both instances sign with it, the old key's tokens still verify.
    list.set([next, old]);
    await refreshBoth();
    const second = await accessToken(a);
    expect(decodeJwt(second).header.kid).toBe('next');
    expect(decodeJwt(await accessToken(b)).header.kid).toBe('next');
    expect(await kids(b)).toEqual(['next', 'old']);
    jest.setSystemTime(Date.now() + 1001); // past the resource server's cooldown: the new kid may be fetched
    expect((await me(second)).status).toBe(200);
    expect((await me(first)).status).toBe(200);

    // 3. Withdraw: the old key leaves the list; once the resource server's set is older than its cache age, the
    //    old key's tokens are refused there, the new key's still accepted.
    list.set([next]);
    await refreshBoth();
    expect(await kids(a)).toEqual(['next']);
    expect(await kids(b)).toEqual(['next']);
    jest.setSystemTime(Date.now() + 601_000);
    await waitUntil(async () => (await me(first)).status === 401, 'the withdrawn key’s token refused');
    expect((await me(second)).status).toBe(200);
  });

  it('follows the shared list on its own every refreshSeconds, with no call from the application', async () => {
    const list = sharedList([es256('one')]);
    const source = await RotatingKeys.start({ load: list.load, derivationSecret: DERIVATION_SECRET, refreshSeconds: 1 });
    sources.push(source);
    list.set([es256('two')]);
    await waitUntil(() => source.current()[0]?.kid === 'two', 'the timer to read the new list');
  });

  it('keeps the last good list when a read fails or answers a list that is not valid, and says so', async () => {
    const list = sharedList([es256('one')]);
    const errors: unknown[] = [];
    const source = await RotatingKeys.start({
      load: list.load,
      derivationSecret: DERIVATION_SECRET,
      onError: (error) => errors.push(error),
    });
    sources.push(source);
    const before = source.current();
    list.set([]);
    await source.refresh();
    expect(source.current()).toBe(before);
    expect(errors).toEqual([expect.objectContaining({ code: 'EAC_OPTION_INVALID' })]);
  });

  it('answers the same array while the list is unchanged (the JWKS text and signer header are kept)', async () => {
    const key = es256('one');
    const source = await RotatingKeys.start({ load: async () => [key], derivationSecret: DERIVATION_SECRET });
    sources.push(source);
    const before = source.current();
    await source.refresh();
    expect(source.current()).toBe(before);
  });
});

describe('RotatingKeys.start() and tokenRouter({ keys }) refuse a wrong configuration at start-up', () => {
  const secret = DERIVATION_SECRET;
  it.each([
    ['a short derivationSecret', { load: async () => [es256('k')], derivationSecret: 'short' }, 'derivationSecret'],
    ['no load function', { derivationSecret: secret }, 'load'],
    ['a first read with no key', { load: async () => [], derivationSecret: secret }, 'keys'],
    [
      'a refreshSeconds out of range',
      { load: async () => [es256('k')], derivationSecret: secret, refreshSeconds: 0 },
      'refreshSeconds',
    ],
  ])('%s', async (_name, options, option) => {
    const started = RotatingKeys.start(options as never);
    await expect(started).rejects.toBeInstanceOf(ConfigurationError);
    await expect(started).rejects.toMatchObject({ code: 'EAC_OPTION_INVALID', message: expect.stringContaining(option) });
  });

  it('a keys object that is neither a list nor a RotatingKeys', async () => {
    const options = { ...TOKEN_OPTIONS, ...(await seedStores()), keys: { current: () => [] } as never };
    expect(() => tokenRouter(options)).toThrow(
      expect.objectContaining({ code: 'EAC_OPTION_INVALID', message: expect.stringContaining('RotatingKeys.start') }),
    );
  });
});
