import { sign as cryptoSign, generateKeyPairSync } from 'node:crypto';
import express, { type Express } from 'express';
import { MemoryRefreshTokenStore, revokeRefreshToken, tokenRouter } from 'express-api-conventions-authorization-server';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { errorHandler, notFound } from '../src/errors/index.js';
import {
  type AccessTokenKey,
  type BearerAuthOptions,
  bearerAuth,
  type RevokedFamilies,
  requireScope,
} from '../src/oauth2/index.js';
import { expectHeaders } from './helpers.js';
import {
  ALICE,
  AUDIENCE,
  ISSUER,
  KEYS,
  postToken,
  SECRET,
  seedStores,
  TEST_COST,
  TOKEN_OPTIONS,
  testHasher,
} from './support/oauth2.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** An app that issues tokens and has protected routes, as the reference server wires them. */
async function protectedApp(options: Partial<BearerAuthOptions> = {}, signingKeys: AccessTokenKey[] = KEYS): Promise<Express> {
  const app = express();
  app.use(
    tokenRouter({
      keys: signingKeys,
      issuer: ISSUER,
      audience: AUDIENCE,
      scopes: ['users:read', 'users:write'],
      passwordHasher: testHasher,
      passwordCost: TEST_COST,
      ...(await seedStores()),
    }),
  );
  const auth = bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, ...options });
  app.get('/v1/me', auth, (req, res) => {
    res.json({ auth: req.auth, claims: req.accessToken ?? null });
  });
  app.post('/v1/users', auth, requireScope('users:write'), (_req, res) => {
    res.status(201).json({ created: true });
  });
  app.get('/v1/unguarded-scope', requireScope('users:read'), (_req, res) => {
    res.json({ ok: true });
  });
  app.use(notFound(), errorHandler({ production: true, log: false }));
  return app;
}

