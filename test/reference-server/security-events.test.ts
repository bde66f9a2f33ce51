import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import type { SecurityEvent } from '../../src/index.js';
import { decodeJwt } from '../support/oauth2.js';
import { DEMO, demoAccessToken, exactId, signIn } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * The reference server's security decisions, seen on its
 * `express-api-conventions:security` channel while it is driven over HTTP
 * (docs/observability.md). The channel is the server process's own: a
 * subscriber preloaded into it (test/support/security-event-recorder.cjs)
 * writes each event as a JSON line, read here after each request.
 */

const RECORDER = join(__dirname, '..', 'support', 'security-event-recorder.cjs');
const TOKEN_SECRET = 'pinned-token-secret-0123456789abcdef';
const RATE_LIMIT = 40;
const LOOPBACK = expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/);
const DEMO_FORM = { username: DEMO.username, password: DEMO.password };
const DEMO_BASIC = `Basic ${Buffer.from(`${DEMO.clientId}:${DEMO.clientSecret}`).toString('base64')}`;

/** A reference server with the recorder preloaded, and the events it published, read back request by request. */
function recordedServer(env: Record<string, string>) {
  let server: RunningProcess | undefined;
  let dir = '';
  let file = '';
  let seen = 0;
  const recorded = {
    get url(): string {
      if (!server) throw new Error('the server has not started');
      return server.url;
    },
    async start(): Promise<void> {
      dir = mkdtempSync(join(tmpdir(), 'security-events-'));
      file = join(dir, 'events.jsonl');
      server = await startServer({ NODE_OPTIONS: `--require ${RECORDER}`, SECURITY_EVENTS_FILE: file, TOKEN_SECRET, ...env });
    },
    async stop(): Promise<void> {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
    /** The events published since the last call. */
    newEvents(): SecurityEvent[] {
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        // Nothing published yet: the recorder creates the file on the first event.
      }
      const all = text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as SecurityEvent);
      const fresh = all.slice(seen);
      seen = all.length;
      return fresh;
    },
    /** The one event the last request published. */
    theEvent(): SecurityEvent {
      const events = recorded.newEvents();
      expect(events).toHaveLength(1);
      return events[0] as SecurityEvent;
    },
  };
  beforeAll(() => recorded.start());
  afterAll(() => recorded.stop());
  beforeEach(() => {
    recorded.newEvents();
  });
  return recorded;
}

