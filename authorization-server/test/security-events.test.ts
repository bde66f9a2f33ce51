import { generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Server } from 'node:http';
import express, { type Express, type Request } from 'express';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { errorHandler, notFound } from '../../src/errors/index.js';
import { EVENT_LINE_LIMIT_BYTES } from '../../src/events/bounded.js';
import { SECURITY_EVENTS_CHANNEL, type SecurityEvent } from '../../src/events/index.js';
import { MemoryRevokedFamilies } from '../../src/oauth2/index.js';
import { conventions } from '../../src/preset.js';
import { withoutEventScan } from '../../test/support/event-scan.js';
import { ALICE, AUDIENCE, basic, decodeJwt, ISSUER, KEYS, SCOPES, seedStores, TEST_COST } from '../../test/support/oauth2.js';
import { closeServer, listen } from '../../test/support/services.js';
import { MemoryUserStore, PasswordHasher, passwordSignIn, type TokenRouterOptions, tokenRouter } from '../src/index.js';
import { REVOCATION_PATH, TOKEN_PATH } from '../src/token-options.js';

// The token service's and the sign-in guard's decisions on the security
// channel (docs/observability.md, "Token service and sign-in"): each one
// event, with the fields the table lists, and never a secret.

const seen: SecurityEvent[] = [];
let events: SecurityEvent[] = [];
const listener = (message: unknown) => {
  seen.push(message as SecurityEvent);
  events.push(message as SecurityEvent);
};
/** Everything that must never appear in an event: passwords, client secrets, tokens, proofs. */
const secrets = new Set<string>([ALICE.password, 'demo-secret']);

const hasher = new PasswordHasher({ threads: 1, cost: TEST_COST });
const DEMO = basic('demo-client', 'demo-secret');
const WRONG = { ...ALICE, password: 'not-the-rabbit-hole' };
secrets.add(WRONG.password);

beforeAll(() => subscribe(SECURITY_EVENTS_CHANNEL, listener));
afterAll(async () => {
  unsubscribe(SECURITY_EVENTS_CHANNEL, listener);
  await hasher.close();
});
beforeEach(() => {
  events = [];
});

async function tokenService(options: Partial<TokenRouterOptions> = {}): Promise<Express> {
  const app = express();
  app.use(
    conventions({
      tokenRouter: tokenRouter({
        keys: KEYS,
        issuer: ISSUER,
        audience: AUDIENCE,
        scopes: SCOPES,
        passwordHasher: hasher,
        passwordCost: TEST_COST,
        revokedFamilies: new MemoryRevokedFamilies(),
        signInGuard: { maxFailuresPerUsernameAndAddress: 2 },
        ...(await seedStores()),
        ...options,
      }),
    }),
  );
  app.use(notFound(), errorHandler({ production: true, log: false }));
  return app;
}

async function post(app: Express, path: string, form: Record<string, string>, authorization = DEMO) {
  const res = await request(app).post(path).type('form').set('Authorization', authorization).send(form);
  for (const token of [res.body.access_token, res.body.refresh_token]) if (typeof token === 'string') secrets.add(token);
  return res;
}

/** What every event of a request carries. */
const fromRequest = (route: string) => ({
  datetime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
  method: 'POST',
  route,
  sourceIp: expect.any(String),
  requestId: expect.any(String),
  description: expect.any(String),
});
const fromToken = fromRequest(TOKEN_PATH);
/** The confidential client, and its device as a kind and an 8-character digest (never the id itself). */
const clientDevice = { clientId: 'demo-client', device: expect.stringMatching(/^client:[A-Za-z0-9_-]{8}$/) };

