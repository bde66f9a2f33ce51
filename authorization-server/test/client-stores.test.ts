import { ConfigurationError } from 'express-api-conventions';
import { createClient } from 'redis';
import { hashClientSecret } from '../../src/oauth2/clients.js';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../../test/support/services.js';
import { MemoryClientStore, RedisClientStore } from '../src/index.js';
import { type ClientRegistration, LEGACY_GRANTS, type RegisteredClientStore } from '../src/stores/client-registration.js';

type AddingStore = RegisteredClientStore & { add(client: ClientRegistration): Promise<void> };

const SPA: ClientRegistration = {
  id: 'demo-spa',
  type: 'public',
  firstParty: true,
  name: 'Demo SPA',
  grants: ['authorization_code', 'refresh_token'],
  redirectUris: ['http://localhost:5173/callback', 'http://127.0.0.1/callback'],
  scopes: ['users:read'],
};
const PARTNER: ClientRegistration = {
  id: 'demo-partner',
  type: 'confidential',
  secret: 'partner-secret',
  name: 'Partner & Co',
  grants: ['authorization_code', 'refresh_token'],
  redirectUris: ['https://partner.example/callback', 'com.example.app:/oauth2redirect'],
};

/** The registration rules every client store applies (client-registration.ts), run on each store. */
function registrationRules(name: string, makeStore: () => Promise<AddingStore>): void {
  describe(name, () => {
    let store: AddingStore;
    beforeEach(async () => {
      store = await makeStore();
    });

    it('keeps every field of a registration, the secret as its hash only', async () => {
      await store.add(SPA);
      await store.add(PARTNER);
      expect(await store.findById('demo-spa')).toEqual({ ...SPA, blocked: false });
      const { secret: _secret, ...partner } = PARTNER;
      expect(await store.findById('demo-partner')).toEqual({
        ...partner,
        blocked: false,
        secretHash: hashClientSecret('partner-secret'),
      });
    });

    it('reads a registration without type and grants as before: typed by its secret, the password and refresh grants', async () => {
      await store.add({ id: 'old-confidential', secret: 's' });
      await store.add({ id: 'old-public' });
      expect(await store.findById('old-confidential')).toMatchObject({ type: 'confidential', grants: LEGACY_GRANTS });
      expect(await store.findById('old-public')).toMatchObject({ type: 'public', grants: LEGACY_GRANTS });
    });

    it('keeps an extension grant’s absolute URI (RFC 6749 §4.5)', async () => {
      await store.add({ id: 'x', secret: 's', grants: ['urn:ietf:params:oauth:grant-type:jwt-bearer'] });
      expect((await store.findById('x'))?.grants).toEqual(['urn:ietf:params:oauth:grant-type:jwt-bearer']);
    });

    it('finds nothing for an unknown id', async () => {
      expect(await store.findById('nobody')).toBeUndefined();
    });

    const wrong: [string, ClientRegistration, RegExp][] = [
      [
        'a confidential client without a secret',
        { id: 'c', type: 'confidential' },
        /`secret` must be given for a confidential client/,
      ],
      ['a public client with a secret', { id: 'c', type: 'public', secret: 's' }, /`secret` must be absent for a public client/],
      ['an unknown type', { id: 'c', type: 'trusted' as never }, /`type` must be 'public' or 'confidential'/],
      ['a misspelled grant', { id: 'c', secret: 's', grants: ['pasword'] }, /`grants` must be an array of grant types/],
      [
        'client_credentials for a public client',
        { id: 'c', grants: ['client_credentials'] },
        /without 'client_credentials' for a public client/,
      ],
      [
        'authorization_code without a redirect URI',
        { id: 'c', grants: ['authorization_code'] },
        /`redirectUris` must be at least one URI/,
      ],
      ['a relative redirect URI', { ...SPA, redirectUris: ['/callback'] }, /an absolute URI/],
      ['a redirect URI with a fragment', { ...SPA, redirectUris: ['https://a.example/cb#x'] }, /without fragment/],
      [
        'a redirect URI with user information',
        { ...SPA, redirectUris: ['https://127.0.0.1@evil.example/cb'] },
        /without user information/,
      ],
      [
        'an http redirect URI off the loopback',
        { ...SPA, redirectUris: ['http://127.0.0.1.evil.example/cb'] },
        /http only on a loopback host/,
      ],
      ['a malformed scope', { id: 'c', scopes: ['a b'] }, /`scopes` must be an array of RFC 6749 §3.3 scope tokens/],
      ['an empty id', { id: '' }, /`id` must be a non-empty string/],
    ];
    expect(wrong.length).toBeGreaterThan(0);
    it.each(wrong)('refuses %s with a ConfigurationError, storing nothing', async (_case, registration, message) => {
      const refusal = store.add(registration);
      await expect(refusal).rejects.toThrow(ConfigurationError);
      await expect(refusal).rejects.toMatchObject({ code: 'EAC_OPTION_INVALID', message });
      expect(await store.findById(registration.id)).toBeUndefined();
    });

    it('never names the secret in a refusal', async () => {
      await expect(store.add({ id: 'c', type: 'public', secret: 'do-not-show-me' })).rejects.not.toThrow(/do-not-show-me/);
    });
  });
}

registrationRules('MemoryClientStore', async () => new MemoryClientStore());

describeWith(REDIS_SERVER, 'RedisClientStore on a real redis-server', () => {
  let redis: RedisServer;
  let client: ReturnType<typeof createClient>;
  let run = 0;
  beforeAll(async () => {
    redis = await startRedis();
    client = createClient({ url: redis.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.quit();
    await redis?.stop();
  });

  registrationRules('RedisClientStore', async () => new RedisClientStore({ client, prefix: `cs${++run}:` }));

  it('reads a record written before registrations had a type and grants (no type, no grants field)', async () => {
    const prefix = `cs${++run}:`;
    await client.hSet(`${prefix}client:legacy`, { id: 'legacy', blocked: '0', secretHash: hashClientSecret('s') });
    expect(await new RedisClientStore({ client, prefix }).findById('legacy')).toEqual({
      id: 'legacy',
      blocked: false,
      secretHash: hashClientSecret('s'),
      type: 'confidential',
      grants: LEGACY_GRANTS,
    });
  });
});
