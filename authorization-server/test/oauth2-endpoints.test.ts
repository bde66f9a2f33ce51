import express, { type Express } from 'express';
import { bearerAuth, MemoryRevokedFamilies } from 'express-api-conventions/oauth2';
import request from 'supertest';
import { ConfigurationError } from '../../src/config/index.js';
import { errorHandler, notFound } from '../../src/errors/index.js';
import { expectHeaders } from '../../test/helpers.js';
import {
  ALICE,
  AUDIENCE,
  basic,
  decodeJwt,
  ISSUER,
  KEYS,
  postToken,
  SCOPES,
  seedStores,
  type TestTokenOptions,
  TOKEN_OPTIONS,
  tokenApp,
} from '../../test/support/oauth2.js';
import { useFakeDate } from '../../test/support/timing.js';
import { MemoryRefreshTokenStore, tokenRouter } from '../src/index.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const REVOCATIONS = '/v1/oauth2/revocations';
const INTROSPECTIONS = '/v1/oauth2/introspections';
const DEMO = basic('demo-client', 'demo-secret');

/** The token router, a route that needs a bearer token, and revokedFamilies shared by both. */
async function appWithBearer(options: TestTokenOptions = {}): Promise<{ app: Express; revoked: MemoryRevokedFamilies }> {
  const revoked = new MemoryRevokedFamilies();
  const app = express();
  app.use(tokenRouter({ ...TOKEN_OPTIONS, scopes: SCOPES, ...(await seedStores()), revokedFamilies: revoked, ...options }));
  app.get('/v1/me', bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, revokedFamilies: revoked }), (req, res) => {
    res.json({ subject: req.auth?.subject });
  });
  app.use(notFound(), errorHandler({ production: true, log: false }));
  return { app, revoked };
}

const post = (app: Express, path: string, form: Record<string, string>, authorization?: string) => {
  const req = request(app).post(path).type('form');
  if (authorization !== undefined) req.set('Authorization', authorization);
  return req.send(form);
};

const me = (app: Express, token: string) => request(app).get('/v1/me').set('Authorization', `Bearer ${token}`);

async function signIn(app: Express, authorization: string | null = DEMO, form: Record<string, string> = ALICE) {
  const res = await postToken(app, form, authorization === null ? {} : { Authorization: authorization });
  expect(res.status).toBe(200);
  return res.body as { access_token: string; refresh_token: string };
}