describe('the password grant and the sign-in guard', () => {
  it('publishes a wrong password as one authn_login_fail naming the username tried, the client and its device', async () => {
    const app = await tokenService();
    expect((await post(app, TOKEN_PATH, WRONG)).status).toBe(400);
    expect(events).toEqual([
      {
        ...fromToken,
        ...clientDevice,
        event: 'authn_login_fail',
        level: 'WARN',
        outcome: 'failure',
        rule: 'oauthInvalidGrant',
        status: 400,
        username: 'alice',
        durationMs: expect.any(Number),
        poolWaitMs: expect.any(Number),
      },
    ]);
  });

  it('publishes the failure that used up the allowance as authn_login_fail_max, then the refusal as authn_login_lock', async () => {
    const app = await tokenService();
    await post(app, TOKEN_PATH, WRONG);
    events = [];
    expect((await post(app, TOKEN_PATH, WRONG)).status).toBe(400);
    expect(events).toEqual([
      {
        ...fromToken,
        ...clientDevice,
        event: 'authn_login_fail_max',
        level: 'WARN',
        outcome: 'failure',
        rule: 'oauthInvalidGrant',
        status: 400,
        username: 'alice',
        reason: 'username_and_address',
        policy: { limit: 2, windowSeconds: 900 },
        durationMs: expect.any(Number),
        poolWaitMs: expect.any(Number),
      },
    ]);
    events = [];
    // The right password now: refused too, so the one success among the 429s tells the guesser nothing.
    const locked = await post(app, TOKEN_PATH, ALICE);
    expect(locked.status).toBe(429);
    const retryAfterSeconds = Number(locked.headers['retry-after']);
    expect(events).toEqual([
      {
        ...fromToken,
        ...clientDevice,
        event: 'authn_login_lock',
        level: 'WARN',
        outcome: 'failure',
        rule: 'tooManyLoginFailures',
        status: 429,
        username: 'alice',
        reason: 'username_and_address',
        policy: { limit: 2, windowSeconds: 900, retryAfterSeconds },
      },
    ]);
    expect(events[0]?.description).toBe(
      'Sign-in refused: too many failures for this username from this address, from a device not known for this username.',
    );
  });

  it('publishes a known device\u2019s used-up allowance as authn_login_fail_max (known_device), then checks its next attempts as an unknown device\u2019s, as that event says', async () => {
    const app = await tokenService();
    // A success makes the authenticated client a device known for alice, with its own allowance (2 here).
    expect((await post(app, TOKEN_PATH, ALICE)).status).toBe(200);
    events = [];
    expect((await post(app, TOKEN_PATH, WRONG)).status).toBe(400);
    expect(events.map((event) => [event.event, event.reason])).toEqual([['authn_login_fail', undefined]]);
    events = [];
    expect((await post(app, TOKEN_PATH, WRONG)).status).toBe(400);
    expect(events).toEqual([
      {
        ...fromToken,
        ...clientDevice,
        event: 'authn_login_fail_max',
        level: 'WARN',
        outcome: 'failure',
        rule: 'oauthInvalidGrant',
        status: 400,
        username: 'alice',
        reason: 'known_device',
        policy: { limit: 2, windowSeconds: 900 },
        durationMs: expect.any(Number),
        poolWaitMs: expect.any(Number),
      },
    ]);
    expect(events[0]?.description).toBe(
      'Sign-in failed and used up an allowance: too many failures from a device known for this username; ' +
        "the device is no longer known: its next attempts count as an unknown device's.",
    );
    // As it said: the device's failures never counted against this address, so its next attempts are
    // checked under the (username, address) pair's allowance, which then refuses them, naming that allowance.
    events = [];
    expect((await post(app, TOKEN_PATH, WRONG)).status).toBe(400);
    expect((await post(app, TOKEN_PATH, WRONG)).status).toBe(400);
    const locked = await post(app, TOKEN_PATH, ALICE);
    expect(locked.status).toBe(429);
    expect(events.map((event) => [event.event, event.reason, event.device])).toEqual([
      ['authn_login_fail', undefined, clientDevice.device],
      ['authn_login_fail_max', 'username_and_address', clientDevice.device],
      ['authn_login_lock', 'username_and_address', clientDevice.device],
    ]);
    expect(events[2]?.description).toBe(
      'Sign-in refused: too many failures for this username from this address, from a device not known for this username.',
    );
    // One device throughout: the digest the events name did not change when the device was forgotten.
    expect(new Set(events.map((event) => event.device)).size).toBe(1);
  });

  it('publishes a success as authn_login_success with its duration and pool wait, then authn_token_created with the jti', async () => {
    const app = await tokenService();
    const res = await post(app, TOKEN_PATH, ALICE);
    expect(res.status).toBe(200);
    const { payload } = decodeJwt(res.body.access_token);
    expect(events).toEqual([
      {
        ...fromToken,
        ...clientDevice,
        event: 'authn_login_success',
        level: 'INFO',
        outcome: 'success',
        // The username tried and the user id: a sign-in joins its failures and its tokens.
        username: 'alice',
        subject: 'u-1',
        durationMs: expect.any(Number),
        poolWaitMs: expect.any(Number),
      },
      {
        ...fromToken,
        event: 'authn_token_created',
        level: 'INFO',
        outcome: 'success',
        description: 'Tokens issued by the password grant.',
        subject: 'u-1',
        clientId: 'demo-client',
        jti: payload.jti,
      },
    ]);
    const [signIn, created] = events as [SecurityEvent, SecurityEvent];
    // One request, one id: the answer's, so the client can quote it.
    expect(created.requestId).toBe(signIn.requestId);
    expect(res.headers['request-id']).toBe(signIn.requestId);
    expect(signIn.durationMs).toBeGreaterThanOrEqual(signIn.poolWaitMs as number);
    expect(signIn.poolWaitMs).toBeGreaterThanOrEqual(0);
  });

  it('publishes a bad client secret as one authn_client_fail naming the client id tried as claimed, never as a client', async () => {
    const app = await tokenService();
    const wrongSecret = 'not-the-demo-secret';
    secrets.add(wrongSecret);
    expect((await post(app, TOKEN_PATH, ALICE, basic('demo-client', wrongSecret))).status).toBe(401);
    expect(events).toEqual([
      {
        ...fromToken,
        event: 'authn_client_fail',
        level: 'WARN',
        outcome: 'failure',
        rule: 'oauthInvalidClient',
        status: 401,
        claimedClientId: 'demo-client',
      },
    ]);
  });
});

