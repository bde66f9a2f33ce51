import bcrypt from 'bcryptjs';
import express from 'express';
import express4 from 'express4';
import request from 'supertest';
import { ConfigurationError } from '../../src/config/index.js';
import { apiError, errorHandler, notFound } from '../../src/errors/index.js';
import { conventions } from '../../src/preset.js';
import { parseBodies } from '../../src/request/index.js';
import { StoreUnavailableError } from '../../src/stores/index.js';
import { expectHeaders } from '../../test/helpers.js';
import {
  ALICE,
  AUDIENCE,
  basic,
  decodeJwt,
  ISSUER,
  KEYS,
  postToken,
  seedStores,
  TEST_COST,
  TOKEN_OPTIONS,
  tokenApp,
} from '../../test/support/oauth2.js';
import {
  MemoryRefreshTokenStore,
  MemoryUserStore,
  PasswordHasher,
  revokeRefreshToken,
  tokenRouter,
  type UserStore,
} from '../src/index.js';
import { PREHASHED_BCRYPT_PREFIX } from '../src/sign-in/password-hash-format.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const REFRESH_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** docs/conventions.md rule 13.4 headers: no-store always; Pragma never on success. */
const SUCCESS_HEADERS = { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store, max-age=0', Pragma: null };
/** docs/conventions.md rule 11.13: Pragma only in the token failure. */
const ERROR_HEADERS = { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store, max-age=0', Pragma: 'no-cache' };

const tokenErrorBody = (error: string, error_description: string) => ({ error, error_description });

describe('tokenRouter(): POST /v1/oauth2/token', () => {
  describe('password grant (rule 13.2, RFC 6749 §4.3)', () => {
    describe('with the right username and password', () => {
      it('answers 200 with the token response and no-store, without Pragma', async () => {
        const app = await tokenApp();
        const res = await postToken(app, ALICE);
        expect(res.status).toBe(200);
        expectHeaders(res, SUCCESS_HEADERS);
        expect(res.body).toEqual({
          access_token: expect.any(String),
          token_type: 'bearer',
          expires_in: 3600,
          refresh_token: expect.stringMatching(REFRESH_TOKEN),
          scope: 'users:read users:write exports',
        });
      });

      it('issues a JWT with iss, sub, aud, exp, iat, jti, scope and its family as sid, typed at+jwt with its kid', async () => {
        const app = await tokenApp();
        const before = Math.floor(Date.now() / 1000);
        const res = await postToken(app, ALICE);
        const { header, payload } = decodeJwt(res.body.access_token);
        expect(header).toEqual({ alg: 'HS256', typ: 'at+jwt', kid: 'k1' });
        expect(payload).toEqual({
          iss: ISSUER,
          sub: 'u-1',
          aud: AUDIENCE,
          exp: (payload.iat as number) + 3600,
          iat: expect.any(Number),
          jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
          scope: 'users:read users:write exports',
          sid: expect.stringMatching(/^[0-9a-f-]{36}$/),
        });
        expect(payload.sid).not.toBe(payload.jti);
        expect(payload.iat).toBeGreaterThanOrEqual(before);
      });

      it('gives expires_in from accessTokenTtlSeconds, in whole seconds', async () => {
        const app = await tokenApp({ accessTokenTtlSeconds: 900 });
        const res = await postToken(app, ALICE);
        expect(res.body.expires_in).toBe(900);
        const { payload } = decodeJwt(res.body.access_token);
        expect((payload.exp as number) - (payload.iat as number)).toBe(900);
      });

      it('issues a new jti and refresh token on every sign-in', async () => {
        const app = await tokenApp();
        const [a, b] = [await postToken(app, ALICE), await postToken(app, ALICE)];
        expect(a.body.refresh_token).not.toBe(b.body.refresh_token);
        expect(decodeJwt(a.body.access_token).payload.jti).not.toBe(decodeJwt(b.body.access_token).payload.jti);
      });

      it.each(['Alice', ' alice ', 'ALICE', 'ａｌｉｃｅ'])('treats the spelling %j as the same account', async (username) => {
        const app = await tokenApp();
        const res = await postToken(app, { ...ALICE, username });
        expect(res.status).toBe(200);
        expect(decodeJwt(res.body.access_token).payload.sub).toBe('u-1');
      });

      it('accepts charset=utf-8 on the content type', async () => {
        const app = await tokenApp();
        const res = await request(app)
          .post('/v1/oauth2/token')
          .set('Content-Type', 'application/x-www-form-urlencoded; charset=UTF-8')
          .send('grant_type=password&username=alice&password=wonderland-rabbit-hole');
        expect(res.status).toBe(200);
      });

      it('works behind conventions()’ body parsers, which parse the form first', async () => {
        const stores = await seedStores();
        const app = express();
        app.use(...parseBodies());
        app.use(
          tokenRouter({
            ...TOKEN_OPTIONS,
            ...stores,
          }),
        );
        app.use(notFound(), errorHandler({ production: true, log: false }));
        const res = await postToken(app, ALICE);
        expect(res.status).toBe(200);
        // No scopes are known and none were asked for: no scope claim.
        expect(res.body).toEqual({
          access_token: expect.any(String),
          token_type: 'bearer',
          expires_in: 3600,
          refresh_token: expect.stringMatching(REFRESH_TOKEN),
        });
        expect(decodeJwt(res.body.access_token).payload.scope).toBeUndefined();
      });
    });

    describe('with a wrong password or an unknown user', () => {
      it('answers 400 invalid_grant with Pragma: no-cache', async () => {
        const app = await tokenApp();
        const res = await postToken(app, { ...ALICE, password: 'wrong' });
        expect(res.status).toBe(400);
        expectHeaders(res, ERROR_HEADERS);
        expect(res.body).toEqual(tokenErrorBody('invalid_grant', 'The username or password is not correct.'));
      });

      it('answers an unknown user exactly as a wrong password (no user enumeration)', async () => {
        const app = await tokenApp();
        const wrong = await postToken(app, { ...ALICE, password: 'wrong' });
        const unknown = await postToken(app, { ...ALICE, username: 'mallory' });
        expect(unknown.status).toBe(wrong.status);
        expect(unknown.body).toEqual(wrong.body);
      });

      it('checks an unknown user’s password against a stand-in bcrypt hash of passwordCost before any known user signed in', async () => {
        const hasher = new PasswordHasher({ threads: 1, cost: TEST_COST });
        const verify = jest.spyOn(hasher, 'verify');
        const app = await tokenApp({ passwordHasher: hasher, passwordCost: 5 });
        await postToken(app, { ...ALICE, username: 'mallory', password: 'guess' });
        expect(verify).toHaveBeenCalledTimes(1);
        const [password, hash] = verify.mock.calls[0] as [string, string];
        expect(password).toBe('guess');
        expect(hash.startsWith(PREHASHED_BCRYPT_PREFIX)).toBe(true);
        expect(bcrypt.getRounds(hash.slice(PREHASHED_BCRYPT_PREFIX.length))).toBe(5);
        await hasher.close();
      });
      it('then checks unknown users at the cost of the stored hashes verified, against a stand-in no password matches', async () => {
        const hasher = new PasswordHasher({ threads: 1, cost: TEST_COST });
        const verify = jest.spyOn(hasher, 'verify');
        const users = new MemoryUserStore();
        await users.add({ username: 'alice', subject: 'u-1', passwordHash: bcrypt.hashSync(ALICE.password, 6) });
        const app = await tokenApp({ users, passwordHasher: hasher, passwordCost: TEST_COST, upgradePasswordHashes: false });
        expect((await postToken(app, { ...ALICE, password: 'wrong' })).status).toBe(400);
        await postToken(app, { ...ALICE, username: 'mallory', password: 'guess' });
        await postToken(app, { ...ALICE, username: 'mallory', password: 'guess' });
        const [first, second] = verify.mock.calls.slice(1).map(([, hash]) => hash);
        for (const standIn of [first, second] as string[]) {
          expect(standIn.startsWith(PREHASHED_BCRYPT_PREFIX)).toBe(true);
          expect(bcrypt.getRounds(standIn.slice(PREHASHED_BCRYPT_PREFIX.length))).toBe(6);
        }
        // Made afresh each time (a random salt and digest): nothing to learn from one.
        expect(first).not.toBe(second);
        await expect(hasher.verify('guess', first as string)).resolves.toBe(false);
        await hasher.close();
      });
    });

    describe('with missing or malformed parameters', () => {
      it.each([
        [{ grant_type: 'password', username: 'alice' }, 'The password grant needs username and password.'],
        [{ grant_type: 'password', password: 'x' }, 'The password grant needs username and password.'],
        [{ grant_type: 'password', username: '', password: 'x' }, 'The password grant needs username and password.'],
        [{ username: 'alice', password: 'x' }, 'The grant_type parameter is missing.'],
        [{ ...ALICE, username: 'a'.repeat(257) }, 'The username or password is too long.'],
        [{ ...ALICE, password: 'p'.repeat(1025) }, 'The username or password is too long.'],
      ])('answers %j with 400 invalid_request', async (form, description) => {
        const app = await tokenApp();
        const res = await postToken(app, form as Record<string, string>);
        expect(res.status).toBe(400);
        expectHeaders(res, ERROR_HEADERS);
        expect(res.body).toEqual(tokenErrorBody('invalid_request', description));
      });

      it('refuses a repeated parameter (RFC 6749 §3.2)', async () => {
        const app = await tokenApp();
        const res = await request(app)
          .post('/v1/oauth2/token')
          .type('form')
          .send('grant_type=password&username=alice&username=bob&password=x');
        expect(res.status).toBe(400);
        expect(res.body).toEqual(tokenErrorBody('invalid_request', 'A parameter of the request is repeated or malformed.'));
      });

      it('ignores unrecognised parameters, repeated or not, whatever their names (RFC 6749 §3.1)', async () => {
        const app = await tokenApp();
        const res = await request(app)
          .post('/v1/oauth2/token')
          .type('form')
          .send('grant_type=password&username=alice&password=wonderland-rabbit-hole&x=1&x=2&%01%C3%A9=a&%01%C3%A9=b&nonce=');
        expect(res.status).toBe(200);
      });

      it('answers an unknown grant type with 400 unsupported_grant_type', async () => {
        const app = await tokenApp();
        const res = await postToken(app, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code' });
        expect(res.status).toBe(400);
        expectHeaders(res, ERROR_HEADERS);
        expect(res.body).toEqual(
          tokenErrorBody(
            'unsupported_grant_type',
            'The grant type is not supported; grant_types_supported in the server metadata lists those that are.',
          ),
        );
      });
    });

    describe('with a body that is not a UTF-8 form (rule 13.1: x-www-form-urlencoded, UTF-8)', () => {
      it('refuses a JSON body with 400 invalid_request', async () => {
        const app = await tokenApp();
        const res = await request(app).post('/v1/oauth2/token').send(ALICE);
        expect(res.status).toBe(400);
        expectHeaders(res, ERROR_HEADERS);
        expect(res.body).toEqual(
          tokenErrorBody('invalid_request', 'The request body must be application/x-www-form-urlencoded.'),
        );
      });

      it('refuses a request without a body', async () => {
        const app = await tokenApp();
        const res = await request(app).post('/v1/oauth2/token');
        expect(res.status).toBe(400);
        expect(res.body).toEqual(
          tokenErrorBody('invalid_request', 'The request body must be application/x-www-form-urlencoded.'),
        );
      });

      it('refuses another charset', async () => {
        const app = await tokenApp();
        const res = await request(app)
          .post('/v1/oauth2/token')
          .set('Content-Type', 'application/x-www-form-urlencoded; charset=iso-8859-1')
          .send('grant_type=password');
        expect(res.status).toBe(400);
        expect(res.body).toEqual(tokenErrorBody('invalid_request', 'The request body must be encoded in UTF-8.'));
      });

      it('refuses a body over its 8 kB bound', async () => {
        const app = await tokenApp();
        const res = await postToken(app, { ...ALICE, password: 'p'.repeat(9000) });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(tokenErrorBody('invalid_request', 'The request body could not be read as a form.'));
      });
    });

    describe('scope (RFC 6749 §3.3)', () => {
      it('grants the requested scope and leaves `scope` out of the response when it is the same', async () => {
        const app = await tokenApp();
        const res = await postToken(app, { ...ALICE, scope: 'users:read exports' });
        expect(res.status).toBe(200);
        expect(res.body.scope).toBeUndefined();
        expect(decodeJwt(res.body.access_token).payload.scope).toBe('users:read exports');
      });

      it('refuses an unknown scope with 400 invalid_scope', async () => {
        const app = await tokenApp();
        const res = await postToken(app, { ...ALICE, scope: 'users:read admin' });
        expect(res.status).toBe(400);
        expectHeaders(res, ERROR_HEADERS);
        expect(res.body).toEqual(tokenErrorBody('invalid_scope', 'The requested scope is not allowed.'));
      });

      it.each(['users:read  exports', ' users:read', 'users:"read"'])('refuses the malformed scope %j', async (scope) => {
        const app = await tokenApp();
        const res = await postToken(app, { ...ALICE, scope });
        expect(res.body).toEqual(tokenErrorBody('invalid_scope', 'The scope parameter is malformed.'));
      });

      it('narrows the default to the user’s own scopes, and refuses more', async () => {
        const app = await tokenApp();
        const reader = { grant_type: 'password', username: 'reader', password: 'read-only-pass' };
        const res = await postToken(app, reader);
        expect(res.body.scope).toBe('users:read');
        const wider = await postToken(app, { ...reader, scope: 'users:write' });
        expect(wider.status).toBe(400);
        expect(wider.body).toEqual(tokenErrorBody('invalid_scope', 'The requested scope is not allowed for this user.'));
      });
    });
  });

  describe('client authentication (rule 13.5, RFC 6749 §2.3.1)', () => {
    it('accepts Authorization: Basic and puts client_id in the token', async () => {
      const app = await tokenApp();
      const res = await postToken(app, ALICE, { Authorization: basic('demo-client', 'demo-secret') });
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.access_token).payload.client_id).toBe('demo-client');
    });

    it('form-decodes the Basic credentials', async () => {
      const app = await tokenApp();
      const res = await postToken(app, ALICE, { Authorization: basic('odd:id é', 'odd secret:%') });
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.access_token).payload.client_id).toBe('odd:id é');
    });

    it('accepts client_id and client_secret in the body', async () => {
      const app = await tokenApp();
      const res = await postToken(app, { ...ALICE, client_id: 'demo-client', client_secret: 'demo-secret' });
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.access_token).payload.client_id).toBe('demo-client');
    });

    it('accepts a public client by client_id alone', async () => {
      const app = await tokenApp();
      const res = await postToken(app, { ...ALICE, client_id: 'public-app' });
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.access_token).payload.client_id).toBe('public-app');
    });

    it('refuses both methods at once with 400 invalid_request', async () => {
      const app = await tokenApp();
      const res = await postToken(
        app,
        { ...ALICE, client_id: 'demo-client' },
        { Authorization: basic('demo-client', 'demo-secret') },
      );
      expect(res.status).toBe(400);
      expectHeaders(res, ERROR_HEADERS);
      expect(res.body).toEqual(
        tokenErrorBody(
          'invalid_request',
          'Use one client authentication method: the Authorization header or the body, not both.',
        ),
      );
    });

    it('refuses client_secret without client_id', async () => {
      const app = await tokenApp();
      const res = await postToken(app, { ...ALICE, client_secret: 'demo-secret' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(tokenErrorBody('invalid_request', 'client_secret was sent without client_id.'));
    });

    describe('with wrong credentials in the header', () => {
      it.each([
        ['a wrong secret', basic('demo-client', 'wrong')],
        ['an unknown client', basic('nobody', 'demo-secret')],
        ['no secret for a confidential client', basic('demo-client', '')],
      ])('answers %s with 401 invalid_client and WWW-Authenticate: Basic', async (_case, authorization) => {
        const app = await tokenApp();
        const res = await postToken(app, ALICE, { Authorization: authorization });
        expect(res.status).toBe(401);
        expectHeaders(res, { ...ERROR_HEADERS, 'WWW-Authenticate': 'Basic realm="api", charset="UTF-8"' });
        expect(res.body).toEqual(tokenErrorBody('invalid_client', 'Client authentication failed.'));
      });

      it.each([
        ['not base64', 'Basic ***'],
        ['no colon', `Basic ${Buffer.from('demo-client').toString('base64')}`],
        ['an empty client id', `Basic ${Buffer.from(':demo-secret').toString('base64')}`],
        ['another scheme', 'Bearer abc'],
        ['a bad percent-encoding', `Basic ${Buffer.from('demo%zz:demo-secret').toString('base64')}`],
      ])('answers a malformed header (%s) with 401 invalid_client and the challenge', async (_case, authorization) => {
        const app = await tokenApp();
        const res = await postToken(app, ALICE, { Authorization: authorization });
        expect(res.status).toBe(401);
        expectHeaders(res, { ...ERROR_HEADERS, 'WWW-Authenticate': 'Basic realm="api", charset="UTF-8"' });
        expect(res.body).toEqual(
          tokenErrorBody('invalid_client', 'The Authorization header is not valid Basic client authentication.'),
        );
      });
    });

    it('answers wrong credentials in the body with 400 invalid_client and no challenge (RFC 6749 §5.2)', async () => {
      const app = await tokenApp();
      const res = await postToken(app, { ...ALICE, client_id: 'demo-client', client_secret: 'wrong' });
      expect(res.status).toBe(400);
      expectHeaders(res, { ...ERROR_HEADERS, 'WWW-Authenticate': null });
      expect(res.body).toEqual(tokenErrorBody('invalid_client', 'Client authentication failed.'));
    });

    it('refuses a secret for a public client', async () => {
      const app = await tokenApp();
      const res = await postToken(app, { ...ALICE, client_id: 'public-app', client_secret: 'made-up' });
      expect(res.status).toBe(400);
      expectHeaders(res, { 'WWW-Authenticate': null });
      expect(res.body).toEqual(tokenErrorBody('invalid_client', 'Client authentication failed.'));
    });

    describe('client restrictions (rule 13.5: allow or block an application)', () => {
      it('answers a blocked client with 400 unauthorized_client', async () => {
        const app = await tokenApp();
        const res = await postToken(app, ALICE, { Authorization: basic('blocked-app', 'blocked-secret') });
        expect(res.status).toBe(400);
        expectHeaders(res, ERROR_HEADERS);
        expect(res.body).toEqual(tokenErrorBody('unauthorized_client', 'This client is not allowed to use the token endpoint.'));
      });

      it('answers a grant the client may not use with 400 unauthorized_client', async () => {
        const app = await tokenApp();
        const res = await postToken(app, ALICE, { Authorization: basic('refresh-only', 'r-secret') });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(tokenErrorBody('unauthorized_client', 'This client may not use the password grant.'));
      });

      it('limits the scope to the client’s own list', async () => {
        const app = await tokenApp();
        const auth = { Authorization: basic('read-app', 'read-secret') };
        const narrow = await postToken(app, ALICE, auth);
        expect(narrow.body.scope).toBe('users:read');
        const wide = await postToken(app, { ...ALICE, scope: 'users:write' }, auth);
        expect(wide.status).toBe(400);
        expect(wide.body).toEqual(tokenErrorBody('invalid_scope', 'The requested scope is not allowed.'));
      });
    });

    it('with requireClient, refuses a request without client authentication', async () => {
      const app = await tokenApp({ requireClient: true });
      const res = await postToken(app, ALICE);
      expect(res.status).toBe(401);
      expectHeaders(res, { ...ERROR_HEADERS, 'WWW-Authenticate': 'Basic realm="api", charset="UTF-8"' });
      expect(res.body).toEqual(tokenErrorBody('invalid_client', 'Client authentication is required.'));
    });
  });

  describe('refresh grant (rule 13.3, RFC 6749 §6, RFC 9700 §4.14)', () => {
    const refresh = (
      app: express.Express,
      token: string,
      extra: Record<string, string> = {},
      headers: Record<string, string> = {},
    ) => postToken(app, { grant_type: 'refresh_token', refresh_token: token, ...extra }, headers);

    it('answers 200 with a new access token and a new refresh token', async () => {
      const app = await tokenApp();
      const first = await postToken(app, ALICE);
      const res = await refresh(app, first.body.refresh_token);
      expect(res.status).toBe(200);
      expectHeaders(res, SUCCESS_HEADERS);
      expect(res.body).toEqual({
        access_token: expect.any(String),
        token_type: 'bearer',
        expires_in: 3600,
        refresh_token: expect.stringMatching(REFRESH_TOKEN),
        scope: 'users:read users:write exports',
      });
      expect(res.body.refresh_token).not.toBe(first.body.refresh_token);
      expect(decodeJwt(res.body.access_token).payload.sub).toBe('u-1');
    });

    it('rotates: the new refresh token works, and so on down the chain', async () => {
      const app = await tokenApp();
      let token = (await postToken(app, ALICE)).body.refresh_token as string;
      for (let i = 0; i < 3; i++) {
        const res = await refresh(app, token);
        expect(res.status).toBe(200);
        token = res.body.refresh_token;
      }
    });

    it('refuses a used refresh token, and revokes its whole family (reuse detection)', async () => {
      const app = await tokenApp();
      const old = (await postToken(app, ALICE)).body.refresh_token as string;
      const current = (await refresh(app, old)).body.refresh_token as string;
      const replay = await refresh(app, old);
      expect(replay.status).toBe(400);
      expectHeaders(replay, ERROR_HEADERS);
      expect(replay.body).toEqual(
        tokenErrorBody('invalid_grant', 'The refresh token was already used; its token family is revoked.'),
      );
      // The legitimate holder's token is revoked too: the thief's copy is worthless.
      const after = await refresh(app, current);
      expect(after.status).toBe(400);
      expect(after.body).toEqual(tokenErrorBody('invalid_grant', 'The refresh token is not valid.'));
    });

    it('leaves other families alone when one is revoked', async () => {
      const app = await tokenApp();
      const a = (await postToken(app, ALICE)).body.refresh_token as string;
      const b = (await postToken(app, ALICE)).body.refresh_token as string;
      await refresh(app, a);
      await refresh(app, a);
      expect((await refresh(app, b)).status).toBe(200);
    });

    it('lets at most one of several concurrent uses of one refresh token win', async () => {
      const app = await tokenApp();
      const token = (await postToken(app, ALICE)).body.refresh_token as string;
      const results = await Promise.all(Array.from({ length: 6 }, () => refresh(app, token)));
      expect(results.filter((res) => res.status === 200)).toHaveLength(1);
      expect(results.filter((res) => res.status === 400)).toHaveLength(5);
    });

    it('refuses an unknown refresh token with 400 invalid_grant', async () => {
      const app = await tokenApp();
      const res = await refresh(app, 'A'.repeat(43));
      expect(res.status).toBe(400);
      expect(res.body).toEqual(tokenErrorBody('invalid_grant', 'The refresh token is not valid.'));
    });

    it('refuses a missing refresh_token with 400 invalid_request', async () => {
      const app = await tokenApp();
      const res = await postToken(app, { grant_type: 'refresh_token' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(tokenErrorBody('invalid_request', 'The refresh_token grant needs refresh_token.'));
    });

    it('never takes an access token as a refresh token', async () => {
      const app = await tokenApp();
      const { access_token } = (await postToken(app, ALICE)).body;
      const res = await refresh(app, access_token);
      expect(res.body).toEqual(tokenErrorBody('invalid_grant', 'The refresh token is not valid.'));
    });

    describe('scope on refresh', () => {
      it('may narrow the access token’s scope, and the family keeps the original', async () => {
        const app = await tokenApp();
        const first = await postToken(app, ALICE);
        const narrow = await refresh(app, first.body.refresh_token, { scope: 'users:read' });
        expect(narrow.status).toBe(200);
        expect(narrow.body.scope).toBeUndefined();
        expect(decodeJwt(narrow.body.access_token).payload.scope).toBe('users:read');
        const full = await refresh(app, narrow.body.refresh_token);
        expect(decodeJwt(full.body.access_token).payload.scope).toBe('users:read users:write exports');
      });

      it('may never widen it (400 invalid_scope), and the token still works', async () => {
        const app = await tokenApp();
        const first = await postToken(app, { ...ALICE, scope: 'users:read' });
        const wide = await refresh(app, first.body.refresh_token, { scope: 'users:read users:write' });
        expect(wide.status).toBe(400);
        expect(wide.body).toEqual(tokenErrorBody('invalid_scope', 'The requested scope exceeds the scope originally granted.'));
        expect((await refresh(app, first.body.refresh_token)).status).toBe(200);
      });
    });

    describe('bound to its client (RFC 6749 §6)', () => {
      it('is refreshed by the client it was issued to', async () => {
        const app = await tokenApp();
        const auth = { Authorization: basic('demo-client', 'demo-secret') };
        const first = await postToken(app, ALICE, auth);
        const res = await refresh(app, first.body.refresh_token, {}, auth);
        expect(res.status).toBe(200);
        expect(decodeJwt(res.body.access_token).payload.client_id).toBe('demo-client');
      });

      it('is refused to another client, or to no client', async () => {
        const app = await tokenApp();
        const first = await postToken(app, ALICE, { Authorization: basic('demo-client', 'demo-secret') });
        const other = await refresh(app, first.body.refresh_token, {}, { Authorization: basic('read-app', 'read-secret') });
        expect(other.body).toEqual(tokenErrorBody('invalid_grant', 'The refresh token was issued to another client.'));
        const none = await refresh(app, first.body.refresh_token);
        expect(none.body).toEqual(tokenErrorBody('invalid_grant', 'The refresh token was issued to another client.'));
      });
    });

    it('is refused once its family is revoked by revokeRefreshToken() (logout)', async () => {
      const store = new MemoryRefreshTokenStore();
      const app = await tokenApp({ refreshTokens: store });
      const first = await postToken(app, ALICE);
      const second = (await refresh(app, first.body.refresh_token)).body.refresh_token as string;
      await expect(revokeRefreshToken(store, first.body.refresh_token)).resolves.toBe(true);
      expect((await refresh(app, second)).body).toEqual(tokenErrorBody('invalid_grant', 'The refresh token is not valid.'));
      await expect(revokeRefreshToken(store, second)).resolves.toBe(false);
    });

    it('expires after refreshTokenTtlSeconds', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'setTimeout', 'setInterval', 'queueMicrotask'] });
      try {
        const app = await tokenApp({ refreshTokenTtlSeconds: 60 });
        const first = await postToken(app, ALICE);
        jest.setSystemTime(Date.now() + 61_000);
        const res = await refresh(app, first.body.refresh_token);
        expect(res.body).toEqual(tokenErrorBody('invalid_grant', 'The refresh token is not valid.'));
      } finally {
        jest.useRealTimers();
      }
    });
  });

  describe('sign-in guard', () => {
    const guarded = () =>
      tokenApp({ signInGuard: { maxFailuresPerUsernameAndAddress: 3, maxFailuresPerAddress: 50, windowSeconds: 600 } });
    const wrong = { ...ALICE, password: 'guess' };

    it('answers 429 with Retry-After once a username has used its failures', async () => {
      const app = await guarded();
      for (let i = 0; i < 3; i++) expect((await postToken(app, wrong)).status).toBe(400);
      const res = await postToken(app, wrong);
      expect(res.status).toBe(429);
      expectHeaders(res, ERROR_HEADERS);
      expect(res.body).toEqual(
        tokenErrorBody(
          'too_many_requests',
          'Too many failed sign-in attempts for this username from this address; retry after the time in Retry-After.',
        ),
      );
      const retryAfter = Number(res.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(600);
    });

    it('answers 429 even to the right password while throttled', async () => {
      const app = await guarded();
      for (let i = 0; i < 3; i++) await postToken(app, wrong);
      expect((await postToken(app, ALICE)).status).toBe(429);
    });

    it('is not fooled by spelling variants of the username or a spoofed X-Forwarded-For', async () => {
      const app = await guarded();
      for (let i = 0; i < 3; i++) await postToken(app, { ...wrong, username: ['Alice', ' alice', 'ALICE '][i] as string });
      const variant = await postToken(app, { ...ALICE, username: 'aLiCe' }, { 'X-Forwarded-For': '203.0.113.9' });
      expect(variant.status).toBe(429);
    });

    it('counts unknown usernames the same way', async () => {
      const app = await guarded();
      const ghost = { ...wrong, username: 'ghost' };
      for (let i = 0; i < 3; i++) expect((await postToken(app, ghost)).status).toBe(400);
      expect((await postToken(app, ghost)).status).toBe(429);
    });

    it('lets no more parallel guesses through than the allowance', async () => {
      const app = await guarded();
      const results = await Promise.all(Array.from({ length: 8 }, () => postToken(app, wrong)));
      expect(results.filter((res) => res.status === 400)).toHaveLength(3);
      expect(results.filter((res) => res.status === 429)).toHaveLength(5);
    });

    it('clears a username’s failures when it signs in', async () => {
      const app = await guarded();
      await postToken(app, wrong);
      await postToken(app, wrong);
      expect((await postToken(app, ALICE)).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await postToken(app, wrong)).status).toBe(400);
    });

    it('keeps other usernames free', async () => {
      const app = await guarded();
      for (let i = 0; i < 4; i++) await postToken(app, wrong);
      const reader = await postToken(app, { grant_type: 'password', username: 'reader', password: 'read-only-pass' });
      expect(reader.status).toBe(200);
    });

    it('also throttles one client address trying many usernames', async () => {
      const app = await tokenApp({ signInGuard: { maxFailuresPerUsernameAndAddress: 10, maxFailuresPerAddress: 3 } });
      for (let i = 0; i < 3; i++) expect((await postToken(app, { ...wrong, username: `user-${i}` })).status).toBe(400);
      const res = await postToken(app, { ...wrong, username: 'user-9' }, { 'X-Forwarded-For': '198.51.100.7' });
      expect(res.status).toBe(429);
      expect(res.body).toEqual(
        tokenErrorBody(
          'too_many_requests',
          'Too many failed sign-in attempts from this address; retry after the time in Retry-After.',
        ),
      );
    });

    it('defaults to 10 failures per username', async () => {
      const app = await tokenApp();
      for (let i = 0; i < 10; i++) expect((await postToken(app, wrong)).status).toBe(400);
      expect((await postToken(app, wrong)).status).toBe(429);
    });

    it('can be turned off', async () => {
      const app = await tokenApp({ signInGuard: false });
      for (let i = 0; i < 12; i++) expect((await postToken(app, wrong)).status).toBe(400);
    });

    it('fails closed with 503 when its counter store is down', async () => {
      const broken = {
        reserve: () => Promise.reject(new Error('down')),
        settle: () => Promise.reject(new Error('down')),
      };
      const app = await tokenApp({ signInGuard: { store: broken } });
      const res = await postToken(app, ALICE);
      expect(res.status).toBe(503);
      expectHeaders(res, { ...ERROR_HEADERS, 'Retry-After': '5' });
      expect(res.body).toEqual(tokenErrorBody('temporarily_unavailable', 'Sign-in is unavailable; try again later.'));
    });
  });

  describe('failures of the stores', () => {
    it('answers 500 server_error in the RFC 6749 shape', async () => {
      const users: UserStore = { findByUsername: () => Promise.reject(new Error('database down')) };
      const app = await tokenApp({ users });
      const res = await postToken(app, ALICE);
      expect(res.status).toBe(500);
      expectHeaders(res, ERROR_HEADERS);
      expect(res.body).toEqual(tokenErrorBody('server_error', 'The token endpoint failed; try again later.'));
    });

    it('answers a store’s 503 (an ApiError of the {"errors"} model) as temporarily_unavailable, keeping Retry-After', async () => {
      const refreshTokens = new MemoryRefreshTokenStore();
      refreshTokens.create = () => Promise.reject(apiError('stateStoreUnavailable', { headers: { 'Retry-After': '1' } }));
      const app = await tokenApp({ refreshTokens });
      const res = await postToken(app, ALICE);
      expect(res.status).toBe(503);
      expectHeaders(res, { ...ERROR_HEADERS, 'Retry-After': '1' });
      expect(res.body).toEqual(tokenErrorBody('temporarily_unavailable', 'A shared state store is unreachable.'));
    });

    it('answers a Redis store that is down (StoreUnavailableError) with 503 temporarily_unavailable and Retry-After: 5', async () => {
      const refreshTokens = new MemoryRefreshTokenStore();
      refreshTokens.create = () => Promise.reject(new StoreUnavailableError('RedisRefreshTokenStore', 'timed out'));
      const app = await tokenApp({ refreshTokens });
      const res = await postToken(app, ALICE);
      expect(res.status).toBe(503);
      expectHeaders(res, { ...ERROR_HEADERS, 'Retry-After': '5' });
      expect(res.body).toEqual(tokenErrorBody('temporarily_unavailable', 'A shared state store is unreachable.'));
    });
  });

  describe('reading the form', () => {
    const withFront = async (front: express.RequestHandler) => {
      const app = express();
      app.use(front);
      app.use(
        tokenRouter({
          ...TOKEN_OPTIONS,
          ...(await seedStores()),
        }),
      );
      app.use(notFound(), errorHandler({ production: true, log: false }));
      return app;
    };

    it('takes the form a middleware in front already read, without body-parser’s private fields', async () => {
      const app = await withFront((req, _res, next) => {
        let text = '';
        req.setEncoding('utf8');
        req.on('data', (chunk: string) => {
          text += chunk;
        });
        req.on('end', () => {
          req.body = Object.fromEntries(new URLSearchParams(text));
          next();
        });
      });
      expect((await postToken(app, ALICE)).status).toBe(200);
    });

    it('reads the form itself when a parser in front set req.body without reading the stream', async () => {
      const app = await withFront((req, _res, next) => {
        // Express 4's parsers set `req.body = {}` even for a type they skip.
        req.body = {};
        next();
      });
      expect((await postToken(app, ALICE)).status).toBe(200);
    });

    it('refuses a body that a parser in front read as something other than a form', async () => {
      const app = await withFront((req, _res, next) => {
        req.resume();
        req.on('end', () => {
          req.body = Buffer.from('raw');
          next();
        });
      });
      const res = await postToken(app, ALICE);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(tokenErrorBody('invalid_request', 'The request body could not be read as a form.'));
    });
  });

  describe('in the conventions() preset', () => {
    it('is mounted by the tokenRouter key, after the body parsers', async () => {
      const app = express();
      app.use(
        conventions({
          tokenRouter: tokenRouter({
            ...TOKEN_OPTIONS,
            ...(await seedStores()),
          }),
        }),
      );
      app.use(notFound(), errorHandler({ production: true, log: false }));
      const res = await postToken(app, ALICE);
      expect(res.status).toBe(200);
      expectHeaders(res, { ...SUCCESS_HEADERS, 'X-Content-Type-Options': 'nosniff' });
      const error = await postToken(app, { ...ALICE, password: 'wrong' });
      expect(error.body).toEqual(tokenErrorBody('invalid_grant', 'The username or password is not correct.'));
    });

    it('is left out by default', async () => {
      const app = express();
      app.use(conventions());
      app.use(notFound(), errorHandler({ production: true, log: false }));
      expect((await postToken(app, ALICE)).status).toBe(404);
    });
  });

  describe('other methods', () => {
    it('answers GET with 405 and Allow: POST through notFound()', async () => {
      const app = await tokenApp();
      const res = await request(app).get('/v1/oauth2/token');
      expect(res.status).toBe(405);
      expectHeaders(res, { Allow: 'POST' });
    });
  });

  describe('on Express 4', () => {
    it('answers the password grant and its errors the same way', async () => {
      const app = express4();
      app.use(
        tokenRouter({
          ...TOKEN_OPTIONS,
          ...(await seedStores()),
        }),
      );
      app.use(errorHandler({ production: true, log: false }));
      const ok = await postToken(app as unknown as express.Express, ALICE);
      expect(ok.status).toBe(200);
      expectHeaders(ok, SUCCESS_HEADERS);
      const wrong = await postToken(app as unknown as express.Express, { ...ALICE, password: 'nope' });
      expect(wrong.status).toBe(400);
      expectHeaders(wrong, ERROR_HEADERS);
      expect(wrong.body).toEqual(tokenErrorBody('invalid_grant', 'The username or password is not correct.'));
    });
  });

  describe('mount path', () => {
    it('answers on a configured path only', async () => {
      const app = await tokenApp({ path: '/v2/oauth2/token' });
      const moved = await request(app).post('/v2/oauth2/token').type('form').send(ALICE);
      expect(moved.status).toBe(200);
      expect((await postToken(app, ALICE)).status).toBe(404);
    });
  });

  describe('options, checked at construction', () => {
    const base = { keys: KEYS, issuer: ISSUER, audience: AUDIENCE, users: new MemoryUserStore() };

    it.each([
      [{ keys: [] }, '`keys` must be a non-empty array'],
      [{ keys: [{ kid: 'k', algorithm: 'HS256', secret: 'short' }] }, '`keys[0].secret` must be at least 32 bytes long'],
      [{ keys: [{ kid: 'k', algorithm: 'none', secret: 'x' }] }, '`keys[0].algorithm` must be one of HS256, RS256, ES256'],
      [{ keys: [...KEYS, ...KEYS] }, '`keys[1].kid` must be unique among the keys'],
      [{ issuer: '' }, '`issuer` must be a non-empty string'],
      [{ audience: [] }, '`audience` must be a non-empty string or a non-empty array'],
      [{ users: {} }, '`users` must be a UserStore'],
      [{ accessTokenTtlSeconds: 0 }, '`accessTokenTtlSeconds` must be an integer from 1 to 86400'],
      [{ scopes: ['has space'] }, '`scopes` must be an array of RFC 6749 §3.3 scope tokens'],
      [{ passwordCost: 40 }, '`passwordCost` must be an integer from 4 to 31'],
      [
        { signInGuard: { maxFailuresPerUsernameAndAddress: 0 } },
        '`maxFailuresPerUsernameAndAddress` must be an integer at least 1',
      ],
      [{ bruteForce: false }, 'unsupported option `bruteForce`'],
      [{ realm: 'a"b' }, '`realm` must be printable ASCII without quotes'],
      [{ path: 'token' }, "`path` must be a path starting with '/'"],
      [{ expiresIn: 10 }, 'unsupported option `expiresIn`'],
    ])('refuses %j', (wrong, message) => {
      expect(() => tokenRouter({ ...base, ...wrong } as never)).toThrow(ConfigurationError);
      expect(() => tokenRouter({ ...base, ...wrong } as never)).toThrow(message);
    });

    it('refuses a public key as the signing key', async () => {
      const { generateKeyPairSync } = await import('node:crypto');
      const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      expect(() => tokenRouter({ ...base, keys: [{ kid: 'e', algorithm: 'ES256', publicKey }] })).toThrow(
        '`keys[0]` must be a key that can sign',
      );
    });

    it('catches app.use(tokenRouter) written for app.use(tokenRouter(...))', () => {
      const requestLike = { method: 'POST', headers: {}, on: () => undefined };
      expect(() => tokenRouter(requestLike as never)).toThrow('tokenRouter was used as a middleware; call it to get one');
    });
  });
});