describe('authorization server metadata (RFC 8414)', () => {
  it('answers GET /.well-known/oauth-authorization-server with what is enabled, in JSON', async () => {
    const app = await tokenApp();
    const res = await request(app).get('/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expectHeaders(res, { 'Content-Type': JSON_TYPE });
    expect(res.body).toEqual({
      issuer: ISSUER,
      token_endpoint: `${ISSUER}/v1/oauth2/token`,
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      grant_types_supported: ['password', 'refresh_token', 'client_credentials'],
      response_types_supported: [],
      scopes_supported: SCOPES,
      revocation_endpoint: `${ISSUER}${REVOCATIONS}`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint: `${ISSUER}${INTROSPECTIONS}`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    });
  });

  it('names the same issuer the access tokens carry as `iss`', async () => {
    const app = await tokenApp();
    const metadata = (await request(app).get('/.well-known/oauth-authorization-server')).body;
    const { payload } = decodeJwt((await postToken(app, ALICE)).body.access_token);
    expect(payload.iss).toBe(metadata.issuer);
  });

  it('is served at the well-known suffix followed by the issuer path (RFC 8414 §3.1)', async () => {
    const app = await tokenApp({ issuer: 'https://as.example.test/tenant-one' });
    expect((await request(app).get('/.well-known/oauth-authorization-server')).status).toBe(404);
    const res = await request(app).get('/.well-known/oauth-authorization-server/tenant-one');
    expect(res.status).toBe(200);
    expect(res.body.issuer).toBe('https://as.example.test/tenant-one');
    expect(res.body.token_endpoint).toBe('https://as.example.test/v1/oauth2/token');
  });

  it('lists no password grant when it is off, and no revocation or introspection when they are off', async () => {
    const app = await tokenApp({ passwordGrant: false, revocationPath: false, introspectionPath: false, scopes: [] });
    const res = await request(app).get('/.well-known/oauth-authorization-server');
    expect(res.body).toEqual({
      issuer: ISSUER,
      token_endpoint: `${ISSUER}/v1/oauth2/token`,
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      grant_types_supported: ['refresh_token', 'client_credentials'],
      response_types_supported: [],
    });
  });

  it('offers only `none` and no introspection when no client store is given', async () => {
    const app = express();
    const { users } = await seedStores();
    app.use(tokenRouter({ ...TOKEN_OPTIONS, users }));
    const res = await request(app).get('/.well-known/oauth-authorization-server');
    expect(res.body.token_endpoint_auth_methods_supported).toEqual(['none']);
    expect(res.body.revocation_endpoint_auth_methods_supported).toEqual(['none']);
    expect(res.body.introspection_endpoint).toBeUndefined();
  });

  it('is not served when the issuer is not an https URL, unless asked for (then it is a configuration error)', async () => {
    const app = await tokenApp({ issuer: 'urn:example:issuer' });
    expect((await request(app).get('/.well-known/oauth-authorization-server')).status).toBe(404);
    const { users } = await seedStores();
    for (const issuer of [
      'urn:example:issuer',
      'http://api.example.test',
      'https://a.example.test/?q=1',
      'https://a.example.test/#f',
    ]) {
      expect(() => tokenRouter({ ...TOKEN_OPTIONS, users, issuer, metadata: true })).toThrow(ConfigurationError);
    }
    // Plain http only on a loopback host: a service on a developer's machine.
    expect(() => tokenRouter({ ...TOKEN_OPTIONS, users, issuer: 'http://127.0.0.1:3000', metadata: true })).not.toThrow();
  });
});

describe('revocation endpoint (RFC 7009)', () => {
  describe('a refresh token', () => {
    it('answers 200 with no-store, and the token and its whole family stop refreshing', async () => {
      const { app } = await appWithBearer();
      const first = await signIn(app);
      const rotated = (
        await postToken(app, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, { Authorization: DEMO })
      ).body as { refresh_token: string };
      const res = await post(app, REVOCATIONS, { token: rotated.refresh_token, token_type_hint: 'refresh_token' }, DEMO);
      expect(res.status).toBe(200);
      expectHeaders(res, { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store, max-age=0', Pragma: null });
      expect(res.body).toEqual({});
      const refresh = await postToken(
        app,
        { grant_type: 'refresh_token', refresh_token: rotated.refresh_token },
        { Authorization: DEMO },
      );
      expect(refresh.status).toBe(400);
      expect(refresh.body.error).toBe('invalid_grant');
    });

    it("stops the family's access tokens at once when revokedFamilies is shared with bearerAuth()", async () => {
      const { app } = await appWithBearer();
      const tokens = await signIn(app);
      expect((await me(app, tokens.access_token)).status).toBe(200);
      expect((await post(app, REVOCATIONS, { token: tokens.refresh_token }, DEMO)).status).toBe(200);
      const res = await me(app, tokens.access_token);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid_token', error_description: 'The access token was revoked.' });
    });

    it('leaves the other sign-ins of the same user alone', async () => {
      const { app } = await appWithBearer();
      const [one, two] = [await signIn(app), await signIn(app)];
      await post(app, REVOCATIONS, { token: one.refresh_token }, DEMO);
      expect((await me(app, two.access_token)).status).toBe(200);
      expect(
        (await postToken(app, { grant_type: 'refresh_token', refresh_token: two.refresh_token }, { Authorization: DEMO })).status,
      ).toBe(200);
    });
  });

  describe('an access token', () => {
    it('answers 200 and stops it and its family (refresh token included)', async () => {
      const { app } = await appWithBearer();
      const tokens = await signIn(app);
      const res = await post(app, REVOCATIONS, { token: tokens.access_token, token_type_hint: 'access_token' }, DEMO);
      expect(res.status).toBe(200);
      expect((await me(app, tokens.access_token)).status).toBe(401);
      expect(
        (await postToken(app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, { Authorization: DEMO }))
          .status,
      ).toBe(400);
    });

    it('is unsupported_token_type when no revokedFamilies store could make it stop (RFC 7009 §2.2.1)', async () => {
      const app = await tokenApp();
      const tokens = await signIn(app);
      const res = await post(app, REVOCATIONS, { token: tokens.access_token }, DEMO);
      expect(res.status).toBe(400);
      expectHeaders(res, { 'Cache-Control': 'no-store, max-age=0', Pragma: 'no-cache' });
      expect(res.body).toEqual({
        error: 'unsupported_token_type',
        error_description: 'This server does not revoke access tokens; revoke the refresh token.',
      });
    });
  });

  describe('tokens that are unknown, expired, revoked or malformed', () => {
    it.each([
      ['an unknown opaque token', 'x'.repeat(43)],
      ['a token that is not a JWT of this issuer', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'],
      ['garbage', '%%%'],
    ])('answers 200 for %s (§2.2)', async (_name, token) => {
      const { app } = await appWithBearer();
      const res = await post(app, REVOCATIONS, { token }, DEMO);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({});
    });

    it('answers 200 for a token revoked already', async () => {
      const { app } = await appWithBearer();
      const tokens = await signIn(app);
      expect((await post(app, REVOCATIONS, { token: tokens.refresh_token }, DEMO)).status).toBe(200);
      expect((await post(app, REVOCATIONS, { token: tokens.refresh_token }, DEMO)).status).toBe(200);
    });
  });

  describe('client authentication, as at the token endpoint', () => {
    it('refuses a wrong secret with 401 invalid_client and the Basic challenge', async () => {
      const { app } = await appWithBearer();
      const tokens = await signIn(app);
      const res = await post(app, REVOCATIONS, { token: tokens.refresh_token }, basic('demo-client', 'wrong'));
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.headers['www-authenticate']).toBe('Basic realm="api", charset="UTF-8"');
      // Nothing was revoked.
      expect((await me(app, tokens.access_token)).status).toBe(200);
    });

    it('accepts client_id and client_secret in the body', async () => {
      const { app } = await appWithBearer();
      const tokens = await signIn(app);
      const res = await post(app, REVOCATIONS, {
        token: tokens.refresh_token,
        client_id: 'demo-client',
        client_secret: 'demo-secret',
      });
      expect(res.status).toBe(200);
      expect((await me(app, tokens.access_token)).status).toBe(401);
    });

    it("refuses to revoke another client's token (§2.1) and leaves it working", async () => {
      const { app } = await appWithBearer();
      const tokens = await signIn(app);
      for (const authorization of [basic('read-app', 'read-secret'), undefined]) {
        const res = await post(app, REVOCATIONS, { token: tokens.refresh_token }, authorization);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'unauthorized_client', error_description: 'The token was issued to another client.' });
      }
      expect((await me(app, tokens.access_token)).status).toBe(200);
    });

    it('lets a token issued without a client be revoked without one (client authentication is optional)', async () => {
      const { app } = await appWithBearer();
      const tokens = await signIn(app, null);
      expect((await post(app, REVOCATIONS, { token: tokens.refresh_token })).status).toBe(200);
      expect((await me(app, tokens.access_token)).status).toBe(401);
    });
  });

  it('is invalid_request without token, or with a body that is not a form', async () => {
    const { app } = await appWithBearer();
    const missing = await post(app, REVOCATIONS, {}, DEMO);
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 'invalid_request', error_description: 'The token parameter is missing.' });
    const json = await request(app).post(REVOCATIONS).set('Authorization', DEMO).send({ token: 'x' });
    expect(json.status).toBe(400);
    expect(json.body.error).toBe('invalid_request');
  });
});

