import { createHash, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { apiError, errorHandler, notFound } from '../src/errors/index.js';
import * as refusalEvents from '../src/errors/refusal-events.js';
import * as securityEvents from '../src/events/security-events.js';
import { SECURITY_EVENTS_CHANNEL, type SecurityEvent } from '../src/index.js';
import { dpopAuth, MemoryRevokedFamilies, requireScope } from '../src/oauth2/index.js';
import { conventions } from '../src/preset.js';
import { answerParserErrors, csrfTokens } from '../src/security/index.js';
import { withoutEventScan } from './support/event-scan.js';
import { AUDIENCE, ISSUER, KEYS, SECRET } from './support/oauth2.js';
import { rawExchange } from './support/raw-http.js';
import { closeServer, listen } from './support/services.js';

/**
 * Every refusal of the preset and of the library's middlewares is one event
 * on `express-api-conventions:security` (docs/observability.md), published
 * once, with what the refusing middleware knows; nothing is built when
 * nobody listens.
 */

const ALLOWED = 'https://app.example.com';
const LOOPBACK = expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/);

let events: SecurityEvent[] = [];
const record = (message: unknown) => {
  events.push(message as SecurityEvent);
};
beforeEach(() => {
  events = [];
  subscribe(SECURITY_EVENTS_CHANNEL, record);
});
afterEach(() => {
  unsubscribe(SECURITY_EVENTS_CHANNEL, record);
});

/** The one event the request published: a refusal is published exactly once. */
const theEvent = (): SecurityEvent => {
  expect(events).toHaveLength(1);
  return events[0] as SecurityEvent;
};

const now = () => Math.floor(Date.now() / 1000);

/** An access token of the test keys, with any claim overridden. */
const token = (claims: Record<string, unknown> = {}): string =>
  jwt.sign(
    {
      iss: ISSUER,
      aud: AUDIENCE,
      sub: 'u-1',
      client_id: 'demo-client',
      jti: 't-1',
      scope: 'users:read',
      iat: now(),
      exp: now() + 600,
      ...claims,
    },
    SECRET,
    { algorithm: 'HS256', header: { alg: 'HS256', kid: 'k1', typ: 'at+jwt' } },
  );

const revokedFamilies = new MemoryRevokedFamilies();
const csrf = csrfTokens({ secret: 'a-csrf-secret-of-at-least-32-bytes-long!' });

/** The preset with every stage that refuses, one user route needing a scope and one write route. */
function presetApp(extra: Record<string, unknown> = {}): Express {
  const app = express();
  app.use(
    conventions({
      corsPolicy: { origins: [ALLOWED] },
      bearerAuth: { keys: KEYS, issuer: ISSUER, audience: AUDIENCE, revokedFamilies },
      rateLimit: { limit: 3, windowSeconds: 60 },
      crossSiteProtection: {},
      csrfProtection: { tokens: csrf, sessionOf: (req) => (req.headers.cookie === 'sid=s-1' ? 's-1' : undefined) },
      ...extra,
    }),
  );
  app.get('/v1/users/:id', requireScope('users:read'), (req, res) => {
    res.json({ id: req.params.id });
  });
  app.put('/v1/users/:id', requireScope('users:write'), (req, res) => {
    res.json({ id: req.params.id });
  });
  app.post('/v1/users', (_req, res) => {
    res.status(201).json({ id: 1 });
  });
  app.use(notFound(), errorHandler({ production: true, log: false }));
  return app;
}