describe('reference server: security events over HTTP', () => {
  const server = recordedServer({ RATE_LIMIT: String(RATE_LIMIT) });
  const { newEvents, theEvent } = server;

  it('a bad bearer token at GET /v1/me: authn_token_invalid', async () => {
    const res = await request(server.url).get('/v1/me').set('Authorization', 'Bearer not.a.token');
    expect(res.status).toBe(401);
    const event = theEvent();
    expect(event).toMatchObject({
      event: 'authn_token_invalid',
      level: 'WARN',
      outcome: 'failure',
      rule: 'invalidToken',
      status: 401,
      method: 'GET',
      route: '/v1/me',
      sourceIp: LOOPBACK,
    });
    expect(event.subject).toBeUndefined();
  });

  it('an expired token at GET /v1/me: authn_token_expired', async () => {
    const issued = await demoAccessToken(server.url);
    newEvents();
    const { header, payload } = decodeJwt(issued);
    const now = Math.floor(Date.now() / 1000);
    const expired = jwt.sign({ ...payload, iat: now - 120, exp: now - 60 }, TOKEN_SECRET, {
      algorithm: 'HS256',
      header: header as unknown as jwt.JwtHeader,
    });
    const res = await request(server.url).get('/v1/me').set('Authorization', `Bearer ${expired}`);
    expect(res.status).toBe(401);
    expect(res.body.error_description).toBe('The access token expired.');
    expect(theEvent()).toMatchObject({
      event: 'authn_token_expired',
      level: 'INFO',
      outcome: 'failure',
      rule: 'invalidToken',
      status: 401,
      method: 'GET',
      route: '/v1/me',
      sourceIp: LOOPBACK,
    });
  });

  it('a session’s write without its CSRF token: malicious_csrf', async () => {
    const session = await signIn(server.url);
    newEvents();
    const res = await request(server.url).delete('/v1/sessions/current').set('Cookie', session.cookie);
    expect(res.status).toBe(403);
    expect(theEvent()).toMatchObject({
      event: 'malicious_csrf',
      level: 'WARN',
      outcome: 'failure',
      rule: 'csrfTokenInvalid',
      status: 403,
      method: 'DELETE',
      route: '/v1/sessions/current',
      sourceIp: LOOPBACK,
    });
  });

  it('a cross-site write: malicious_cross_site', async () => {
    const res = await request(server.url)
      .post('/v1/users')
      .set({ 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' })
      .send({ name: 'x' });
    expect(res.status).toBe(403);
    expect(theEvent()).toMatchObject({
      event: 'malicious_cross_site',
      level: 'WARN',
      outcome: 'failure',
      rule: 'crossSiteRequestRefused',
      status: 403,
      method: 'POST',
      route: '/v1/users',
      sourceIp: LOOPBACK,
    });
  });

  it('a preflight from an origin not allowed: malicious_cors', async () => {
    const res = await request(server.url)
      .options('/v1/users')
      .set({ Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' });
    expect(res.status).toBe(403);
    expect(theEvent()).toMatchObject({
      event: 'malicious_cors',
      level: 'CRITICAL',
      outcome: 'failure',
      rule: 'corsOriginRefused',
      status: 403,
      method: 'OPTIONS',
      route: '/v1/users',
      sourceIp: LOOPBACK,
    });
  });

  it('a DPoP proof replayed at GET /v1/me: authn_proof_replay, naming the proof by its jti', async () => {
    const metadata = (await request(server.url).get('/.well-known/oauth-authorization-server')).body as {
      issuer: string;
      token_endpoint: string;
    };
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const proof = (claims: Record<string, unknown>) =>
      jwt.sign({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims }, privateKey, {
        algorithm: 'ES256',
        header: { alg: 'ES256', typ: 'dpop+jwt', jwk } as jwt.JwtHeader,
      });
    const issued = await request(server.url)
      .post('/v1/oauth2/token')
      .type('form')
      .set({ Authorization: DEMO_BASIC, DPoP: proof({ htm: 'POST', htu: metadata.token_endpoint }) })
      .send({ grant_type: 'password', username: DEMO.username, password: DEMO.password });
    expect(issued.body.token_type).toBe('DPoP');
    const token = issued.body.access_token as string;
    const jti = `proof-${randomUUID()}`;
    const once = proof({
      jti,
      htm: 'GET',
      htu: `${new URL(metadata.issuer).origin}/v1/me`,
      ath: createHash('sha256').update(token).digest('base64url'),
    });
    const me = () =>
      request(server.url)
        .get('/v1/me')
        .set({ Authorization: `DPoP ${token}`, DPoP: once });
    expect((await me()).status).toBe(200);
    newEvents();
    expect((await me()).status).toBe(401);
    expect(theEvent()).toMatchObject({
      event: 'authn_proof_replay',
      level: 'WARN',
      outcome: 'failure',
      rule: 'invalidDpopProof',
      status: 401,
      method: 'GET',
      route: '/v1/me',
      sourceIp: LOOPBACK,
      subject: decodeJwt(token).payload.sub,
      clientId: DEMO.clientId,
      jti,
    });
  });

  // Last: it spends the address's quota.
  it('a caller over its limit: excess_rate_limit_exceeded, with the policy that refused', async () => {
    let res = await request(server.url).get('/v1/users?limit=1');
    for (let i = 0; i <= RATE_LIMIT && res.status !== 429; i++) res = await request(server.url).get('/v1/users?limit=1');
    expect(res.status).toBe(429);
    expect(theEvent()).toMatchObject({
      event: 'excess_rate_limit_exceeded',
      level: 'WARN',
      outcome: 'failure',
      rule: 'tooManyRequests',
      status: 429,
      method: 'GET',
      route: '/v1/users',
      sourceIp: LOOPBACK,
      policy: {
        identity: 'address',
        limit: RATE_LIMIT,
        windowSeconds: 60,
        retryAfterSeconds: Number(res.headers['retry-after']),
      },
    });
  });
});

const TOKEN_PATH = '/v1/oauth2/token';
const XHR = { 'X-Requested-With': 'XMLHttpRequest' };
/** What the sign-in events of the demo application at the token endpoint carry. */
const DEMO_CLIENT_DEVICE = { clientId: DEMO.clientId, device: expect.stringMatching(/^client:[A-Za-z0-9_-]{8}$/) };
const TIMES = { durationMs: expect.any(Number), poolWaitMs: expect.any(Number) };
/** The time and description every event has. */
const STAMPED = {
  datetime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
  description: expect.any(String),
};
const fromRequest = (method: string, route: string) => ({
  ...STAMPED,
  method,
  route,
  sourceIp: LOOPBACK,
  requestId: expect.any(String),
});

/** The password grant of the demo application, as a form with its Basic credentials. */
const passwordGrant = (url: string, password: string = DEMO.password) =>
  request(url)
    .post(TOKEN_PATH)
    .type('form')
    .set('Authorization', DEMO_BASIC)
    .send({ grant_type: 'password', username: DEMO.username, password });

describe('reference server: sign-in, token and session events over HTTP', () => {
  // No grace for a refresh token used again; a limit no test reaches.
  const server = recordedServer({ RATE_LIMIT: '1000', REFRESH_GRACE: '0' });
  const { newEvents } = server;
  /** The public id of the session a cookie names, as GET /v1/sessions lists it (marked current). */
  const listedId = async (cookie: string): Promise<string | undefined> => {
    const listed = await request(server.url).get('/v1/sessions').set('Cookie', cookie).set(XHR);
    return (listed.body.sessions as { id: string; current: boolean }[]).find((each) => each.current)?.id;
  };

  it('a wrong password at the token endpoint: one authn_login_fail naming the username, the client and its device', async () => {
    const res = await passwordGrant(server.url, 'not-the-rabbit-hole');
    expect(res.status).toBe(400);
    expect(newEvents()).toEqual([
      {
        ...fromRequest('POST', TOKEN_PATH),
        ...DEMO_CLIENT_DEVICE,
        ...TIMES,
        event: 'authn_login_fail',
        level: 'WARN',
        outcome: 'failure',
        rule: 'oauthInvalidGrant',
        status: 400,
        username: DEMO.username,
      },
    ]);
  });

  it('a wrong password at the browser door POST /v1/sessions: one authn_login_fail with the 401', async () => {
    const res = await request(server.url)
      .post('/v1/sessions')
      .type('form')
      .send({ username: DEMO.username, password: 'not-the-rabbit-hole' });
    expect(res.status).toBe(401);
    expect(newEvents()).toEqual([
      {
        ...fromRequest('POST', '/v1/sessions'),
        ...TIMES,
        device: expect.stringMatching(/^cookie:[A-Za-z0-9_-]{8}$/),
        event: 'authn_login_fail',
        level: 'WARN',
        outcome: 'failure',
        rule: 'unauthenticated',
        status: 401,
        username: DEMO.username,
      },
    ]);
  });

  it('a sign-in at the token endpoint: authn_login_success with its times, then authn_token_created with the token’s jti', async () => {
    const res = await passwordGrant(server.url);
    expect(res.status).toBe(200);
    const { payload } = decodeJwt(res.body.access_token);
    const events = newEvents();
    expect(events).toEqual([
      {
        ...fromRequest('POST', TOKEN_PATH),
        ...DEMO_CLIENT_DEVICE,
        ...TIMES,
        event: 'authn_login_success',
        level: 'INFO',
        outcome: 'success',
        username: DEMO.username,
        subject: payload.sub,
      },
      {
        ...fromRequest('POST', TOKEN_PATH),
        event: 'authn_token_created',
        level: 'INFO',
        outcome: 'success',
        description: 'Tokens issued by the password grant.',
        subject: payload.sub,
        clientId: DEMO.clientId,
        jti: payload.jti,
      },
    ]);
    const [signedIn] = events as [SecurityEvent];
    expect(signedIn.poolWaitMs).toBeGreaterThanOrEqual(0);
    expect(signedIn.durationMs).toBeGreaterThanOrEqual(signedIn.poolWaitMs as number);
  });

  it('a refresh token used again past the grace: its family’s authn_token_revoked, and CRITICAL authn_token_reuse', async () => {
    const signedIn = await passwordGrant(server.url);
    const subject = decodeJwt(signedIn.body.access_token).payload.sub;
    const refresh = () =>
      request(server.url)
        .post(TOKEN_PATH)
        .type('form')
        .set('Authorization', DEMO_BASIC)
        .send({ grant_type: 'refresh_token', refresh_token: signedIn.body.refresh_token });
    expect((await refresh()).status).toBe(200);
    newEvents();
    const reused = await refresh();
    expect(reused.status).toBe(400);
    expect(newEvents()).toEqual([
      {
        ...fromRequest('POST', TOKEN_PATH),
        event: 'authn_token_revoked',
        level: 'INFO',
        outcome: 'success',
        description: 'The token family was revoked: one of its refresh tokens was used again.',
        subject,
        clientId: DEMO.clientId,
      },
      {
        ...fromRequest('POST', TOKEN_PATH),
        event: 'authn_token_reuse',
        level: 'CRITICAL',
        outcome: 'failure',
        rule: 'oauthInvalidGrant',
        status: 400,
        subject,
        clientId: DEMO.clientId,
      },
    ]);
  });

  it('a revocation at the revocation endpoint: authn_token_revoked, an access token named by its jti', async () => {
    const signedIn = await passwordGrant(server.url);
    const { payload } = decodeJwt(signedIn.body.access_token);
    newEvents();
    const revoked = await request(server.url)
      .post('/v1/oauth2/revocations')
      .type('form')
      .set('Authorization', DEMO_BASIC)
      .send({ token: signedIn.body.access_token });
    expect(revoked.status).toBe(200);
    expect(newEvents()).toEqual([
      {
        ...fromRequest('POST', '/v1/oauth2/revocations'),
        event: 'authn_token_revoked',
        level: 'INFO',
        outcome: 'success',
        description: 'An access token was revoked, and its token family with it.',
        subject: payload.sub,
        clientId: DEMO.clientId,
        jti: payload.jti,
      },
    ]);
  });

  it('sessions: session_created with the id the list shows, session_expired by another session and by sign-out, then session_use_after_expire', async () => {
    const signingIn = await request(server.url).post('/v1/sessions').type('form').send(DEMO_FORM);
    expect(signingIn.status).toBe(201);
    const laptop = {
      cookie: ((signingIn.headers['set-cookie'] as unknown as string[])[0] ?? '').split(';')[0] ?? '',
      csrfToken: signingIn.body.csrfToken as string,
    };
    const created = newEvents();
    const laptopId = await listedId(laptop.cookie);
    expect(laptopId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    // The user's 64-bit id, exactly (JSON.parse would round it).
    const subject = exactId((await request(server.url).get('/v1/sessions/current').set('Cookie', laptop.cookie).set(XHR)).text);
    expect(created).toEqual([
      {
        ...fromRequest('POST', '/v1/sessions'),
        ...TIMES,
        device: expect.stringMatching(/^cookie:[A-Za-z0-9_-]{8}$/),
        event: 'authn_login_success',
        level: 'INFO',
        outcome: 'success',
        description: 'Signed in with a password.',
        username: DEMO.username,
        subject,
      },
      {
        ...fromRequest('POST', '/v1/sessions'),
        event: 'session_created',
        level: 'INFO',
        outcome: 'success',
        subject,
        sessionId: laptopId,
      },
    ]);
    // One request, one id; the sign-in's user id is the session's: a sign-in joins its session.
    expect(created[1]?.requestId).toBe(created[0]?.requestId);
    expect(created[1]?.subject).toBe(created[0]?.subject);

    // Ended from another session of the same user.
    const phone = await signIn(server.url);
    newEvents();
    const ended = await request(server.url)
      .delete(`/v1/sessions/${laptopId}`)
      .set('Cookie', phone.cookie)
      .set('CSRF-Token', phone.csrfToken);
    expect(ended.status).toBe(204);
    expect(newEvents()).toEqual([
      {
        ...fromRequest('DELETE', '/v1/sessions/:id'),
        event: 'session_expired',
        level: 'INFO',
        outcome: 'success',
        description: 'A session was ended by its user.',
        reason: 'revoked',
        subject,
        sessionId: laptopId,
      },
    ]);

    // The ended cookie, presented again: the sessions name the session it was (whatever the route
    // does next); the route's refusal of the request is that same decision, so no second event.
    const stale = await request(server.url).get('/v1/sessions/current').set('Cookie', laptop.cookie).set(XHR);
    expect(stale.status).toBe(401);
    expect(newEvents()).toEqual([
      {
        ...fromRequest('GET', '/v1/sessions/current'),
        event: 'session_use_after_expire',
        level: 'CRITICAL',
        outcome: 'failure',
        description: 'The cookie of a session that has ended or expired was presented.',
        rule: 'unauthenticated',
        subject,
        sessionId: laptopId,
      },
    ]);

    // Sign-out.
    const phoneId = await listedId(phone.cookie);
    newEvents();
    const signedOut = await request(server.url)
      .delete('/v1/sessions/current')
      .set('Cookie', phone.cookie)
      .set('CSRF-Token', phone.csrfToken);
    expect(signedOut.status).toBe(204);
    expect(newEvents()).toEqual([
      {
        ...fromRequest('DELETE', '/v1/sessions/current'),
        event: 'session_expired',
        level: 'INFO',
        outcome: 'success',
        description: 'A session was signed out.',
        reason: 'logout',
        subject,
        sessionId: phoneId,
      },
    ]);
  });
});

describe('reference server: the sign-in guard’s lock-out over HTTP', () => {
  // Its own server: the guard's counts for alice from this address start at zero.
  const server = recordedServer({ RATE_LIMIT: '1000' });
  const { newEvents } = server;
  const MAX_FAILURES = 10;

  it('wrong passwords: authn_login_fail, the one that uses up the allowance authn_login_fail_max, then authn_login_lock with its 429 and policy', async () => {
    const failure = {
      ...fromRequest('POST', TOKEN_PATH),
      ...DEMO_CLIENT_DEVICE,
      ...TIMES,
      level: 'WARN',
      outcome: 'failure',
      rule: 'oauthInvalidGrant',
      status: 400,
      username: DEMO.username,
    };
    for (let i = 1; i < MAX_FAILURES; i++) {
      expect((await passwordGrant(server.url, 'not-the-rabbit-hole')).status).toBe(400);
      expect(newEvents()).toEqual([{ ...failure, event: 'authn_login_fail' }]);
    }
    expect((await passwordGrant(server.url, 'not-the-rabbit-hole')).status).toBe(400);
    const policy = { limit: MAX_FAILURES, windowSeconds: 900 };
    expect(newEvents()).toEqual([{ ...failure, event: 'authn_login_fail_max', reason: 'username_and_address', policy }]);
    // The right password now: refused too, so the one success among the 429s tells the guesser nothing.
    const locked = await passwordGrant(server.url);
    expect(locked.status).toBe(429);
    expect(newEvents()).toEqual([
      {
        ...fromRequest('POST', TOKEN_PATH),
        ...DEMO_CLIENT_DEVICE,
        event: 'authn_login_lock',
        level: 'WARN',
        outcome: 'failure',
        rule: 'tooManyLoginFailures',
        status: 429,
        username: DEMO.username,
        reason: 'username_and_address',
        policy: { ...policy, retryAfterSeconds: Number(locked.headers['retry-after']) },
      },
    ]);
  });
});