describe('introspection endpoint (RFC 7662)', () => {
  /** read-app is a resource server (any access token); demo-client may introspect its own tokens only. */
  const INTROSPECTORS = { 'read-app': 'resource-server', 'demo-client': 'own-tokens' } as const;
  const READ_APP = basic('read-app', 'read-secret');
  const introspectionApp = (options: TestTokenOptions = {}) => appWithBearer({ introspectors: INTROSPECTORS, ...options });

  it('describes an active access token of any client to a resource server', async () => {
    const { app } = await introspectionApp();
    const tokens = await signIn(app);
    const { payload } = decodeJwt(tokens.access_token);
    const res = await post(app, INTROSPECTIONS, { token: tokens.access_token }, READ_APP);
    expect(res.status).toBe(200);
    expectHeaders(res, { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store, max-age=0', Pragma: null });
    expect(res.body).toEqual({
      active: true,
      scope: 'users:read users:write exports',
      client_id: 'demo-client',
      token_type: 'bearer',
      exp: payload.exp,
      iat: payload.iat,
      sub: 'u-1',
      aud: AUDIENCE,
      iss: ISSUER,
      jti: payload.jti,
    });
  });

  it('describes the current refresh token to its own client, and answers active:false for a rotated one', async () => {
    const { app } = await introspectionApp();
    const tokens = await signIn(app);
    const current = await post(app, INTROSPECTIONS, { token: tokens.refresh_token }, DEMO);
    expect(current.body).toEqual({ active: true, scope: 'users:read users:write exports', client_id: 'demo-client', sub: 'u-1' });
    const next = await postToken(
      app,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      { Authorization: DEMO },
    );
    expect((await post(app, INTROSPECTIONS, { token: tokens.refresh_token }, DEMO)).body).toEqual({ active: false });
    expect((await post(app, INTROSPECTIONS, { token: next.body.refresh_token }, DEMO)).body.active).toBe(true);
  });

  it("never calls another client's refresh token active, not even to a resource server (RFC 9700)", async () => {
    const { app } = await introspectionApp();
    const mine = await signIn(app, READ_APP, { ...ALICE, scope: 'users:read' });
    const theirs = await signIn(app);
    expect((await post(app, INTROSPECTIONS, { token: theirs.refresh_token }, READ_APP)).body).toEqual({ active: false });
    const anonymous = await signIn(app, null);
    expect((await post(app, INTROSPECTIONS, { token: anonymous.refresh_token }, READ_APP)).body).toEqual({ active: false });
    expect((await post(app, INTROSPECTIONS, { token: mine.refresh_token }, READ_APP)).body.active).toBe(true);
  });

  it("answers active:false to an own-tokens client for another client's tokens, so it learns nothing of them", async () => {
    const { app } = await introspectionApp();
    const theirs = await signIn(app, READ_APP, { ...ALICE, scope: 'users:read' });
    for (const token of [theirs.access_token, theirs.refresh_token]) {
      const res = await post(app, INTROSPECTIONS, { token }, DEMO);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ active: false });
    }
    const mine = await signIn(app);
    expect((await post(app, INTROSPECTIONS, { token: mine.access_token }, DEMO)).body.active).toBe(true);
  });

  it('refuses an authenticated client that is not an introspector with 400 unauthorized_client', async () => {
    const { app } = await introspectionApp({ introspectors: { 'read-app': 'resource-server' } });
    const tokens = await signIn(app);
    const res = await post(app, INTROSPECTIONS, { token: tokens.access_token }, DEMO);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'unauthorized_client', error_description: 'This client may not introspect tokens.' });
    expect(res.headers['www-authenticate']).toBeUndefined();
    // By default nobody may introspect.
    const closed = await appWithBearer();
    const tokensToo = await signIn(closed.app);
    expect((await post(closed.app, INTROSPECTIONS, { token: tokensToo.access_token }, READ_APP)).body.error).toBe(
      'unauthorized_client',
    );
  });

  it('answers active:false for the tokens of a user isSubjectActive denies (a deleted user)', async () => {
    const deleted = new Set<string>();
    const { app } = await introspectionApp({ isSubjectActive: (subject) => !deleted.has(subject) });
    const tokens = await signIn(app);
    expect((await post(app, INTROSPECTIONS, { token: tokens.access_token }, DEMO)).body.active).toBe(true);
    deleted.add('u-1');
    for (const token of [tokens.access_token, tokens.refresh_token]) {
      expect((await post(app, INTROSPECTIONS, { token }, DEMO)).body).toEqual({ active: false });
    }
  });

  it('answers exactly { active: false } for revoked, unknown and malformed tokens', async () => {
    const { app } = await introspectionApp();
    const tokens = await signIn(app);
    await post(app, REVOCATIONS, { token: tokens.refresh_token }, DEMO);
    for (const token of [tokens.access_token, tokens.refresh_token, 'y'.repeat(43), 'a.b.c', `${tokens.access_token}x`]) {
      const res = await post(app, INTROSPECTIONS, { token }, DEMO);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ active: false });
    }
  });

  it('answers active:false for an expired access token (no clock tolerance)', async () => {
    useFakeDate();
    try {
      const { app } = await introspectionApp({ accessTokenTtlSeconds: 1 });
      const tokens = await signIn(app);
      // `exp` is a whole second: active to its last millisecond before, expired at it.
      const exp = (Math.floor(Date.now() / 1000) + 1) * 1000;
      jest.setSystemTime(exp - 1);
      expect((await post(app, INTROSPECTIONS, { token: tokens.access_token }, DEMO)).body.active).toBe(true);
      jest.setSystemTime(exp);
      expect((await post(app, INTROSPECTIONS, { token: tokens.access_token }, DEMO)).body).toEqual({ active: false });
    } finally {
      jest.useRealTimers();
    }
  });

  it('refuses callers without a client secret with invalid_client: 401 and a challenge for the header or nothing', async () => {
    const { app } = await introspectionApp({ introspectors: { ...INTROSPECTORS, 'public-app': 'own-tokens' } });
    const tokens = await signIn(app);
    for (const authorization of [undefined, basic('demo-client', 'wrong'), basic('public-app', '')]) {
      const res = await post(app, INTROSPECTIONS, { token: tokens.access_token }, authorization);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.body.active).toBeUndefined();
      expect(res.headers['www-authenticate']).toBe('Basic realm="api", charset="UTF-8"');
    }
  });

  it("answers body credentials as the token endpoint does: 400 invalid_client, no challenge, a public client's too", async () => {
    const { app } = await introspectionApp({ introspectors: { ...INTROSPECTORS, 'public-app': 'own-tokens' } });
    const tokens = await signIn(app);
    const forms: Record<string, string>[] = [
      { client_id: 'public-app' },
      { client_id: 'public-app', client_secret: 'x' },
      { client_id: 'demo-client', client_secret: 'wrong' },
    ];
    for (const form of forms) {
      const res = await post(app, INTROSPECTIONS, { token: tokens.access_token, ...form });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_client');
      expect(res.headers['www-authenticate']).toBeUndefined();
    }
    const atTokenEndpoint = await postToken(app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: 'public-app',
      client_secret: 'x',
    });
    expect(atTokenEndpoint.status).toBe(400);
    expect(atTokenEndpoint.body.error).toBe('invalid_client');
    expect(atTokenEndpoint.headers['www-authenticate']).toBeUndefined();
  });

  it('refuses wrong introspectors at construction, with a clear ConfigurationError', async () => {
    const { users, clients } = await seedStores();
    for (const introspectors of [['demo-client'], { 'demo-client': 'all' }, { '': 'own-tokens' }, 'demo-client', null]) {
      expect(() => tokenRouter({ ...TOKEN_OPTIONS, users, clients, introspectors: introspectors as never })).toThrow(
        /`introspectors` must be/,
      );
    }
    expect(() => tokenRouter({ ...TOKEN_OPTIONS, users, introspectors: { 'demo-client': 'own-tokens' } })).toThrow(/`clients`/);
    expect(() =>
      tokenRouter({ ...TOKEN_OPTIONS, users, clients, introspectionPath: false, introspectors: { 'demo-client': 'own-tokens' } }),
    ).toThrow(ConfigurationError);
  });
});

