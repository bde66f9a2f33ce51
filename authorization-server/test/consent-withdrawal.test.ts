import { MemoryRevokedFamilies } from 'express-api-conventions/oauth2';
import { createClient } from 'redis';
import request from 'supertest';
import { ConfigurationError } from '../../src/config/index.js';
import { basic, decodeJwt, seedStores, TOKEN_OPTIONS } from '../../test/support/oauth2.js';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../../test/support/services.js';
import {
  type ConsentStore,
  MemoryConsentStore,
  MemoryRefreshTokenStore,
  MemorySessionStore,
  RedisConsentStore,
  RedisRefreshTokenStore,
  type RefreshTokenStore,
  sessionFromCookie,
  tokenRouter,
} from '../src/index.js';
import {
  approveConsent,
  authorize,
  authorizeQuery,
  type CodeServer,
  codeClients,
  codeServer,
  PARTNER,
  pkce,
  SPA,
} from './support/code-flow.js';

/**
 * Withdrawing a consent cuts the client off (RFC 6749 §10.2): the refresh
 * token families it holds for that user are revoked, and with
 * `revokedFamilies` their access tokens stop at once; a code issued before
 * the withdrawal and exchanged after it is refused.
 */

const TOKEN = '/v1/oauth2/token';
const PARTNER_AUTH = { Authorization: basic(PARTNER.id, PARTNER.secret) };

interface Tokens {
  readonly access_token: string;
  readonly refresh_token: string;
}

/** A code of the partner for the signed-in user, through the consent page the first time. */
async function partnerCode(server: CodeServer, cookie: string) {
  const { verifier, challenge } = pkce();
  const query = authorizeQuery(PARTNER.id, PARTNER.redirect, challenge, { scope: 'users:read' });
  let { location } = await authorize(server, query, cookie);
  if (location?.pathname === '/consent') location = await approveConsent(server, query, cookie);
  const code = location?.searchParams.get('code');
  if (typeof code !== 'string') throw new Error(`no code: ${location}`);
  return { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: PARTNER.redirect };
}

const exchangePartner = (server: CodeServer, form: Record<string, string>) =>
  request(server.app).post(TOKEN).type('form').set(PARTNER_AUTH).send(form);

async function partnerTokens(server: CodeServer, cookie: string): Promise<Tokens> {
  const res = await exchangePartner(server, await partnerCode(server, cookie));
  expect(res.status).toBe(200);
  return res.body;
}

async function spaTokens(server: CodeServer, cookie: string): Promise<Tokens> {
  const { verifier, challenge } = pkce();
  const { location } = await authorize(server, authorizeQuery(SPA.id, SPA.redirect, challenge), cookie);
  const form = { code: location?.searchParams.get('code') as string, code_verifier: verifier, redirect_uri: SPA.redirect };
  const res = await request(server.app)
    .post(TOKEN)
    .type('form')
    .send({ grant_type: 'authorization_code', client_id: SPA.id, ...form });
  expect(res.status).toBe(200);
  return res.body;
}

const refresh = (server: CodeServer, tokens: Tokens, clientId: string = PARTNER.id) => {
  const req = request(server.app).post(TOKEN).type('form');
  const form = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token };
  return clientId === PARTNER.id ? req.set(PARTNER_AUTH).send(form) : req.send({ ...form, client_id: clientId });
};

const familyOf = (tokens: Tokens): string => decodeJwt(tokens.access_token).payload.sid as string;

const helpersOf = (server: CodeServer) => {
  if (server.router.authorization === undefined) throw new Error('no authorization helpers');
  return server.router.authorization;
};

type Stores = () => Promise<{ consents: ConsentStore; refreshTokens: RefreshTokenStore }>;