describe('refresh tokens and revocation', () => {
  it('publishes a reused refresh token as CRITICAL authn_token_reuse, and its family revoked as authn_token_revoked', async () => {
    const app = await tokenService();
    const first = (await post(app, TOKEN_PATH, ALICE)).body.refresh_token as string;
    const rotated = await post(app, TOKEN_PATH, { grant_type: 'refresh_token', refresh_token: first });
    expect(rotated.status).toBe(200);
    expect(events.at(-1)).toEqual({
      ...fromToken,
      event: 'authn_token_created',
      level: 'INFO',
      outcome: 'success',
      description: 'Tokens issued by the refresh_token grant.',
      subject: 'u-1',
      clientId: 'demo-client',
      jti: decodeJwt(rotated.body.access_token).payload.jti,
    });
    events = [];
    expect((await post(app, TOKEN_PATH, { grant_type: 'refresh_token', refresh_token: first })).status).toBe(400);
    expect(events).toEqual([
      {
        ...fromToken,
        event: 'authn_token_revoked',
        level: 'INFO',
        outcome: 'success',
        description: 'The token family was revoked: one of its refresh tokens was used again.',
        subject: 'u-1',
        clientId: 'demo-client',
      },
      {
        ...fromToken,
        event: 'authn_token_reuse',
        level: 'CRITICAL',
        outcome: 'failure',
        rule: 'oauthInvalidGrant',
        status: 400,
        subject: 'u-1',
        clientId: 'demo-client',
      },
    ]);
  });

  it('publishes a refresh retried inside the grace as authn_token_grace_reuse with the rotation\u2019s jti, never authn_token_created', async () => {
    const app = await tokenService({ refreshGraceSeconds: 60 });
    const first = (await post(app, TOKEN_PATH, ALICE)).body.refresh_token as string;
    const rotated = await post(app, TOKEN_PATH, { grant_type: 'refresh_token', refresh_token: first });
    events = [];
    // The answer was lost; the client presents the same token again, inside the grace.
    const retried = await post(app, TOKEN_PATH, { grant_type: 'refresh_token', refresh_token: first });
    expect(retried.status).toBe(200);
    const jti = decodeJwt(rotated.body.access_token).payload.jti;
    expect(decodeJwt(retried.body.access_token).payload.jti).toBe(jti);
    expect(events).toEqual([
      {
        ...fromToken,
        event: 'authn_token_grace_reuse',
        level: 'WARN',
        outcome: 'success',
        description: 'A rotated refresh token was presented again inside the grace: its rotation was answered again.',
        subject: 'u-1',
        clientId: 'demo-client',
        jti,
      },
    ]);
  });

  it('publishes a revocation at the revocation endpoint as authn_token_revoked, an access token by its jti', async () => {
    const app = await tokenService();
    const signedIn = (await post(app, TOKEN_PATH, ALICE)).body;
    events = [];
    expect((await post(app, REVOCATION_PATH, { token: signedIn.refresh_token })).status).toBe(200);
    const revoked = {
      ...fromRequest(REVOCATION_PATH),
      event: 'authn_token_revoked',
      level: 'INFO',
      outcome: 'success',
      subject: 'u-1',
      clientId: 'demo-client',
    };
    expect(events).toEqual([revoked]);
    const other = (await post(app, TOKEN_PATH, ALICE)).body;
    events = [];
    expect((await post(app, REVOCATION_PATH, { token: other.access_token })).status).toBe(200);
    expect(events).toEqual([{ ...revoked, jti: decodeJwt(other.access_token).payload.jti }]);
    events = [];
    // Nothing was revoked (the token is unknown): nothing is published.
    expect((await post(app, REVOCATION_PATH, { token: 'an-unknown-refresh-token' })).status).toBe(200);
    expect(events).toEqual([]);
  });
});