describe('security events of the preset’s refusals', () => {
  it('a refused preflight is malicious_cors, published once though it is held until the limiter counted it', async () => {
    const res = await request(presetApp())
      .options('/v1/users')
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'POST')
      .set('User-Agent', 'curl/8.5.0');
    expect(res.status).toBe(403);
    expect(theEvent()).toEqual({
      datetime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      event: 'malicious_cors',
      level: 'CRITICAL',
      description: expect.any(String),
      outcome: 'failure',
      rule: 'corsOriginRefused',
      status: 403,
      method: 'OPTIONS',
      route: '/v1/users',
      sourceIp: LOOPBACK,
      // Made for the request (no proxy is trusted here) and answered, so the client can quote it.
      requestId: res.headers['request-id'],
      userAgent: 'curl/8.5.0',
      origin: 'https://evil.example',
    });
    expect(res.headers['request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // docs/conventions.md rule 10: a header the library adds carries no X- prefix.
    expect(res.headers).not.toHaveProperty('x-request-id');
  });

  it.each(['Request-Id', 'X-Request-Id'])(
    "takes a trusted proxy's %s as the request's id, and answers it in Request-Id",
    async (header) => {
      const app = presetApp();
      app.set('trust proxy', 'loopback');
      const res = await request(app)
        .options('/v1/users')
        .set('Origin', 'https://evil.example')
        .set('Access-Control-Request-Method', 'POST')
        .set(header, 'proxy-id-7');
      expect(res.status).toBe(403);
      expect(theEvent().requestId).toBe('proxy-id-7');
      expect(res.headers['request-id']).toBe('proxy-id-7');
      expect(res.headers).not.toHaveProperty('x-request-id');
    },
  );

  it('a token that does not verify is authn_token_invalid, naming nobody', async () => {
    const forged = jwt.sign(
      { iss: ISSUER, aud: AUDIENCE, sub: 'u-1', iat: now(), exp: now() + 600 },
      'another-secret-of-at-least-32-bytes!!',
      {
        algorithm: 'HS256',
        header: { alg: 'HS256', kid: 'k1', typ: 'at+jwt' },
      },
    );
    const res = await request(presetApp()).get('/v1/users/1').set('Authorization', `Bearer ${forged}`);
    expect(res.status).toBe(401);
    const event = theEvent();
    expect(event).toMatchObject({
      event: 'authn_token_invalid',
      level: 'WARN',
      outcome: 'failure',
      rule: 'invalidToken',
      status: 401,
      method: 'GET',
      route: '/v1/users/1',
      sourceIp: LOOPBACK,
      description: 'The access token is not valid.',
    });
    expect(event.subject).toBeUndefined();
    expect(event.jti).toBeUndefined();
  });

  it('an expired token is authn_token_expired (INFO: clients refresh after it)', async () => {
    const res = await request(presetApp())
      .get('/v1/users/1')
      .set('Authorization', `Bearer ${token({ iat: now() - 700, exp: now() - 100 })}`);
    expect(res.status).toBe(401);
    expect(theEvent()).toMatchObject({
      event: 'authn_token_expired',
      level: 'INFO',
      outcome: 'failure',
      rule: 'invalidToken',
      status: 401,
      description: 'The access token expired.',
    });
  });

  it('a token of a revoked family is authn_token_reuse, naming its subject, client and jti', async () => {
    await revokedFamilies.revoke('family-9', Date.now() + 60_000);
    const res = await request(presetApp())
      .get('/v1/users/1')
      .set('Authorization', `Bearer ${token({ sid: 'family-9', jti: 't-9' })}`);
    expect(res.status).toBe(401);
    expect(theEvent()).toMatchObject({
      event: 'authn_token_reuse',
      level: 'CRITICAL',
      rule: 'invalidToken',
      status: 401,
      subject: 'u-1',
      clientId: 'demo-client',
      jti: 't-9',
    });
  });

  it('a token without the scope a route requires is authz_fail, with the scope it lacks and whom it names', async () => {
    const res = await request(presetApp()).put('/v1/users/7').set('Authorization', `Bearer ${token()}`).send({ name: 'x' });
    expect(res.status).toBe(403);
    expect(theEvent()).toMatchObject({
      event: 'authz_fail',
      level: 'CRITICAL',
      outcome: 'failure',
      rule: 'insufficientScope',
      status: 403,
      method: 'PUT',
      route: '/v1/users/:id',
      subject: 'u-1',
      clientId: 'demo-client',
      jti: 't-1',
      policy: { scope: 'users:write' },
    });
  });

  it('a caller over its limit is excess_rate_limit_exceeded, with the policy and how the caller was counted, once', async () => {
    const app = presetApp();
    for (let i = 0; i < 3; i++)
      expect((await request(app).get('/v1/users/1').set('Authorization', `Bearer ${token()}`)).status).toBe(200);
    expect(events).toEqual([]);
    const res = await request(app).get('/v1/users/1').set('Authorization', `Bearer ${token()}`);
    expect(res.status).toBe(429);
    expect(theEvent()).toMatchObject({
      event: 'excess_rate_limit_exceeded',
      level: 'WARN',
      outcome: 'failure',
      rule: 'tooManyRequests',
      status: 429,
      method: 'GET',
      route: '/v1/users/1',
      sourceIp: LOOPBACK,
      subject: 'u-1',
      clientId: 'demo-client',
      policy: {
        name: 'user',
        identity: 'user',
        limit: 3,
        windowSeconds: 60,
        retryAfterSeconds: Number(res.headers['retry-after']),
      },
    });
  });

  it('an anonymous caller over its limit is counted by its address', async () => {
    const app = presetApp();
    for (let i = 0; i < 3; i++) await request(app).get('/v1/users/1');
    events = [];
    await request(app).get('/v1/users/1');
    expect(theEvent().policy).toEqual({
      name: 'user',
      identity: 'address',
      limit: 3,
      windowSeconds: 60,
      retryAfterSeconds: expect.any(Number),
    });
    expect(theEvent().subject).toBeUndefined();
  });

  it('a held refusal over the limit publishes the 429 only, without the held refusal’s note', async () => {
    const app = presetApp();
    for (let i = 0; i < 3; i++) await request(app).get('/v1/users/1').set('Authorization', 'Bearer garbage.garbage.garbage');
    events = [];
    const res = await request(app).get('/v1/users/1').set('Authorization', 'Bearer garbage.garbage.garbage');
    expect(res.status).toBe(429);
    expect(theEvent()).toMatchObject({ event: 'excess_rate_limit_exceeded', rule: 'tooManyRequests', status: 429 });
  });

  it('a session write without its CSRF token is malicious_csrf', async () => {
    const res = await request(presetApp()).post('/v1/users').set('Cookie', 'sid=s-1').send({ name: 'x' });
    expect(res.status).toBe(403);
    expect(theEvent()).toMatchObject({
      event: 'malicious_csrf',
      level: 'WARN',
      outcome: 'failure',
      rule: 'csrfTokenInvalid',
      status: 403,
      method: 'POST',
      route: '/v1/users',
    });
  });

  it('a cross-site write is malicious_cross_site', async () => {
    const res = await request(presetApp())
      .post('/v1/users')
      .set('Sec-Fetch-Site', 'cross-site')
      .set('Origin', 'https://evil.example')
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
    });
  });

  it('a body the preset’s parsers refuse is input_validation_fail, published once though errorHandler() renders it', async () => {
    const res = await request(presetApp()).post('/v1/users').set('Content-Type', 'application/json').send('{"name":');
    expect(res.status).toBe(400);
    expect(theEvent()).toMatchObject({ event: 'input_validation_fail', level: 'WARN', rule: 'malformedBody', status: 400 });
  });

  it('in report-only mode a refusal is published as a success, saying what enforcing would have answered', async () => {
    const app = presetApp({ reportOnly: { log: () => undefined } });
    const res = await request(app).post('/v1/users').set('Sec-Fetch-Site', 'cross-site').send({ name: 'x' });
    expect(res.status).toBe(201);
    const event = theEvent();
    expect(event).toMatchObject({
      event: 'malicious_cross_site',
      outcome: 'success',
      rule: 'crossSiteRequestRefused',
      method: 'POST',
      description: expect.stringMatching(/^Report-only, would have answered 403 \(code 403\d\d\): /),
    });
    expect(event.status).toBeUndefined();
  });

  it('a 404 or a passing request publishes nothing', async () => {
    const app = presetApp();
    expect((await request(app).get('/v1/users/1').set('Authorization', `Bearer ${token()}`)).status).toBe(200);
    expect((await request(app).get('/v1/nothing')).status).toBe(404);
    expect(events).toEqual([]);
  });
});

