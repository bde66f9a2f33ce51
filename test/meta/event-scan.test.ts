import express from 'express';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { errorHandler } from '../../src/errors/index.js';
import { publishSecurityEvent, securityEventsWanted } from '../../src/events/index.js';
import { crossSiteProtection } from '../../src/security/index.js';
import { eventsScanned, scanLoggedLines, takeViolations, withoutEventScan } from '../support/event-scan.js';
import { secretsIn } from '../support/secret-scan.js';

/**
 * The whole-suite scan of security events (test/support/event-scan.setup.ts)
 * sees the events of the test process and of the reference servers, and
 * finds what it must: each test plants a secret and takes the finding back.
 */

const CLEAN = {
  datetime: '2026-01-01T00:00:00.000Z',
  event: 'authn_login_fail',
  description: 'The username or password is wrong.',
  outcome: 'failure',
  rule: 'oauthInvalidGrant',
  status: 400,
  method: 'POST',
  route: '/v1/oauth2/device-authorization-requests',
  sourceIp: '::ffff:127.0.0.1',
  subject: 'alice',
  clientId: 'demo-client',
  device: 'cookie:Zm9vYmFyYmF6cXV4cXV1eA',
  jti: 'Qk4xZ0p2c2R5VnB3bFh0N2ZpQ2xOUVp1cWJmWEd6bHI',
  policy: { limit: 5, windowSeconds: 900, delaySeconds: 2, retryAfterSeconds: 30 },
  durationMs: 120,
} as const;

const ACCESS_TOKEN = jwt.sign({ sub: 'alice' }, 'a-signing-key-for-this-test-only', { expiresIn: 60 });
const REFRESH_TOKEN = 'r4Vq8d0uXb-Qm3HjZk_2yTfP9nLwCs7eGaKoE1iUxYv';

describe('secretsIn(): what no event may carry', () => {
  it('finds nothing in an event of the shape with no secret (a long jti is allowed)', () => {
    expect(secretsIn(CLEAN)).toEqual([]);
  });

  it.each([
    ['the demo password', { description: 'tried wonderland-rabbit-hole' }, 'description: a password or secret of the suite'],
    ['an access token', { route: `/v1/me?access_token=${ACCESS_TOKEN}` }, 'route: a token or proof (JWS-shaped)'],
    ['a refresh token', { sessionId: REFRESH_TOKEN }, 'sessionId: a random run of 32 base64url characters or more'],
    ['a field outside the shape', { authorization: 'Basic x' }, 'authorization: not a field of SecurityEvent'],
    ['a policy field outside the shape', { policy: { secret: 1 } }, 'policy.secret: not a field of SecurityPolicy'],
    ['an object where a string goes', { subject: { password: 'p' } }, 'subject: not a string or a number (object)'],
  ])('finds %s', (_what, planted, finding) => {
    expect(secretsIn({ ...CLEAN, ...planted }).join('\n')).toContain(finding);
  });
});

describe('the live scan', () => {
  it('is subscribed in every test file: the refusals of an app are scanned', async () => {
    expect(securityEventsWanted()).toBe(true);
    const app = express();
    app.use(crossSiteProtection({ trustedOrigins: ['https://app.example.com'] }));
    app.post('/v1/sessions', (_req, res) => res.status(201).json({}));
    app.use(errorHandler({ production: true, log: false }));
    const before = eventsScanned();
    const res = await request(app).post('/v1/sessions').set('Sec-Fetch-Site', 'cross-site').set('Origin', 'https://evil.example');
    expect(res.status).toBe(403);
    expect(eventsScanned()).toBe(before + 1);
    expect(takeViolations()).toEqual([]);
  });

  it('keeps a planted token for the end of the file, naming the event', () => {
    publishSecurityEvent(undefined, {
      event: 'authn_token_created',
      description: ACCESS_TOKEN,
      outcome: 'success',
    });
    const [violation, ...more] = takeViolations();
    expect(more).toEqual([]);
    expect(violation?.where).toBe('published in the test process');
    expect(violation?.findings).toContain('description: a token or proof (JWS-shaped)');
    expect(violation?.event).toMatchObject({ event: 'authn_token_created' });
  });

  it('scans the JSON lines a reference server logs, a line split across chunks included', () => {
    const line = JSON.stringify({ ...CLEAN, sessionId: REFRESH_TOKEN });
    const rest = scanLoggedLines(`reference server listening\n${line.slice(0, 20)}`, 'logged by main.js');
    expect(takeViolations()).toEqual([]);
    expect(scanLoggedLines(`${rest}${line.slice(20)}\n`, 'logged by main.js')).toBe('');
    expect(takeViolations().map((v) => [v.where, v.findings.length])).toEqual([['logged by main.js', 1]]);
  });

  it('can be set aside for a test that needs a channel nobody listens to', async () => {
    expect(await withoutEventScan(() => securityEventsWanted())).toBe(false);
    expect(securityEventsWanted()).toBe(true);
  });
});