describe('DPoP at the token endpoint', () => {
  let server: Server;
  let url: string;
  const key = (() => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return { privateKey: privateKey as KeyObject, jwk: publicKey.export({ format: 'jwk' }) };
  })();
  const proof = () =>
    jwt.sign({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), htm: 'POST', htu: `${url}${TOKEN_PATH}` }, key.privateKey, {
      algorithm: 'ES256',
      header: { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk } as jwt.JwtHeader,
    });

  beforeAll(async () => {
    const app = express();
    ({ server, url } = await listen(app));
    app.use(await tokenService({ issuer: url, dpop: true }));
  });
  afterAll(() => closeServer(server));

  it('publishes a replayed proof as one authn_proof_replay naming the key by a digest, never the proof', async () => {
    const once = proof();
    secrets.add(once);
    const send = () =>
      request(url)
        .post(TOKEN_PATH)
        .type('form')
        .set('DPoP', once)
        .send({ ...ALICE, client_id: 'public-app' });
    const first = await send();
    expect(first.status).toBe(200);
    secrets.add(first.body.access_token).add(first.body.refresh_token);
    expect(events.map((event) => [event.event, event.device])).toEqual([
      ['authn_login_success', expect.stringMatching(/^dpop-key:/)],
      ['authn_token_created', undefined],
    ]);
    events = [];
    expect((await send()).status).toBe(400);
    expect(events).toEqual([
      {
        ...fromToken,
        event: 'authn_proof_replay',
        level: 'WARN',
        outcome: 'failure',
        rule: 'oauthInvalidDpopProof',
        status: 400,
        clientId: 'public-app',
        device: expect.stringMatching(/^dpop-key:/),
      },
    ]);
    expect(events[0]?.device).toBe(
      seen.find((event) => event.event === 'authn_login_success' && event.clientId === 'public-app')?.device,
    );
  });
});

/** A request at a browser sign-in door, as passwordSignIn() reads it. */
const door = { ip: '203.0.113.7', socket: {}, headers: {}, method: 'POST', path: '/v1/sessions' } as unknown as Request;

describe('passwordSignIn() at another door', () => {
  it('publishes a success itself, and leaves a failure to the door\u2019s refusal (noted, not published)', async () => {
    const users = new MemoryUserStore();
    await users.add({ username: 'alice', subject: 'u-1', passwordHash: await hasher.hash(ALICE.password, TEST_COST) });
    const checkPassword = passwordSignIn({ users, passwordHasher: hasher, passwordCost: TEST_COST });
    const device = `cookie:${randomUUID()}`;
    secrets.add(device.slice('cookie:'.length));
    expect(await checkPassword({ ...door } as Request, 'Alice', ALICE.password, { device })).toBeDefined();
    expect(events).toEqual([
      {
        ...fromRequest('/v1/sessions'),
        sourceIp: '203.0.113.7',
        event: 'authn_login_success',
        level: 'INFO',
        outcome: 'success',
        description: 'Signed in with a password.',
        username: 'alice',
        subject: 'u-1',
        device: expect.stringMatching(/^cookie:[A-Za-z0-9_-]{8}$/),
        durationMs: expect.any(Number),
        poolWaitMs: expect.any(Number),
      },
    ]);
    events = [];
    expect(await checkPassword({ ...door } as Request, 'alice', WRONG.password, { device })).toBeUndefined();
    expect(events).toEqual([]);
  });
});