describe('security events of refusals that do not pass refuse()', () => {
  function plainApp(): Express {
    const app = express();
    app.post('/v1/things', express.json(), (_req, res) => {
      res.status(201).json({});
    });
    app.delete('/v1/things/:id', (_req, _res, next) => {
      next(apiError('forbidden'));
    });
    app.use(errorHandler({ production: true, log: false }));
    return app;
  }

  it('an error of Express’s own parser, handed to errorHandler(), is published there once', async () => {
    const res = await request(plainApp()).post('/v1/things').set('Content-Type', 'application/json').send('{"a":');
    expect(res.status).toBe(400);
    expect(theEvent()).toMatchObject({
      event: 'input_validation_fail',
      rule: 'malformedBody',
      status: 400,
      method: 'POST',
      route: '/v1/things',
    });
  });

  it('a refusal of the app’s own code is published by errorHandler(), with the route template', async () => {
    const res = await request(plainApp()).delete('/v1/things/3');
    expect(res.status).toBe(403);
    expect(theEvent()).toMatchObject({
      event: 'authz_fail',
      level: 'CRITICAL',
      rule: 'forbidden',
      status: 403,
      method: 'DELETE',
      route: '/v1/things/:id',
    });
  });

  it('what Node’s parser refuses (answerParserErrors()) is published with the connection’s address', async () => {
    const app = express();
    const { server } = await listen(app);
    answerParserErrors(server);
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await rawExchange(port, { pieces: [`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`] });
      expect(answer.status).toBe(431);
      expect(theEvent()).toEqual({
        datetime: expect.any(String),
        event: 'input_validation_fail',
        level: 'WARN',
        description: expect.any(String),
        outcome: 'failure',
        rule: 'headerFieldsTooLarge',
        status: 431,
        sourceIp: LOOPBACK,
      });
    } finally {
      await closeServer(server);
    }
  });
});

