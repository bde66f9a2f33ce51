import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import express from 'express';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { errorHandler } from '../../src/errors/index.js';
import { publishSecurityEvent, securityEventsWanted } from '../../src/events/index.js';
import { crossSiteProtection } from '../../src/security/index.js';
import { eventsScanned, scanLoggedLines, takeViolations, withoutEventScan } from '../support/event-scan.js';
import { secretsIn } from '../support/secret-scan.js';
import { typedSecrets, typedSecretsIn } from '../support/typed-secrets.js';

const ROOT = join(__dirname, '..', '..');

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
    ['the demo password', { description: 'tried wonderland-rabbit-hole' }, 'description: a password or secret the suite typed'],
    ['a wrong password the suite types', { description: 'tried not-the-password' }, '("not-the-password")'],
    ['a common word typed as a password, as the subject', { subject: 'guess' }, 'subject: a password the suite typed ("guess")'],
    ['an access token', { route: `/v1/me?access_token=${ACCESS_TOKEN}` }, 'route: a token or proof (JWS-shaped)'],
    ['a refresh token', { sessionId: REFRESH_TOKEN }, 'sessionId: a random run of 32 base64url characters or more'],
    ['a field outside the shape', { authorization: 'Basic x' }, 'authorization: not a field of SecurityEvent'],
    ['a policy field outside the shape', { policy: { secret: 1 } }, 'policy.secret: not a field of SecurityPolicy'],
    ['an object where a string goes', { subject: { password: 'p' } }, 'subject: not a string or a number (object)'],
  ])('finds %s', (_what, planted, finding) => {
    expect(secretsIn({ ...CLEAN, ...planted }).join('\n')).toContain(finding);
  });
});

describe('the passwords the suite types, right or wrong', () => {
  it('are read from the test sources: each wrong one the sign-in tests send is known', () => {
    expect(typedSecrets()).toEqual(
      expect.arrayContaining(['not-the-password', 'guess', 'wrong', 'not-the-rabbit-hole', 'made-up']),
    );
    expect(typedSecretsIn("const WRONG_PASSWORD = 'open-sesame';\nsend({ username: 'a', password: 'swordfish' })")).toEqual([
      'open-sesame',
      'swordfish',
    ]);
  });

  it('are each found in the planted event of a leak: in the subject, and the distinctive ones in the description', () => {
    const planted = {
      ...CLEAN,
      description: 'tried not-the-password, guess, wrong and hunter2',
      subject: 'not-the-password guess wrong hunter2',
    };
    const findings = secretsIn(planted).join('\n');
    const inSubject = secretsIn({ ...CLEAN, subject: planted.subject }).join('\n');
    for (const password of ['not-the-password', 'guess', 'wrong', 'hunter2']) expect(inSubject).toContain(`("${password}")`);
    expect(findings).toContain('description: a password or secret the suite typed ("not-the-password")');
    expect(findings).toContain('description: a password or secret the suite typed ("hunter2")');
    // A sentence's own words are not a finding: "wrong" is a word of the product's descriptions.
    expect(secretsIn({ ...CLEAN, description: 'The username or password is wrong.' })).toEqual([]);
  });

  it('fail the file that published one, though each of its tests passed', () => {
    const library = (require('../../jest.config.cjs') as { projects: Record<string, unknown>[] }).projects[0];
    const config = { ...library, rootDir: ROOT, roots: ['<rootDir>/test/fixtures/event-scan'], testMatch: ['**/*.fixture.ts'] };
    const run = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', JSON.stringify(config), '--ci'],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, FORCE_COLOR: '0' },
      },
    );
    expect(run.status).toBe(1);
    // Its one test passed; the scan failed the file after it.
    expect(run.stderr).toMatch(/Tests: +1 passed, 1 total/);
    expect(run.stderr).toMatch(/Test Suites: +1 failed, 1 total/);
    expect(run.stderr).toContain('1 security event(s) carry what no event may');
    expect(run.stderr).toContain('subject: a password the suite typed ("guess")');
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