function withdrawalScenarios(stores: Stores): void {
  it('revokes every family the client holds for the user, and records them so their access tokens stop at once', async () => {
    const server = await codeServer(await stores());
    const cookie = await server.signIn('u-1');
    const first = await partnerTokens(server, cookie);
    const second = await partnerTokens(server, cookie);
    const answer = await helpersOf(server).withdrawConsent('u-1', PARTNER.id);
    expect(answer).toEqual({ withdrawn: true, revokedFamilies: 2 });
    for (const tokens of [first, second]) {
      const res = await refresh(server, tokens);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
      expect(server.revokedFamilies.isRevoked(familyOf(tokens))).toBe(true);
    }
    expect(await server.router.authorization?.withdrawConsent('u-1', PARTNER.id)).toEqual({
      withdrawn: false,
      revokedFamilies: 0,
    });
  });

  it('leaves the user’s other clients and the client’s other users alone', async () => {
    const server = await codeServer(await stores());
    const alice = await server.signIn('u-1');
    const bob = await server.signIn('u-2');
    const spa = await spaTokens(server, alice);
    const bobsPartner = await partnerTokens(server, bob);
    await partnerTokens(server, alice);
    await helpersOf(server).withdrawConsent('u-1', PARTNER.id);
    expect((await refresh(server, spa, SPA.id)).status).toBe(200);
    expect((await refresh(server, bobsPartner)).status).toBe(200);
    expect(server.revokedFamilies.isRevoked(familyOf(spa))).toBe(false);
  });

  it('finds a family however often it rotated', async () => {
    const server = await codeServer(await stores());
    let tokens = await partnerTokens(server, await server.signIn('u-1'));
    for (let i = 0; i < 3; i++) {
      const res = await refresh(server, tokens);
      expect(res.status).toBe(200);
      tokens = res.body;
    }
    expect((await helpersOf(server).withdrawConsent('u-1', PARTNER.id)).revokedFamilies).toBe(1);
    expect((await refresh(server, tokens)).status).toBe(400);
  });

  it('refuses a code issued before the withdrawal and exchanged after it: 400 invalid_grant, no family left', async () => {
    const server = await codeServer(await stores());
    const cookie = await server.signIn('u-1');
    await partnerTokens(server, cookie);
    const form = await partnerCode(server, cookie);
    await helpersOf(server).withdrawConsent('u-1', PARTNER.id);
    const res = await exchangePartner(server, form);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    expect(await server.refreshTokens.revokeClientFamilies?.('u-1', PARTNER.id)).toEqual([]);
  });

  it('lets no refresh racing the withdrawal outlive it', async () => {
    const server = await codeServer(await stores());
    const cookie = await server.signIn('u-1');
    const all = await Promise.all([partnerTokens(server, cookie), partnerTokens(server, cookie)]);
    const [first, second] = await Promise.all([
      refresh(server, all[0] as Tokens),
      refresh(server, all[1] as Tokens),
      helpersOf(server).withdrawConsent('u-1', PARTNER.id),
    ]);
    for (const res of [first, second]) {
      if (res.status !== 200) continue;
      // A refresh that won the race: its new tokens are dead, its access token refused by bearerAuth().
      expect((await refresh(server, res.body)).status).toBe(400);
      expect(server.revokedFamilies.isRevoked(familyOf(res.body))).toBe(true);
    }
  });

  it('lets no code exchange racing the withdrawal outlive it', async () => {
    const server = await codeServer(await stores());
    const cookie = await server.signIn('u-1');
    const forms = [await partnerCode(server, cookie), await partnerCode(server, cookie)];
    const answers = await Promise.all([
      ...forms.map((form) => exchangePartner(server, form)),
      helpersOf(server).withdrawConsent('u-1', PARTNER.id),
    ]);
    for (const res of answers.slice(0, 2) as request.Response[]) {
      if (res.status !== 200) continue;
      expect((await refresh(server, res.body)).status).toBe(400);
    }
  });
}