describe('security events of dpopAuth()', () => {
  interface ProofKey {
    readonly privateKey: KeyObject;
    readonly jwk: Record<string, string>;
  }
  const key: ProofKey = (() => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return { privateKey, jwk: publicKey.export({ format: 'jwk' }) as Record<string, string> };
  })();
  // RFC 7638: the thumbprint of the required members, in lexicographic order.
  const jkt = createHash('sha256')
    .update(JSON.stringify({ crv: key.jwk.crv, kty: key.jwk.kty, x: key.jwk.x, y: key.jwk.y }))
    .digest('base64url');
  const ORIGIN = 'https://api.example.test';

  const proof = (accessToken: string, jti: string): string =>
    jwt.sign(
      { jti, htm: 'GET', htu: `${ORIGIN}/v1/me`, iat: now(), ath: createHash('sha256').update(accessToken).digest('base64url') },
      key.privateKey,
      { algorithm: 'ES256', header: { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk } as jwt.JwtHeader },
    );

  function resource(): Express {
    const app = express();
    app.get('/v1/me', dpopAuth({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, origin: ORIGIN }), (req, res) => {
      res.json({ subject: req.auth?.subject });
    });
    app.use(errorHandler({ production: true, log: false }));
    return app;
  }

  it('a proof replayed at a resource is authn_proof_replay, naming the proof by its jti and the token’s subject', async () => {
    const app = resource();
    const bound = token({ cnf: { jkt }, jti: 't-dpop' });
    const once = proof(bound, 'proof-1');
    const first = await request(app).get('/v1/me').set('Authorization', `DPoP ${bound}`).set('DPoP', once);
    expect(first.status).toBe(200);
    expect(events).toEqual([]);
    const again = await request(app).get('/v1/me').set('Authorization', `DPoP ${bound}`).set('DPoP', once);
    expect(again.status).toBe(401);
    expect(theEvent()).toMatchObject({
      event: 'authn_proof_replay',
      level: 'WARN',
      outcome: 'failure',
      rule: 'invalidDpopProof',
      status: 401,
      method: 'GET',
      route: '/v1/me',
      subject: 'u-1',
      clientId: 'demo-client',
      jti: 'proof-1',
    });
  });

  it('a proof that does not hold is authn_proof_invalid, without the token’s jti', async () => {
    const bound = token({ cnf: { jkt }, jti: 't-dpop' });
    const res = await request(resource())
      .get('/v1/me')
      .set('Authorization', `DPoP ${bound}`)
      .set('DPoP', proof(token(), randomUUID()));
    expect(res.status).toBe(401);
    const event = theEvent();
    expect(event).toMatchObject({ event: 'authn_proof_invalid', level: 'WARN', rule: 'invalidDpopProof', subject: 'u-1' });
    expect(event.jti).toBeUndefined();
  });

  it('a bound token presented as a bearer one is authn_token_invalid, naming whom it names', async () => {
    const res = await request(resource())
      .get('/v1/me')
      .set('Authorization', `Bearer ${token({ cnf: { jkt }, jti: 't-bound' })}`);
    expect(res.status).toBe(401);
    expect(theEvent()).toMatchObject({ event: 'authn_token_invalid', rule: 'invalidToken', subject: 'u-1', jti: 't-bound' });
  });
});