describe('when nobody listens', () => {
  it('measures nothing: the pool is given no callback, and the sign-in still answers', async () => {
    const users = new MemoryUserStore();
    await users.add({ username: 'alice', subject: 'u-1', passwordHash: await hasher.hash(ALICE.password, TEST_COST) });
    const verify = jest.spyOn(hasher, 'verify');
    const checkPassword = passwordSignIn({ users, passwordHasher: hasher, passwordCost: TEST_COST, signInGuard: false });
    try {
      expect(await checkPassword({ ...door } as Request, 'alice', ALICE.password)).toBeDefined();
      expect(verify.mock.calls.at(-1)?.[2]).toHaveProperty('onStarted');
      unsubscribe(SECURITY_EVENTS_CHANNEL, listener);
      // The suite's own scan listens in every test file (CONTRIBUTING.md, "Security events"): off for this check.
      await withoutEventScan(async () => {
        expect(await checkPassword({ ...door } as Request, 'alice', ALICE.password)).toBeDefined();
      });
      expect(verify.mock.calls.at(-1)?.[2]).not.toHaveProperty('onStarted');
    } finally {
      subscribe(SECURITY_EVENTS_CHANNEL, listener);
      verify.mockRestore();
    }
  });
});

describe('what no event carries', () => {
  it('holds no password, client secret, issued token, refresh token, device id or DPoP proof in any event seen', () => {
    expect(seen.length).toBeGreaterThan(10);
    const published = seen.map((event) => JSON.stringify(event));
    for (const secret of secrets) for (const line of published) expect(line).not.toContain(secret);
  });
});

describe('what a request sends, bounded', () => {
  // The worst a client can send through the token endpoint and the preset: a client id as long as
  // Node's header limit lets through, a 90 KB one in the form, a 12 KB path, C1 control and
  // line-separator characters in a username and in headers (a longer username is refused first).
  const HUGE_CLIENT_ID = `c${'x'.repeat(11 * 1024)}`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these control characters are what the test looks for.
  const UNSAFE_TEXT = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

  it(`keeps every line under ${EVENT_LINE_LIMIT_BYTES} bytes, with no control character, and names no claimed id as a client`, async () => {
    const app = await tokenService();
    const form = { ...ALICE, username: 'al\u0085i\u2028ce', password: WRONG.password };
    await request(app)
      .post(TOKEN_PATH)
      .type('form')
      .set('Authorization', basic(HUGE_CLIENT_ID, 'not-the-demo-secret'))
      .send(form);
    await request(app)
      .post(TOKEN_PATH)
      .type('form')
      .set('Authorization', DEMO)
      .set('User-Agent', `agent\u0085\u009b${'u'.repeat(8000)}`)
      .set('X-Request-Id', 'chosen-by-the-client')
      .send(form);
    await request(app)
      .post(`/v1/${'p'.repeat(12 * 1024)}`)
      .type('json')
      .send('{"not json');
    // A 90 KB client_id in the form (a public client's way to name itself): refused as a client, and named bounded.
    const huge = await request(app)
      .post(TOKEN_PATH)
      .type('form')
      .send({ ...form, client_id: `c${'x'.repeat(90 * 1024)}` });
    expect([huge.status, huge.body.error]).toEqual([400, 'invalid_client']);
    expect(events.map((event) => [event.event, event.rule])).toEqual([
      ['authn_client_fail', 'oauthInvalidClient'],
      ['authn_login_fail', 'oauthInvalidGrant'],
      ['input_validation_fail', expect.any(String)],
      ['authn_client_fail', 'oauthInvalidClientRequest'],
    ]);
    for (const event of events) {
      expect(Buffer.byteLength(JSON.stringify(event))).toBeLessThan(EVENT_LINE_LIMIT_BYTES);
      for (const value of Object.values(event)) if (typeof value === 'string') expect(value).not.toMatch(UNSAFE_TEXT);
    }
    const [clientFail, loginFail, badPath, hugeForm] = events as [SecurityEvent, SecurityEvent, SecurityEvent, SecurityEvent];
    expect(hugeForm.claimedClientId).toBe(`c${'x'.repeat(255)}`);
    expect(hugeForm).not.toHaveProperty('clientId');
    // Anyone can send a client's id: it is claimed, never the client's.
    expect(clientFail.claimedClientId).toBe(HUGE_CLIENT_ID.slice(0, 256));
    expect(clientFail).not.toHaveProperty('clientId');
    expect(loginFail.username).toBe('al\ufffdi\ufffdce');
    // The header's UTF-8 bytes read as Latin-1 (Node's way): C2 85 is "Â" and the C1 character NEL.
    expect(loginFail.userAgent).toBe(`agent\u00c2\ufffd\u00c2\ufffd${'u'.repeat(247)}`);
    // No proxy is trusted here: the client's own X-Request-Id is not the request's id.
    expect(loginFail.requestId).not.toBe('chosen-by-the-client');
    expect(badPath.route).toHaveLength(256);
  });
});
