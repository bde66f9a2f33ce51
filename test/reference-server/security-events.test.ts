import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import type { SecurityEvent } from '../../src/index.js';
import { decodeJwt } from '../support/oauth2.js';
import { DEMO, demoAccessToken, signIn } from './client.js';
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
const DEMO_BASIC = `Basic ${Buffer.from(`${DEMO.clientId}:${DEMO.clientSecret}`).toString('base64')}`;

describe('reference server: security events over HTTP', () => {
  let server: RunningProcess;
  let dir: string;
  let file: string;
  let seen = 0;

  /** The events published since the last call. */
  const newEvents = (): SecurityEvent[] => {
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
  };

  /** The one event the last request published. */
  const theEvent = (): SecurityEvent => {
    const events = newEvents();
    expect(events).toHaveLength(1);
    return events[0] as SecurityEvent;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'security-events-'));
    file = join(dir, 'events.jsonl');
    server = await startServer({
      NODE_OPTIONS: `--require ${RECORDER}`,
      SECURITY_EVENTS_FILE: file,
      TOKEN_SECRET,
      RATE_LIMIT: String(RATE_LIMIT),
    });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    newEvents();
  });

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