async function accessToken(
  app: Express,
  form: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<string> {
  const res = await postToken(app, { ...ALICE, ...form }, headers);
  expect(res.status).toBe(200);
  return res.body.access_token;
}

const sign = (claims: Record<string, unknown>, options: jwt.SignOptions = {}, key: jwt.Secret = SECRET): string =>
  jwt.sign({ iss: ISSUER, aud: AUDIENCE, sub: 'u-1', scope: 'users:read', ...claims }, key, {
    algorithm: 'HS256',
    ...('exp' in claims ? {} : { expiresIn: 60 }),
    header: { alg: options.algorithm ?? 'HS256', typ: 'at+jwt', kid: 'k1' },
    ...options,
  });

/** docs/conventions.md rule 13.7: 401, JSON, no-store, Pragma, `error: invalid_token`; RFC 6750 §3 challenge. */
function expectInvalidToken(res: request.Response, description: string): void {
  expect(res.status).toBe(401);
  expectHeaders(res, {
    'Content-Type': JSON_TYPE,
    'Cache-Control': 'no-store',
    Pragma: 'no-cache',
    'WWW-Authenticate': `Bearer realm="api", error="invalid_token", error_description="${description}"`,
  });
  expect(res.body).toEqual({ error: 'invalid_token', error_description: description });
}

describe('bearerAuth() (rules 13.6 and 13.7; RFC 6750)', () => {
  let app: Express;
  beforeAll(async () => {
    app = await protectedApp();
  });

  describe('with a valid access token', () => {
    it('lets the request through with req.auth and the verified claims', async () => {
      const token = await accessToken(
        app,
        {},
        { Authorization: `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}` },
      );
      const res = await request(app).get('/v1/me').set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        auth: { subject: 'u-1', clientId: 'demo-client', scopes: ['users:read', 'users:write'] },
        claims: {
          iss: ISSUER,
          sub: 'u-1',
          aud: AUDIENCE,
          exp: expect.any(Number),
          iat: expect.any(Number),
          jti: expect.any(String),
          scope: 'users:read users:write',
          client_id: 'demo-client',
          sid: expect.stringMatching(/^[0-9a-f-]{36}$/),
        },
      });
    });

    it('accepts the scheme name in any case', async () => {
      const token = await accessToken(app);
      const res = await request(app).get('/v1/me').set('Authorization', `bearer ${token}`);
      expect(res.status).toBe(200);
      expect(res.body.auth).toEqual({ subject: 'u-1', scopes: ['users:read', 'users:write'] });
    });

    it('reads a token without scope as no scopes', async () => {
      const res = await request(app)
        .get('/v1/me')
        .set('Authorization', `Bearer ${sign({ scope: undefined })}`);
      expect(res.status).toBe(200);
      expect(res.body.auth).toEqual({ subject: 'u-1', scopes: [] });
    });

    it('tolerates a few seconds of clock skew on exp', async () => {
      const now = Math.floor(Date.now() / 1000);
      const res = await request(app)
        .get('/v1/me')
        .set('Authorization', `Bearer ${sign({ exp: now - 2, iat: now - 60 })}`);
      expect(res.status).toBe(200);
    });
  });

  describe('without bearer credentials (RFC 6750 §3.1: no error code)', () => {
    it('answers 401 with the challenge WWW-Authenticate: Bearer realm="api"', async () => {
      const res = await request(app).get('/v1/me');
      expect(res.status).toBe(401);
      expectHeaders(res, { 'Content-Type': JSON_TYPE, 'WWW-Authenticate': 'Bearer realm="api"', Pragma: null });
      expect(res.body).toEqual({ errors: [{ message: 'A bearer access token is required.', code: 40100 }] });
    });

    it('answers another scheme the same way', async () => {
      const res = await request(app).get('/v1/me').set('Authorization', 'Basic YTpi');
      expect(res.status).toBe(401);
      expectHeaders(res, { 'WWW-Authenticate': 'Bearer realm="api"' });
    });

    it('uses the configured realm', async () => {
      const other = await protectedApp({ realm: 'users' });
      const res = await request(other).get('/v1/me');
      expectHeaders(res, { 'WWW-Authenticate': 'Bearer realm="users"' });
    });
  });

  describe('with a token that fails (rule 13.7)', () => {
    it.each([
      ['an empty token', 'Bearer ', 'The Authorization header is not a valid bearer token.'],
      ['a token with characters outside b64token', 'Bearer abc def', 'The Authorization header is not a valid bearer token.'],
      ['garbage', 'Bearer not-a-jwt', 'The access token is malformed.'],
      [
        'a header that is not JSON',
        `Bearer ${Buffer.from('{oops').toString('base64url')}.e30.sig`,
        'The access token is malformed.',
      ],
    ])('refuses %s', async (_case, authorization, description) => {
      const res = await request(app).get('/v1/me').set('Authorization', authorization);
      expectInvalidToken(res, description);
    });

    it('refuses a tampered payload', async () => {
      const token = await accessToken(app, { scope: 'users:read' });
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      const forged = Buffer.from(JSON.stringify({ ...claims, scope: 'users:read users:write' })).toString('base64url');
      const res = await request(app).post('/v1/users').set('Authorization', `Bearer ${header}.${forged}.${signature}`);
      expectInvalidToken(res, 'The access token is not valid.');
    });

    it('refuses an expired token', async () => {
      const now = Math.floor(Date.now() / 1000);
      const res = await request(app)
        .get('/v1/me')
        .set('Authorization', `Bearer ${sign({ exp: now - 30, iat: now - 90 })}`);
      expectInvalidToken(res, 'The access token expired.');
    });

    it('refuses a token it accepted before, once that token has expired', async () => {
      const realNow = Date.now;
      const issuedAt = Math.floor(realNow() / 1000);
      const token = sign({ exp: issuedAt + 60, iat: issuedAt });
      expect((await request(app).get('/v1/me').set('Authorization', `Bearer ${token}`)).status).toBe(200);
      // 60 s of lifetime and the 5 s of clock tolerance later:
      const clock = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 66_000);
      try {
        expectInvalidToken(await request(app).get('/v1/me').set('Authorization', `Bearer ${token}`), 'The access token expired.');
      } finally {
        clock.mockRestore();
      }
    });

    it('hands the route the same frozen claims on every request with one token', async () => {
      const token = sign({});
      const routes: Express = express();
      const auth = bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE });
      const seen: unknown[] = [];
      routes.get('/v1/me', auth, (req, res) => {
        seen.push(req.accessToken);
        res.json({ frozen: Object.isFrozen(req.accessToken) });
      });
      for (let i = 0; i < 2; i++) {
        const res = await request(routes).get('/v1/me').set('Authorization', `Bearer ${token}`);
        expect(res.body).toEqual({ frozen: true });
      }
      expect(seen[0]).toBe(seen[1]);
    });

    it('refuses alg "none" (an unsigned token)', async () => {
      const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid: 'k1' })).toString('base64url');
      const payload = Buffer.from(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, sub: 'u-1', exp: 9999999999 })).toString(
        'base64url',
      );
      const res = await request(app).get('/v1/me').set('Authorization', `Bearer ${header}.${payload}.`);
      expectInvalidToken(res, 'The access token algorithm is not allowed.');
    });

    it('refuses a token of another algorithm under a known kid', async () => {
      const token = sign({}, { algorithm: 'HS512' });
      const res = await request(app).get('/v1/me').set('Authorization', `Bearer ${token}`);
      expectInvalidToken(res, 'The access token algorithm is not allowed.');
    });

    it('refuses a token signed with another secret', async () => {
      const token = sign({}, {}, 'another-secret-that-is-32-bytes-long!!');
      expectInvalidToken(
        await request(app).get('/v1/me').set('Authorization', `Bearer ${token}`),
        'The access token is not valid.',
      );
    });

    it('refuses a token from an unknown key id', async () => {
      const token = sign({}, { header: { alg: 'HS256', typ: 'at+jwt', kid: 'k9' } });
      expectInvalidToken(
        await request(app).get('/v1/me').set('Authorization', `Bearer ${token}`),
        'The access token was not signed by a known key.',
      );
    });

    it('refuses a JWT that is not an access token (typ other than at+jwt)', async () => {
      const token = sign({}, { header: { alg: 'HS256', typ: 'JWT', kid: 'k1' } });
      expectInvalidToken(
        await request(app).get('/v1/me').set('Authorization', `Bearer ${token}`),
        'The token is not an access token.',
      );
    });

    it('accepts both RFC 9068 §4 spellings of the typ: at+jwt and application/at+jwt (any case)', async () => {
      for (const typ of ['at+jwt', 'application/at+jwt', 'Application/AT+JWT']) {
        const token = sign({}, { header: { alg: 'HS256', typ, kid: 'k1' } });
        expect((await request(app).get('/v1/me').set('Authorization', `Bearer ${token}`)).status).toBe(200);
      }
      for (const typ of ['application/jwt', 'text/at+jwt', 'application/at+jwt; x=1']) {
        const token = sign({}, { header: { alg: 'HS256', typ, kid: 'k1' } });
        expect((await request(app).get('/v1/me').set('Authorization', `Bearer ${token}`)).body.error_description).toBe(
          'The token is not an access token.',
        );
      }
    });

    it('refuses a token that lives longer than maxTokenLifetimeSeconds (default 86400, the longest tokenRouter() issues), or has no iat', async () => {
      const now = Math.floor(Date.now() / 1000);
      const long = sign({ iat: now, exp: now + 86_401 });
      expectInvalidToken(
        await request(app).get('/v1/me').set('Authorization', `Bearer ${long}`),
        'The access token lives longer than this service accepts.',
      );
      const years = sign({ iat: now, exp: now + 10 * 365 * 86_400 });
      expect((await request(app).get('/v1/me').set('Authorization', `Bearer ${years}`)).status).toBe(401);
      const day = sign({ iat: now, exp: now + 86_400 });
      expect((await request(app).get('/v1/me').set('Authorization', `Bearer ${day}`)).status).toBe(200);
      const noIat = sign({ exp: now + 60 }, { noTimestamp: true });
      expectInvalidToken(
        await request(app).get('/v1/me').set('Authorization', `Bearer ${noIat}`),
        'The access token lacks required claims.',
      );
      const strict = await protectedApp({ maxTokenLifetimeSeconds: 600 });
      const hour = sign({ iat: now, exp: now + 3600 });
      expect((await request(strict).get('/v1/me').set('Authorization', `Bearer ${hour}`)).status).toBe(401);
      expect(
        (
          await request(strict)
            .get('/v1/me')
            .set('Authorization', `Bearer ${sign({})}`)
        ).status,
      ).toBe(200);
    });

    it.each([
      ['another issuer', { iss: 'https://evil.example' }],
      ['another audience', { aud: 'https://other.example/v1' }],
      ['no subject', { sub: undefined }],
    ])('refuses a token with %s', async (_case, claims) => {
      const token = sign(claims);
      const res = await request(app).get('/v1/me').set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_token');
    });

    it('refuses a refresh token presented as an access token', async () => {
      const res = await postToken(app, ALICE);
      const me = await request(app).get('/v1/me').set('Authorization', `Bearer ${res.body.refresh_token}`);
      expectInvalidToken(me, 'The access token is malformed.');
    });
  });

  describe('with asymmetric keys, and no HS/RS confusion', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const rsaPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();

    it.each([
      ['RS256', rsa],
      ['ES256', ec],
    ] as const)('issues %s tokens that a verifier holding only the public key accepts', async (algorithm, pair) => {
      const signer = [{ kid: 'a1', algorithm, privateKey: pair.privateKey }] as AccessTokenKey[];
      const issuing = await protectedApp({}, signer);
      const token = await accessToken(issuing);
      const verifying = express();
      verifying.get(
        '/v1/me',
        bearerAuth({ keys: [{ kid: 'a1', algorithm, publicKey: pair.publicKey }], issuer: ISSUER, audience: AUDIENCE }),
        (req, res) => {
          res.json({ auth: req.auth });
        },
      );
      verifying.use(errorHandler({ production: true, log: false }));
      const res = await request(verifying).get('/v1/me').set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ auth: { subject: 'u-1', scopes: ['users:read', 'users:write'] } });
    });

    it('refuses an HS256 token "signed" with the RSA public key as a secret', async () => {
      const verifying = express();
      verifying.get(
        '/v1/me',
        bearerAuth({ keys: [{ kid: 'a1', algorithm: 'RS256', publicKey: rsaPem }], issuer: ISSUER, audience: AUDIENCE }),
        (_req, res) => {
          res.json({});
        },
      );
      verifying.use(errorHandler({ production: true, log: false }));
      const forged = sign({}, { header: { alg: 'HS256', typ: 'at+jwt', kid: 'a1' } }, rsaPem);
      const res = await request(verifying).get('/v1/me').set('Authorization', `Bearer ${forged}`);
      expectInvalidToken(res, 'The access token algorithm is not allowed.');
    });
  });

  describe('a token listing a critical header extension (RFC 7515 §4.1.11)', () => {
    const CRITICAL = 'The access token requires a header extension this service does not support.';
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ed = generateKeyPairSync('ed25519');
    const claims = () => {
      const now = Math.floor(Date.now() / 1000);
      return { iss: ISSUER, aud: AUDIENCE, sub: 'u-1', iat: now, exp: now + 60 };
    };
    /** A compact EdDSA JWS (RFC 8037 §3.1): jsonwebtoken has no EdDSA. */
    const signEd = (header: Record<string, unknown>) => {
      const input = [header, claims()].map((part) => Buffer.from(JSON.stringify(part)).toString('base64url')).join('.');
      return `${input}.${cryptoSign(null, Buffer.from(input), ed.privateKey).toString('base64url')}`;
    };
    const tokens = {
      HS256: (header: Record<string, unknown>) =>
        jwt.sign(claims(), SECRET, { header: { alg: 'HS256', ...header } as jwt.JwtHeader }),
      ES256: (header: Record<string, unknown>) =>
        jwt.sign(claims(), ec.privateKey, { header: { alg: 'ES256', ...header } as jwt.JwtHeader }),
      EdDSA: (header: Record<string, unknown>) => signEd({ alg: 'EdDSA', ...header }),
    } as const;
    const keyFor = {
      HS256: { kid: 'c1', algorithm: 'HS256', secret: SECRET },
      ES256: { kid: 'c1', algorithm: 'ES256', publicKey: ec.publicKey },
      EdDSA: { kid: 'c1', algorithm: 'EdDSA', publicKey: ed.publicKey },
    } as const satisfies Record<string, AccessTokenKey>;

    it.each(['HS256', 'ES256', 'EdDSA'] as const)('is refused with a %s key, before its kid is looked up', async (algorithm) => {
      const verifying = express();
      verifying.get('/v1/me', bearerAuth({ keys: [keyFor[algorithm]], issuer: ISSUER, audience: AUDIENCE }), (_req, res) => {
        res.json({});
      });
      verifying.use(errorHandler({ production: true, log: false }));
      const get = (token: string) => request(verifying).get('/v1/me').set('Authorization', `Bearer ${token}`);
      const header = { typ: 'at+jwt', kid: 'c1' };
      // The same token without `crit` passes: the extension alone is what is refused.
      expect((await get(tokens[algorithm](header))).status).toBe(200);
      const critical = { ...header, crit: ['urn:example:ext'], 'urn:example:ext': true };
      expectInvalidToken(await get(tokens[algorithm](critical)), CRITICAL);
      // Under a kid no key has, the answer is still the extension's: the header is read before any key.
      expectInvalidToken(await get(tokens[algorithm]({ ...critical, kid: 'nobody' })), CRITICAL);
      // An empty list is refused too (RFC 7515 §4.1.11: "MUST NOT" be empty).
      expectInvalidToken(await get(tokens[algorithm]({ ...header, crit: [] })), CRITICAL);
    });
  });

  describe('key rotation by kid', () => {
    it('keeps accepting tokens of a retired key that is still listed', async () => {
      const old: AccessTokenKey = { kid: 'k0', algorithm: 'HS256', secret: 'the-previous-secret-also-32-bytes!!' };
      const before = await protectedApp({ keys: [old] }, [old]);
      const oldToken = await accessToken(before);
      const after = await protectedApp({ keys: [...KEYS, old] }, [...KEYS, old]);
      const newToken = await accessToken(after);
      expect(JSON.parse(Buffer.from(newToken.split('.')[0] as string, 'base64url').toString()).kid).toBe('k1');
      for (const token of [oldToken, newToken]) {
        expect((await request(after).get('/v1/me').set('Authorization', `Bearer ${token}`)).status).toBe(200);
      }
    });
  });

  describe('optional', () => {
    it('lets a request without Authorization through unauthenticated, but not a bad token', async () => {
      const optional = await protectedApp({ optional: true });
      const bare = await request(optional).get('/v1/me');
      expect(bare.status).toBe(200);
      expect(bare.body).toEqual({ claims: null });
      expect((await request(optional).get('/v1/me').set('Authorization', 'Bearer nope')).status).toBe(401);
    });

    describe('with clients: verified client credentials for the rate limiter (req.verifiedClient)', () => {
      async function clientApp(): Promise<Express> {
        const { clients } = await seedStores();
        const app = express();
        app.use(bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, optional: true, clients }));
        // Node's IncomingMessage has its own `client` (a deprecated alias of `socket`): read the id.
        app.get('/v1/who', (req, res) => {
          res.json({
            client: req.verifiedClient?.id === undefined ? null : { id: req.verifiedClient.id },
            auth: req.auth ?? null,
          });
        });
        app.use(notFound(), errorHandler({ production: true, log: false }));
        return app;
      }
      const who = async (app: Express, authorization: string) => request(app).get('/v1/who').set('Authorization', authorization);
      const basicOf = (id: string, secret: string) =>
        `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

      it('sets req.verifiedClient = { id } when the secret verifies', async () => {
        const app = await clientApp();
        const res = await who(app, basicOf('demo-client', 'demo-secret'));
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ client: { id: 'demo-client' }, auth: null });
        expect((await who(app, basicOf('odd:id é', 'odd secret:%'))).body.client).toEqual({ id: 'odd:id é' });
      });

      it.each([
        ['a wrong secret', basicOf('demo-client', 'not-the-secret')],
        ['an unknown client', basicOf('nobody', 'demo-secret')],
        ['a public client (no secret to verify)', basicOf('public-app', 'anything')],
        ['a blocked client', basicOf('blocked-app', 'blocked-secret')],
        ['a malformed header', 'Basic !!!'],
      ])('sets nothing for %s and does not refuse the request', async (_case, authorization) => {
        const res = await who(await clientApp(), authorization);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ client: null, auth: null });
      });

      it('sets nothing when the client store fails, and lets the request through', async () => {
        const app = express();
        const clients = { findById: () => Promise.reject(new Error('down')) };
        app.use(bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, optional: true, clients }));
        app.get('/v1/who', (req, res) => {
          res.json({ client: req.verifiedClient?.id ?? null });
        });
        const res = await who(app, basicOf('demo-client', 'demo-secret'));
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ client: null });
      });

      it('is refused without optional: true (a Basic header would be a 401 there)', async () => {
        const { clients } = await seedStores();
        expect(() => bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, clients })).toThrow(
          '`clients` must be given only with `optional: true`',
        );
      });
    });

    it('lets a request with credentials of another scheme (Basic) through unauthenticated', async () => {
      const optional = await protectedApp({ optional: true });
      const basicCaller = await request(optional).get('/v1/me').set('Authorization', 'Basic ZGVtbzpzZWNyZXQ=');
      expect(basicCaller.status).toBe(200);
      expect(basicCaller.body).toEqual({ claims: null });
    });
  });

  describe('options, checked at construction', () => {
    it.each([
      [{ keys: [] }, '`keys` must be a non-empty array'],
      [{ keys: KEYS, jwksUri: 'https://issuer.example/jwks' }, '`jwksUri` must be left out with `keys`'],
      [{ keys: undefined, issuer: 'http://issuer.example' }, '`issuer` must be an https URL to discover its keys from'],
      [{ keys: undefined, jwksUri: 'ftp://issuer.example/jwks' }, '`jwksUri` must be an https URL'],
      [{ keys: undefined, jwks: { cooldownSeconds: 0 } }, '`jwks.cooldownSeconds` must be an integer from 1 to 3600'],
      [{ keys: undefined, jwks: { algorithms: ['HS256'] } }, '`jwks.algorithms` must be a non-empty list of'],
      [{ keys: undefined, jwks: { cooldown: 30 } }, 'unsupported option `cooldown`'],
      [{ checkClaims: 'tenant' }, '`checkClaims` must be a function'],
      [{ issuer: 1 }, '`issuer` must be a non-empty string'],
      [{ clockToleranceSeconds: -1 }, '`clockToleranceSeconds` must be an integer from 0 to 300'],
      [{ optional: 'yes' }, '`optional` must be true or false'],
      [{ maxTokenLifetimeSeconds: 0 }, '`maxTokenLifetimeSeconds` must be an integer from 60 to 31536000'],
      [{ maxTokenLifetimeSeconds: '1h' }, '`maxTokenLifetimeSeconds` must be an integer from 60 to 31536000'],
      [
        { keys: [{ kid: 'r', algorithm: 'RS256', publicKey: 'not a pem' }] },
        '`keys[0].publicKey` must be a PEM-encoded public key',
      ],
      [
        { keys: [{ kid: 'r', algorithm: 'ES256', publicKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey }] },
        'an EC P-256 key for ES256',
      ],
      [
        { keys: [{ kid: 'r', algorithm: 'RS256', publicKey: generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey }] },
        'an RSA key of at least 2048 bits',
      ],
      [{ algorithms: ['HS256'] }, 'unsupported option `algorithms`'],
    ])('refuses %j', (wrong, message) => {
      expect(() => bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, ...wrong } as never)).toThrow(message);
    });
  });
});

/** A minimal RevokedFamilies for the tests: one map that every "instance" of the test shares, as Redis would be. */
class SharedRevokedFamilies implements RevokedFamilies {
  readonly until = new Map<string, number>();
  async revoke(familyId: string, untilMs: number): Promise<void> {
    this.until.set(familyId, untilMs);
  }
  isRevoked(familyId: string): boolean {
    return (this.until.get(familyId) ?? 0) > Date.now();
  }
  close(): void {}
}

describe('revoked refresh-token families: their access tokens die with them (revokedFamilies)', () => {
  /** Two instances of one service: own routers and verifiers, one refresh-token store and one RevokedFamilies. */
  async function twoInstances() {
    const stores = await seedStores();
    const refreshTokens = new MemoryRefreshTokenStore();
    const revokedFamilies = new SharedRevokedFamilies();
    const instance = () => {
      const app = express();
      app.use(
        tokenRouter({
          ...TOKEN_OPTIONS,
          refreshTokens,
          revokedFamilies,
          ...stores,
        }),
      );
      app.get('/v1/me', bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, revokedFamilies }), (req, res) => {
        res.json({ sub: req.auth?.subject });
      });
      app.use(notFound(), errorHandler({ production: true, log: false }));
      return app;
    };
    return { a: instance(), b: instance(), refreshTokens, revokedFamilies };
  }
  const me = (app: Express, token: string) => request(app).get('/v1/me').set('Authorization', `Bearer ${token}`);
  const refresh = (app: Express, token: string) => postToken(app, { grant_type: 'refresh_token', refresh_token: token });

  it('refuses every access token of a family whose refresh token was reused, on every instance, also tokens verified before', async () => {
    const { a, b, revokedFamilies } = await twoInstances();
    const first = (await postToken(a, ALICE)).body;
    const rotated = (await refresh(a, first.refresh_token)).body;
    const other = (await postToken(b, ALICE)).body;
    // Both access tokens of the family were accepted (and cached as verified) on instance b.
    expect((await me(b, first.access_token)).status).toBe(200);
    expect((await me(b, rotated.access_token)).status).toBe(200);
    // The old refresh token is presented again: reuse, the family is revoked.
    expect((await refresh(a, first.refresh_token)).body.error).toBe('invalid_grant');
    expect(revokedFamilies.until.size).toBe(1);
    for (const app of [a, b]) {
      expectInvalidToken(await me(app, first.access_token), 'The access token was revoked.');
      expectInvalidToken(await me(app, rotated.access_token), 'The access token was revoked.');
      // Another sign-in of the same user is another family: it keeps working.
      expect((await me(app, other.access_token)).status).toBe(200);
    }
  });

  it('refuses the access tokens of a family signed out with revokeRefreshToken(..., { revokedFamilies })', async () => {
    const { a, b, refreshTokens, revokedFamilies } = await twoInstances();
    const signedIn = (await postToken(a, ALICE)).body;
    expect((await me(b, signedIn.access_token)).status).toBe(200);
    const before = Date.now();
    await expect(
      revokeRefreshToken(refreshTokens, signedIn.refresh_token, { revokedFamilies, accessTokenTtlSeconds: 3600 }),
    ).resolves.toBe(true);
    expectInvalidToken(await me(b, signedIn.access_token), 'The access token was revoked.');
    // Kept as long as one of its access tokens can live: the lifetime plus the largest clock tolerance.
    const until = [...revokedFamilies.until.values()][0] as number;
    expect(until).toBeGreaterThanOrEqual(before + 3_900_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3_900_000);
  });

  it('lets tokens without a family claim (issued before) through, and checks nothing without the option', async () => {
    const revokedFamilies = new SharedRevokedFamilies();
    await revokedFamilies.revoke('f-1', Date.now() + 60_000);
    const app = express();
    app.get('/v1/me', bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, revokedFamilies }), (_req, res) => {
      res.json({});
    });
    app.get('/v1/plain', bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE }), (_req, res) => {
      res.json({});
    });
    app.use(notFound(), errorHandler({ production: true, log: false }));
    expect((await me(app, sign({}))).status).toBe(200);
    expectInvalidToken(await me(app, sign({ sid: 'f-1' })), 'The access token was revoked.');
    expect(
      (
        await request(app)
          .get('/v1/plain')
          .set('Authorization', `Bearer ${sign({ sid: 'f-1' })}`)
      ).status,
    ).toBe(200);
  });

  it('refuses a revokedFamilies option without isRevoked()', () => {
    expect(() => bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, revokedFamilies: {} as never })).toThrow(
      '`revokedFamilies` must be a RevokedFamilies',
    );
  });
});

describe('requireScope() (RFC 6750 §3.1; rule 13.8: 403 is a refused authorization)', () => {
  let app: Express;
  beforeAll(async () => {
    app = await protectedApp();
  });

  it('lets a token with the scope through', async () => {
    const token = await accessToken(app, { scope: 'users:write' });
    const res = await request(app).post('/v1/users').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(201);
  });

  it('answers a valid token without the scope with 403 insufficient_scope', async () => {
    const token = await accessToken(app, { scope: 'users:read' });
    const res = await request(app).post('/v1/users').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(403);
    expectHeaders(res, {
      'Content-Type': JSON_TYPE,
      'WWW-Authenticate':
        'Bearer realm="api", error="insufficient_scope", scope="users:write", error_description="The access token lacks the scope: users:write."',
    });
    expect(res.body).toEqual({
      error: 'insufficient_scope',
      error_description: 'The access token lacks the scope: users:write.',
    });
  });

  it('challenges a token without the scope in the configured realm', async () => {
    const other = await protectedApp({ realm: 'users' });
    const token = await accessToken(other, { scope: 'users:read' });
    const res = await request(other).post('/v1/users').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(403);
    expectHeaders(res, {
      'WWW-Authenticate':
        'Bearer realm="users", error="insufficient_scope", scope="users:write", error_description="The access token lacks the scope: users:write."',
    });
  });

  it('keeps 401 for a missing token on the same route (authentication before authorization)', async () => {
    const res = await request(app).post('/v1/users');
    expect(res.status).toBe(401);
  });

  it('answers 401 when no authentication ran before it, with the challenge bearerAuth() answers', async () => {
    const res = await request(app).get('/v1/unguarded-scope');
    expect(res.status).toBe(401);
    expectHeaders(res, { 'Content-Type': JSON_TYPE, 'WWW-Authenticate': 'Bearer realm="api"' });
    expect(res.body).toEqual({ errors: [{ message: 'A bearer access token is required.', code: 40100 }] });
    const bearer = await request(app).get('/v1/me');
    expect(bearer.headers['www-authenticate']).toBe(res.headers['www-authenticate']);
  });

  it('challenges in the realm of an optional bearerAuth() that let the request through without a token', async () => {
    const withRealm = (realm: string | undefined) => {
      const api = express();
      api.get(
        '/x',
        bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, optional: true, ...(realm && { realm }) }),
        requireScope('users:read'),
        (_req, res) => {
          res.json({});
        },
      );
      api.use(errorHandler({ production: true, log: false }));
      return api;
    };
    expectHeaders(await request(withRealm('users')).get('/x'), { 'WWW-Authenticate': 'Bearer realm="users"' });
    expectHeaders(await request(withRealm(undefined)).get('/x'), { 'WWW-Authenticate': 'Bearer realm="api"' });
  });

  it('requires every scope listed', async () => {
    const both = express();
    both.get(
      '/x',
      (req, _res, next) => {
        req.auth = { subject: 's', scopes: ['a'] };
        next();
      },
      requireScope('a', 'b'),
      (_req, res) => {
        res.json({});
      },
    );
    both.use(errorHandler({ production: true, log: false }));
    const res = await request(both).get('/x');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'insufficient_scope', error_description: 'The access token lacks the scope: a b.' });
  });

  it.each([[[]], [['has space']], [['']]])('refuses the scopes %j at construction', (scopes) => {
    expect(() => requireScope(...(scopes as string[]))).toThrow('requireScope(options)');
  });
});

describe('bearerAuth({ isSubjectActive }): a token whose user is gone is refused', () => {
  const gone = 'The user of the access token no longer exists.';
  const refusedGone = {
    'WWW-Authenticate': `Bearer realm="api", error="invalid_token", error_description="${gone}"`,
    'Cache-Control': 'no-store',
    Pragma: 'no-cache',
  };

  it.each([
    ['a synchronous answer', (active: Set<string>) => (subject: string) => active.has(subject)],
    ['an asynchronous answer', (active: Set<string>) => async (subject: string) => active.has(subject)],
  ])('lets the user’s token through, then refuses it with 401 invalid_token once the user is gone (%s)', async (_case, make) => {
    const active = new Set(['u-1']);
    const app = await protectedApp({ isSubjectActive: make(active) });
    const token = await accessToken(app, { scope: 'users:write' });
    const before = await request(app).post('/v1/users').set('Authorization', `Bearer ${token}`).send({});
    expect(before.status).toBe(201);
    active.delete('u-1');
    const after = await request(app).post('/v1/users').set('Authorization', `Bearer ${token}`).send({});
    expect(after.status).toBe(401);
    expectHeaders(after, refusedGone);
    expect(after.body).toEqual({ error: 'invalid_token', error_description: gone });
  });

  it('asks with the token’s subject', async () => {
    const asked: string[] = [];
    const app = await protectedApp({ isSubjectActive: (subject) => asked.push(subject) > 0 });
    const token = await accessToken(app);
    expect((await request(app).get('/v1/me').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    expect(asked).toEqual(['u-1']);
  });

  it('asks with the verified claims too, so a client credentials token (sub is client_id) is told by its client', async () => {
    const asked: [string, string | undefined][] = [];
    const app = await protectedApp({
      isSubjectActive: (subject, claims) => asked.push([subject, claims?.client_id]) > 0 && claims?.client_id !== subject,
    });
    const clientToken = sign({ sub: 'machine', client_id: 'machine' });
    const res = await request(app).get('/v1/me').set('Authorization', `Bearer ${clientToken}`);
    expectInvalidToken(res, 'The client of the access token is no longer allowed.');
    expect(asked).toEqual([['machine', 'machine']]);
  });

  it('answers 503 with Retry-After when the lookup’s store is unreachable (fails closed)', async () => {
    const { StoreUnavailableError } = await import('../src/stores/index.js');
    const app = await protectedApp({
      isSubjectActive: async () => {
        throw new StoreUnavailableError('users', 'users store down');
      },
    });
    const token = await accessToken(app);
    const res = await request(app).get('/v1/me').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
  });

  it('refuses a non-function at construction', () => {
    expect(() => bearerAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, isSubjectActive: true as never })).toThrow(
      'isSubjectActive',
    );
  });

  describe('tokenRouter({ isSubjectActive })', () => {
    async function routerApp(active: Set<string>): Promise<Express> {
      const app = express();
      app.use(
        tokenRouter({
          ...TOKEN_OPTIONS,
          scopes: ['users:read'],
          ...(await seedStores()),
          isSubjectActive: (subject) => active.has(subject),
        }),
      );
      app.use(notFound(), errorHandler({ production: true, log: false }));
      return app;
    }

    it('refuses the refresh token of a user who is gone with 400 invalid_grant, and ends its family', async () => {
      const active = new Set(['u-1']);
      const app = await routerApp(active);
      const issued = await postToken(app, ALICE);
      expect(issued.status).toBe(200);
      active.delete('u-1');
      const refreshed = await postToken(app, { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token });
      expect(refreshed.status).toBe(400);
      expect(refreshed.body).toEqual({ error: 'invalid_grant', error_description: 'The refresh token is not valid.' });
      // Even if the user came back, the family is over.
      active.add('u-1');
      const again = await postToken(app, { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token });
      expect(again.status).toBe(400);
    });

    it('issues nothing to a user who is gone, with the answer of a wrong password', async () => {
      const app = await routerApp(new Set());
      const res = await postToken(app, ALICE);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'The username or password is not correct.' });
    });
  });
});
