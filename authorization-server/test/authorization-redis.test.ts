import { createClient } from 'redis';
import request from 'supertest';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../../test/support/services.js';
import { useFakeDate } from '../../test/support/timing.js';
import { RedisCodeStore, RedisConsentStore, RedisRefreshTokenStore } from '../src/index.js';
import { hashAuthorizationCode } from '../src/stores/code-store.js';
import { authorize, authorizeQuery, type CodeServer, codeServer, decide, PARTNER, pkce, SPA } from './support/code-flow.js';

/**
 * The authorization code flow's stores on a real redis-server: two instances
 * (two routers, two connections, one key space) see one code once, and
 * one consent.
 */

const makeClient = (url: string) => createClient({ url });
type Client = ReturnType<typeof makeClient>;

describeWith(REDIS_SERVER, 'authorization codes and consents on a real redis-server', () => {
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

  async function connect(): Promise<Client> {
    const client = makeClient(redis.url);
    await client.connect();
    clients.push(client);
    return client;
  }

  /** Two instances sharing one Redis key space. */
  async function twoInstances(): Promise<[CodeServer, CodeServer]> {
    const keyPrefix = `authz${++prefix}:`;
    const instance = async () => {
      const client = await connect();
      return codeServer({
        codes: new RedisCodeStore({ client, prefix: keyPrefix }),
        consents: new RedisConsentStore({ client, prefix: keyPrefix }),
        refreshTokens: new RedisRefreshTokenStore({ client, prefix: keyPrefix }),
      });
    };
    return [await instance(), await instance()];
  }

  const exchange = (server: CodeServer, form: Record<string, string>) =>
    request(server.app)
      .post('/v1/oauth2/token')
      .type('form')
      .send({ grant_type: 'authorization_code', client_id: SPA.id, redirect_uri: SPA.redirect, ...form });

  it('redeems a code issued on one instance exactly once across both, at once', async () => {
    const [a, b] = await twoInstances();
    // Both instances must know the session: b's session store is its own, so the code is issued on a.
    const { verifier, challenge } = pkce();
    const { location } = await authorize(a, authorizeQuery(SPA.id, SPA.redirect, challenge), await a.signIn());
    const code = location?.searchParams.get('code') as string;
    const answers = await Promise.all([
      exchange(a, { code, code_verifier: verifier }),
      exchange(b, { code, code_verifier: verifier }),
      exchange(b, { code, code_verifier: verifier }),
    ]);
    // One presentation redeems it; the others are replays, which revoke what it issued. When a replay comes
    // before the winner's tokens are stored, the winner is refused too (its family is revoked before it answers).
    const refused = answers.filter((res) => res.status === 400);
    expect(refused.length).toBeGreaterThanOrEqual(2);
    for (const res of refused) expect(res.body.error).toBe('invalid_grant');
    const issued = answers.filter((res) => res.status === 200);
    expect(issued.length).toBeLessThanOrEqual(1);
    for (const res of issued) {
      const refresh = await request(a.app)
        .post('/v1/oauth2/token')
        .type('form')
        .send({ grant_type: 'refresh_token', client_id: SPA.id, refresh_token: res.body.refresh_token });
      expect(refresh.status).toBe(400);
      expect(refresh.body.error).toBe('invalid_grant');
    }
  });

  it('revokes the tokens of a code presented again after the exchange, on the other instance', async () => {
    const [a, b] = await twoInstances();
    const { verifier, challenge } = pkce();
    const { location } = await authorize(a, authorizeQuery(SPA.id, SPA.redirect, challenge), await a.signIn());
    const code = location?.searchParams.get('code') as string;
    const first = await exchange(a, { code, code_verifier: verifier });
    expect(first.status).toBe(200);
    const again = await exchange(b, { code, code_verifier: verifier });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    const refresh = await request(a.app)
      .post('/v1/oauth2/token')
      .type('form')
      .send({ grant_type: 'refresh_token', client_id: SPA.id, refresh_token: first.body.refresh_token });
    expect(refresh.status).toBe(400);
  });

  it('stores the code as its digest, never the code', async () => {
    const [a] = await twoInstances();
    const { challenge } = pkce();
    const { location } = await authorize(a, authorizeQuery(SPA.id, SPA.redirect, challenge), await a.signIn());
    const code = location?.searchParams.get('code') as string;
    const client = await connect();
    const keys = await client.keys(`authz${prefix}:code:*`);
    expect(keys).toEqual([`authz${prefix}:code:{${hashAuthorizationCode(code)}}`]);
    expect(JSON.stringify(await client.hGetAll(keys[0] as string))).not.toContain(code);
  });

  it('refuses a code after its 60 seconds (fake clock)', async () => {
    const [a] = await twoInstances();
    useFakeDate();
    try {
      const { verifier, challenge } = pkce();
      const { location } = await authorize(a, authorizeQuery(SPA.id, SPA.redirect, challenge), await a.signIn());
      jest.setSystemTime(Date.now() + 60_000);
      const res = await exchange(a, { code: location?.searchParams.get('code') as string, code_verifier: verifier });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
    } finally {
      jest.useRealTimers();
    }
  });

  it('remembers a consent given on one instance on the other, and withdraws it there', async () => {
    const [a, b] = await twoInstances();
    const query = authorizeQuery(PARTNER.id, PARTNER.redirect, pkce().challenge, { scope: 'users:read' });
    const res = await decide(a, query, await a.signIn(), 'approve');
    expect(res.status).toBe(303);
    const onB = await authorize(b, query, await b.signIn());
    expect(onB.location?.searchParams.has('code')).toBe(true);
    const consents = new RedisConsentStore({ client: await connect(), prefix: `authz${prefix}:` });
    expect(await consents.list('u-1')).toEqual([{ clientId: PARTNER.id, scopes: ['users:read'], grantedAt: expect.any(String) }]);
    expect(await consents.withdraw('u-1', PARTNER.id)).toBe(true);
    expect((await authorize(b, query, await b.signIn())).location?.pathname).toBe('/consent');
  });

  it('adds scopes to a consent in one step: two approvals at once keep both', async () => {
    const consents = new RedisConsentStore({ client: await connect(), prefix: `authz${++prefix}:` });
    await Promise.all([consents.grant('u-9', 'c', ['a', 'b']), consents.grant('u-9', 'c', ['b', 'c'])]);
    const found = await consents.find('u-9', 'c');
    expect([...(found?.scopes ?? [])].sort()).toEqual(['a', 'b', 'c']);
  });
});