describe('nobody listening', () => {
  it('builds and publishes nothing, on a passing and on a refused request', async () => {
    unsubscribe(SECURITY_EVENTS_CHANNEL, record);
    // What builds an event: the notes of the refusing middlewares, the refusal's own fields, publishing.
    const builders = [
      jest.spyOn(refusalEvents, 'noteSecurityEvent'),
      jest.spyOn(refusalEvents, 'publishRefusal'),
      jest.spyOn(securityEvents, 'publishSecurityEvent'),
    ];
    const calls = () => builders.map((spy) => spy.mock.calls.length);
    try {
      const app = presetApp();
      // The suite's own scan listens in every test file (CONTRIBUTING.md, "Security events"): off for this part.
      await withoutEventScan(async () => {
        expect((await request(app).get('/v1/users/1').set('Authorization', `Bearer ${token()}`)).status).toBe(200);
        // A scope lacking (bearerAuth()'s note), a token that does not verify (the resource token's note), another site.
        expect((await request(app).put('/v1/users/1').set('Authorization', `Bearer ${token()}`).send({})).status).toBe(403);
        expect((await request(app).get('/v1/users/1').set('Authorization', `Bearer ${token()}x`)).status).toBe(401);
        expect((await request(app).post('/v1/users').set('Sec-Fetch-Site', 'cross-site').send({})).status).toBe(403);
      });
      expect(calls()).toEqual([0, 0, 0]);
      // The spies see the library's calls: with a listener, the same refusals are built and published through them.
      subscribe(SECURITY_EVENTS_CHANNEL, record);
      expect((await request(app).put('/v1/users/1').set('Authorization', `Bearer ${token()}`).send({})).status).toBe(403);
      expect((await request(app).get('/v1/users/1').set('Authorization', `Bearer ${token()}x`)).status).toBe(401);
      expect(calls().map((count) => count > 0)).toEqual([true, true, true]);
    } finally {
      for (const spy of builders) spy.mockRestore();
    }
  });
});