describe('OAuth parameters (RFC 6749 §3.1, §3.2, §5.2) at the token, revocation and introspection endpoints', () => {
  /** RFC 6749 §5.2: error_description is %x20-21 / %x23-5B / %x5D-7E. */
  const DESCRIPTION_CHARACTERS = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;
  const UNRECOGNISED = ['x-extra', 'ext\u0001\u00e9\u2028"\\name', 'grant-type'];
  const unrecognised = (repeat: number) =>
    UNRECOGNISED.flatMap((name) => Array.from({ length: repeat }, (_, i) => `${encodeURIComponent(name)}=v${i}%00%C3%A9`)).join(
      '&',
    );
  const send = (app: Express, path: string, form: string) =>
    request(app).post(path).type('form').set('Authorization', DEMO).send(form);

  it.each([1, 2, 3])('ignores unrecognised parameters sent %i times at each endpoint', async (repeat) => {
    const { app } = await appWithBearer({ introspectors: { 'demo-client': 'own-tokens' } });
    const token = await send(
      app,
      '/v1/oauth2/token',
      `grant_type=password&username=alice&password=${encodeURIComponent(ALICE.password)}&${unrecognised(repeat)}`,
    );
    expect(token.body).toEqual(expect.objectContaining({ token_type: expect.any(String) }));
    const refresh = token.body.refresh_token as string;
    const introspected = await send(app, INTROSPECTIONS, `token=${refresh}&${unrecognised(repeat)}`);
    expect(introspected.body).toEqual(expect.objectContaining({ active: true }));
    expect(introspected.body.active).toBe(true);
    const revoked = await send(app, REVOCATIONS, `token=${refresh}&${unrecognised(repeat)}`);
    expect(revoked.status).toBe(200);
    expect((await send(app, INTROSPECTIONS, `token=${refresh}`)).body.active).toBe(false);
  });

  it.each([
    ['/v1/oauth2/token', 'grant_type=password&username=alice&username=bob&password=x'],
    [REVOCATIONS, 'token=a&token=b'],
    [INTROSPECTIONS, 'token=a&token=b&token_type_hint=x'],
  ])('refuses a defined parameter sent twice at %s with 400 invalid_request', async (path, form) => {
    const { app } = await appWithBearer({ introspectors: { 'demo-client': 'own-tokens' } });
    const res = await send(app, path, `${form}&${unrecognised(2)}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('keeps every error_description inside RFC 6749 §5.2 and never echoes a parameter name or value', async () => {
    const { app } = await appWithBearer({ introspectors: { 'demo-client': 'own-tokens' } });
    const hostile = 'n\u0001\u00e9"\\';
    const forms = [
      ['/v1/oauth2/token', `grant_type=password&username=alice&username=${encodeURIComponent(hostile)}&password=x`],
      ['/v1/oauth2/token', `grant_type=${encodeURIComponent(hostile)}`],
      ['/v1/oauth2/token', `grant_type=password&username=alice&password=x&scope=${encodeURIComponent(hostile)}`],
      ['/v1/oauth2/token', `grant_type=refresh_token&refresh_token=${encodeURIComponent(hostile)}`],
      [REVOCATIONS, `token=${encodeURIComponent(hostile)}&token=b`],
      [INTROSPECTIONS, `token=a&token=${encodeURIComponent(hostile)}`],
    ] as const;
    for (const [path, form] of forms) {
      const res = await send(app, path, form);
      expect(res.status).toBeGreaterThanOrEqual(400);
      const description = res.body.error_description as string;
      expect(description).toMatch(DESCRIPTION_CHARACTERS);
      expect(description).not.toContain('alice');
      expect(description).not.toContain('username');
      expect(description).not.toContain('token=');
    }
  });
});

describe('the password grant, as RFC 9700 would have it', () => {
  it('passwordGrant: false answers unsupported_grant_type, while refresh tokens issued before keep working', async () => {
    const stores = await seedStores();
    // One refresh-token store for the service before and after the switch.
    const refreshTokens = new MemoryRefreshTokenStore();
    const build = (passwordGrant: boolean) => {
      const app = express();
      app.use(tokenRouter({ ...TOKEN_OPTIONS, ...stores, scopes: SCOPES, refreshTokens, passwordGrant }));
      app.use(notFound(), errorHandler({ production: true, log: false }));
      return app;
    };
    const tokens = await signIn(build(true));
    const off = build(false);
    const refused = await postToken(off, ALICE, { Authorization: DEMO });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: 'unsupported_grant_type', error_description: 'The password grant is turned off.' });
    const refreshed = await postToken(
      off,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      { Authorization: DEMO },
    );
    expect(refreshed.status).toBe(200);
    refreshTokens.close();
  });

  it('passwordGrant: [client ids] answers only those clients; others and anonymous callers get unauthorized_client', async () => {
    const app = await tokenApp({ passwordGrant: ['demo-client'] });
    expect((await postToken(app, ALICE, { Authorization: DEMO })).status).toBe(200);
    for (const headers of [{ Authorization: basic('read-app', 'read-secret') }, {}] as Record<string, string>[]) {
      const res = await postToken(app, ALICE, headers);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'unauthorized_client',
        error_description: 'This client may not use the password grant.',
      });
    }
  });

  it('refuses a wrong passwordGrant at construction', async () => {
    const { users } = await seedStores();
    for (const passwordGrant of [[], 'yes', [''], [1]]) {
      expect(() => tokenRouter({ ...TOKEN_OPTIONS, users, passwordGrant: passwordGrant as never })).toThrow(ConfigurationError);
    }
  });
});

describe('endpoint paths, checked at construction', () => {
  it('refuses a path that does not start with / and two endpoints on one path', async () => {
    const { users } = await seedStores();
    expect(() => tokenRouter({ ...TOKEN_OPTIONS, users, revocationPath: 'revocations' })).toThrow(ConfigurationError);
    expect(() => tokenRouter({ ...TOKEN_OPTIONS, users, introspectionPath: '/v1/oauth2/token' })).toThrow(ConfigurationError);
  });
});

describe('in the conventions() preset', () => {
  it('answers an Authorization: Bearer header at the token endpoint with RFC 6749 §5.2 invalid_client, not RFC 6750 invalid_token', async () => {
    const { conventions } = await import('../../src/preset.js');
    const app = express();
    app.use(
      conventions({
        bearerAuth: { keys: KEYS, issuer: ISSUER, audience: AUDIENCE },
        tokenRouter: tokenRouter({ ...TOKEN_OPTIONS, ...(await seedStores()) }),
      }),
    );
    app.use(notFound(), errorHandler({ production: true, log: false }));
    const valid = (await postToken(app, ALICE, { Authorization: DEMO })).body.access_token as string;
    for (const token of ['not-a-token', valid]) {
      for (const path of ['/v1/oauth2/token', REVOCATIONS, INTROSPECTIONS]) {
        const res = await post(app, path, { ...ALICE, token: 'x' }, `Bearer ${token}`);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
        expect(res.headers['www-authenticate']).toBe('Basic realm="api", charset="UTF-8"');
      }
    }
  });

  it("answers the rate limiter's 429 on the revocation and introspection paths in RFC 6749's shape", async () => {
    const { conventions } = await import('../../src/preset.js');
    const app = express();
    app.use(
      conventions({
        rateLimit: { limit: 1, windowSeconds: 60 },
        tokenRouter: tokenRouter({ ...TOKEN_OPTIONS, ...(await seedStores()), revocationPath: '/v1/oauth2/token-revocations' }),
      }),
    );
    app.use(notFound(), errorHandler({ production: true, log: false }));
    for (const path of ['/v1/oauth2/token-revocations', INTROSPECTIONS]) {
      await post(app, path, { token: 'x' }, DEMO);
      const res = await post(app, path, { token: 'x' }, DEMO);
      expect(res.status).toBe(429);
      expectHeaders(res, { 'Cache-Control': 'no-store, max-age=0', Pragma: 'no-cache' });
      expect(res.body).toEqual({ error: 'too_many_requests', error_description: expect.any(String) });
    }
  });
});