describe('withdrawing a consent (memory stores)', () => {
  withdrawalScenarios(async () => ({ consents: new MemoryConsentStore(), refreshTokens: new MemoryRefreshTokenStore() }));

  it('keeps no index entry for a family that ended', async () => {
    const store = new MemoryRefreshTokenStore();
    const family = { familyId: 'f-1', subject: 'u-1', clientId: PARTNER.id, scopes: [] };
    await store.create(family, 'hash-1', Date.now() + 60_000);
    await store.create({ ...family, familyId: 'f-2' }, 'hash-2', Date.now() + 60_000);
    await store.revokeFamily('f-1');
    expect(await store.revokeClientFamilies('u-1', PARTNER.id)).toEqual(['f-2']);
    expect(await store.revokeClientFamilies('u-1', PARTNER.id)).toEqual([]);
    expect(store.families).toBe(0);
    store.close();
  });

  it('refuses at start-up a refresh-token store that cannot revoke a client’s families when `authorization` is on', async () => {
    const { revokeClientFamilies: _, ...partial } = Object.fromEntries(
      ['create', 'find', 'rotate', 'revokeByTokenHash', 'revokeFamily', 'revokeClientFamilies'].map((name) => [
        name,
        async () => undefined,
      ]),
    );
    const make = async () =>
      tokenRouter({
        ...TOKEN_OPTIONS,
        issuer: 'http://127.0.0.1:8080',
        users: (await seedStores()).users,
        clients: await codeClients(),
        refreshTokens: partial as unknown as RefreshTokenStore,
        revokedFamilies: new MemoryRevokedFamilies(),
        authorization: {
          findSession: sessionFromCookie(new MemorySessionStore(), 'sid'),
          signInUrl: '/sign-in',
          consentUrl: '/consent',
        },
      });
    await expect(make()).rejects.toThrow(ConfigurationError);
    await expect(make()).rejects.toThrow(/revokeClientFamilies/);
  });
});

const makeClient = (url: string) => createClient({ url });
type Client = ReturnType<typeof makeClient>;

describeWith(REDIS_SERVER, 'withdrawing a consent (Redis stores)', () => {
  let redis: RedisServer;
  const clients: Client[] = [];
  let prefix = 0;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
    await redis?.stop();
  });
  const connect = async () => {
    const client = makeClient(redis.url);
    await client.connect();
    clients.push(client);
    return client;
  };

  withdrawalScenarios(async () => {
    const client = await connect();
    const keyPrefix = `withdraw${++prefix}:`;
    return {
      consents: new RedisConsentStore({ client, prefix: keyPrefix }),
      refreshTokens: new RedisRefreshTokenStore({ client, prefix: keyPrefix }),
    };
  });

  it('keeps the client index in the user’s hash slot, expiring with its last family, and empties it on withdrawal', async () => {
    const client = await connect();
    const store = new RedisRefreshTokenStore({ client, prefix: 'index:' });
    const expiresAt = Date.now() + 60_000;
    const family = { familyId: 'f-1', subject: 'u-1', clientId: PARTNER.id, scopes: ['users:read'] };
    await store.create(family, 'hash-1', expiresAt);
    await store.create({ ...family, familyId: 'f-2' }, 'hash-2', expiresAt - 1000);
    const [key] = await client.keys('index:client-families:*');
    expect(key).toMatch(/^index:client-families:\{[A-Za-z0-9_-]{22}\}:[A-Za-z0-9_-]{22}$/);
    expect(await client.zRange(key as string, 0, -1)).toEqual(['f-2', 'f-1']);
    expect(await client.pExpireTime(key as string)).toBe(expiresAt);
    // A rotation moves its family's expiry later, in the index too.
    await store.rotate('hash-2', 'hash-3', expiresAt + 5000);
    expect(await client.zScore(key as string, 'f-2')).toBe(expiresAt + 5000);
    expect(await client.pExpireTime(key as string)).toBe(expiresAt + 5000);
    expect((await store.revokeClientFamilies('u-1', PARTNER.id)).sort()).toEqual(['f-1', 'f-2']);
    expect(await client.exists(key as string)).toBe(0);
    expect(await client.keys('index:family:*')).toEqual([]);
    expect(await client.keys('index:rt:*')).toEqual([]);
  });
});
