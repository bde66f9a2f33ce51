import { connect } from 'node:net';
import { hostname } from 'node:os';
import request from 'supertest';
import { readSettings } from '../../examples/server/src/settings.js';
import { waitUntil } from '../support/timing.js';
import { DEMO, freshEmail, signIn } from './client.js';
import { type RunningProcess, startFailure, startServer } from './harness.js';

/**
 * The reference server as a process: its settings from the environment (the
 * contract's "Settings"), maintenance mode, production error detail, and a
 * graceful SIGTERM.
 */

describe('settings', () => {
  it('has the defaults of the contract', () => {
    expect(readSettings({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      demoUsername: 'alice',
      demoPassword: 'wonderland-rabbit-hole',
      demoClientId: 'demo-client',
      demoClientSecret: 'demo-secret',
      demoSpaClientId: 'demo-spa',
      demoPartnerClientId: 'demo-partner',
      demoPartnerClientSecret: 'partner-secret',
      demoServiceClientId: 'demo-service',
      demoServiceClientSecret: 'service-secret',
      corsOrigins: ['http://localhost:5173'],
      rateLimit: 100,
      rateWindow: 60,
      accessTokenTtl: 3600,
      accessTokenAlg: 'HS256',
      maintenance: false,
      redisUrl: undefined,
      redisClusterUrls: undefined,
      production: false,
      tokenSecret: undefined,
      csrfSecret: undefined,
      partitionSecret: undefined,
      exportDelay: 2,
      exportLimit: 1000,
      exportCallerLimit: 10,
      exportKept: 3600,
      passwordCost: 12,
      issuer: undefined,
      refreshGrace: 10,
      // DPoP on by default (a client without a proof still gets a bearer token).
      dpop: true,
      logEvents: true,
      // The name every event line gives this instance: the host's, unless INSTANCE_ID names it.
      instanceId: hostname(),
    });
  });

  it('reads REDIS_CLUSTER: the URLs of some nodes of a cluster, never with REDIS_URL', () => {
    expect(readSettings({ REDIS_CLUSTER: 'redis://127.0.0.1:7000, redis://127.0.0.1:7001' }).redisClusterUrls).toEqual([
      'redis://127.0.0.1:7000',
      'redis://127.0.0.1:7001',
    ]);
    expect(() => readSettings({ REDIS_CLUSTER: 'redis://127.0.0.1:7000', REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(
      'REDIS_CLUSTER="redis://127.0.0.1:7000" is not valid: expected unset while REDIS_URL is set: the shared state is one Redis or one cluster.',
    );
  });

  it('reads DPOP: on unless 0', () => {
    expect(readSettings({ DPOP: '0' }).dpop).toBe(false);
    expect(readSettings({ DPOP: '1' }).dpop).toBe(true);
    expect(() => readSettings({ DPOP: 'yes' })).toThrow('DPOP="yes" is not valid: expected 1 or unset (on), 0 (off)');
  });

  it('reads each variable', () => {
    const settings = readSettings({
      PORT: '8080',
      HOST: '0.0.0.0',
      CORS_ORIGINS: 'https://a.example, http://localhost:5173',
      RATE_LIMIT: '10',
      RATE_WINDOW: '5',
      ACCESS_TOKEN_TTL: '60',
      MAINTENANCE: '1',
      REDIS_URL: 'redis://127.0.0.1:6379',
      NODE_ENV: 'production',
      TOKEN_SECRET: 't'.repeat(32),
      CSRF_SECRET: 'c'.repeat(32),
      RATE_LIMIT_PARTITION_SECRET: 'p'.repeat(32),
      EXPORT_LIMIT: '7',
      EXPORT_KEPT: '60',
    });
    expect(settings).toMatchObject({
      tokenSecret: 't'.repeat(32),
      csrfSecret: 'c'.repeat(32),
      partitionSecret: 'p'.repeat(32),
      exportLimit: 7,
      exportKept: 60,
      port: 8080,
      host: '0.0.0.0',
      corsOrigins: ['https://a.example', 'http://localhost:5173'],
      rateLimit: 10,
      rateWindow: 5,
      accessTokenTtl: 60,
      maintenance: true,
      redisUrl: 'redis://127.0.0.1:6379',
      production: true,
    });
  });

  describe('a wrong value is refused with a message naming the variable', () => {
    it.each([
      ['PORT', 'abc', 'PORT="abc" is not valid: expected a whole number from 0 to 65535.'],
      ['RATE_LIMIT', '0', 'RATE_LIMIT="0" is not valid: expected a whole number from 1 to 1000000.'],
      ['RATE_WINDOW', '1.5', 'RATE_WINDOW="1.5" is not valid: expected a whole number from 1 to 86400.'],
      ['ACCESS_TOKEN_TTL', '-5', 'ACCESS_TOKEN_TTL="-5" is not valid: expected a whole number from 1 to 86400.'],
      ['ACCESS_TOKEN_ALG', 'none', 'ACCESS_TOKEN_ALG="none" is not valid: expected HS256, ES256, EdDSA, RS256.'],
      ['CORS_ORIGINS', 'http://localhost:5173/', 'CORS_ORIGINS="http://localhost:5173/" is not valid'],
      ['CORS_ORIGINS', 'localhost:5173', 'CORS_ORIGINS="localhost:5173" is not valid'],
      ['MAINTENANCE', 'yes', 'MAINTENANCE="yes" is not valid: expected 1 (on), 0 or unset (off).'],
      [
        'REDIS_URL',
        'http://127.0.0.1:6379',
        'REDIS_URL="http://127.0.0.1:6379" is not valid: expected a redis:// or rediss:// URL.',
      ],
      [
        'REDIS_CLUSTER',
        'redis://127.0.0.1:7000,127.0.0.1:7001',
        `REDIS_CLUSTER="redis://127.0.0.1:7000,127.0.0.1:7001" is not valid: expected a comma list of redis:// or rediss:// URLs of the cluster's nodes.`,
      ],
      ['NODE_ENV', 'staging', 'NODE_ENV="staging" is not valid: expected development, production or test.'],
      ['DEMO_PASSWORD', ' ', 'DEMO_PASSWORD=" " is not valid'],
      ['TOKEN_SECRET', 'short', 'TOKEN_SECRET="(hidden)" is not valid: expected at least 32 bytes'],
      ['CSRF_SECRET', 'x'.repeat(31), 'CSRF_SECRET="(hidden)" is not valid: expected at least 32 bytes'],
      [
        'RATE_LIMIT_PARTITION_SECRET',
        ` ${'x'.repeat(40)}`,
        'RATE_LIMIT_PARTITION_SECRET="(hidden)" is not valid: expected at least 32 bytes, with no space at either end',
      ],
      ['EXPORT_LIMIT', '0', 'EXPORT_LIMIT="0" is not valid: expected a whole number from 1 to 1000000.'],
      ['LOG_EVENTS', 'yes', 'LOG_EVENTS="yes" is not valid: expected 1 or unset (on), 0 (off).'],
    ])('%s=%s', (name, value, message) => {
      expect(() => readSettings({ [name]: value })).toThrow(message);
    });

    it.each([
      ['PORT', 'abc', 'reference server: cannot start: PORT="abc" is not valid: expected a whole number from 0 to 65535.'],
      [
        'CORS_ORIGINS',
        'http://a.example/path',
        'reference server: cannot start: CORS_ORIGINS="http://a.example/path" is not valid',
      ],
      [
        'LOG_EVENTS',
        'true',
        'reference server: cannot start: LOG_EVENTS="true" is not valid: expected 1 or unset (on), 0 (off).',
      ],
    ])('stops the process: %s=%s exits 1 with the message', async (name, value, message) => {
      const { code, output } = await startFailure({ [name]: value });
      expect(code).toBe(1);
      expect(output).toContain(message);
      expect(output).not.toContain('    at ');
    });
  });

  describe('DEMO_USERNAME and DEMO_PASSWORD', () => {
    let server: RunningProcess;
    beforeAll(async () => {
      server = await startServer({ DEMO_USERNAME: 'hatter', DEMO_PASSWORD: 'tea-party-at-six' });
    });
    afterAll(() => server?.stop());

    it('seed the user that signs in', async () => {
      const ok = await request(server.url)
        .post('/v1/sessions')
        .type('form')
        .send({ username: 'hatter', password: 'tea-party-at-six' });
      expect(ok.status).toBe(201);
      const old = await request(server.url)
        .post('/v1/sessions')
        .type('form')
        .send({ username: DEMO.username, password: DEMO.password });
      expect(old.status).toBe(401);
    });
  });
});

describe('HOST=0.0.0.0 (every address)', () => {
  it('serves the RFC 8414 metadata document the contract lists, naming http://localhost:PORT as the issuer', async () => {
    const server = await startServer({ HOST: '0.0.0.0' });
    try {
      const res = await request(server.url).get('/.well-known/oauth-authorization-server');
      expect(res.status).toBe(200);
      expect(res.body.issuer).toBe(`http://localhost:${server.port}`);
      expect(res.body.token_endpoint).toBe(`http://localhost:${server.port}/v1/oauth2/token`);
    } finally {
      await server.stop();
    }
  });
});

describe('a started server, with the default settings', () => {
  let server: RunningProcess;
  beforeAll(async () => {
    server = await startServer({ HOST: '127.0.0.1' });
  });
  afterAll(() => server?.stop());

  it('prints the address once it listens, on HOST and PORT', async () => {
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.includes('listening on'));
    expect(lines).toEqual([`reference server listening on http://127.0.0.1:${server.port} (state in memory)`]);
    expect((await request(server.url).get('/v1/users')).status).toBe(200);
  });

  it('checks its own routes against the path rules at start-up', () => {
    expect(server.output()).toContain('route check: every route follows the path rules (docs/conventions.md §3)');
  });

  it('reports no response-shape finding on its own answers in development', async () => {
    // conventions() runs the response-shape linter outside production; it logs each finding.
    const api = () => request(server.url);
    const session = await signIn(server.url);
    const tokens = await api().post('/v1/oauth2/token').type('form').send({
      grant_type: 'password',
      username: DEMO.username,
      password: DEMO.password,
      client_id: DEMO.clientId,
      client_secret: DEMO.clientSecret,
    });
    const bearer = `Bearer ${tokens.body.access_token}`;
    const answers = [
      tokens,
      await api().get('/v1/users'),
      await api().get('/v1/users/search?q=a&fields=summary'),
      await api().get('/v1/users/4611686018427387911'),
      await api().get('/v1/me').set('Authorization', bearer),
      await api().post('/v1/exports').set('Authorization', bearer),
      await api().get('/v1/sessions/current').set('Cookie', session.cookie).set('X-Requested-With', 'XMLHttpRequest'),
      await api().post('/v1/users').set('Authorization', bearer).send({ name: 'Lin Ter', email: freshEmail(), gender: 'female' }),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 200, 202, 200, 201]);
    await new Promise((done) => setTimeout(done, 100));
    expect(server.output()).not.toContain('The response breaks the API conventions.');
  });
});

describe('MAINTENANCE=1', () => {
  let server: RunningProcess;
  beforeAll(async () => {
    server = await startServer({ MAINTENANCE: '1' });
  });
  afterAll(() => server?.stop());

  it.each([
    ['GET', '/v1/users'],
    ['POST', '/v1/sessions'],
    ['GET', '/v1/no-such-thing'],
  ])('answers %s %s with 503 JSON and Retry-After', async (method, path) => {
    const res = await request(server.url)[method === 'GET' ? 'get' : 'post'](path);
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('300');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({
      errors: [{ message: 'The service is down for maintenance; retry after the time in Retry-After.', code: 50301 }],
    });
  });

  it('answers POST /v1/oauth2/token with 503 in RFC 6749’s shape (temporarily_unavailable), Retry-After and Pragma', async () => {
    const res = await request(server.url).post('/v1/oauth2/token').type('form').send({ grant_type: 'password' });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('300');
    expect(res.headers.pragma).toBe('no-cache');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'The service is down for maintenance; retry after the time in Retry-After.',
    });
  });
});

describe('NODE_ENV (rule 14.5: production detail may be less precise)', () => {
  it('development: the error carries its detail', async () => {
    const server = await startServer({ NODE_ENV: 'development' });
    try {
      const res = await request(server.url).get('/v1/users/123');
      expect(res.body).toEqual({ errors: [{ message: 'No user has this id.', code: 40402, detail: { id: '123' } }] });
    } finally {
      await server.stop();
    }
  });

  it('production: the same error without detail', async () => {
    const server = await startServer({ NODE_ENV: 'production' });
    try {
      const res = await request(server.url).get('/v1/users/123');
      expect(res.body).toEqual({ errors: [{ message: 'No user has this id.', code: 40402 }] });
    } finally {
      await server.stop();
    }
  });
});

describe('SIGTERM', () => {
  it('stops accepting, finishes the request in flight, and exits 0', async () => {
    const server = await startServer();
    const body = `username=${DEMO.username}&password=${DEMO.password}`;
    const socket = connect(server.port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    const closed = new Promise((done) => socket.once('close', done));
    await new Promise((done) => socket.once('connect', done));
    // Half a request: headers and part of the body. It is in flight when SIGTERM arrives.
    socket.write(
      `POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((done) => setTimeout(done, 100));
    server.child.kill('SIGTERM');
    await waitUntil(() => server.output().includes('SIGTERM: finishing requests in flight'), 'the server to take the signal');

    // No new connection is accepted any more.
    const refused = await new Promise<boolean>((done) => {
      const probe = connect(server.port, '127.0.0.1');
      probe.once('connect', () => {
        probe.destroy();
        done(false);
      });
      probe.once('error', () => done(true));
    });
    expect(refused).toBe(true);

    socket.write(body.slice(10));
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 201 Created\r\n/);
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('reference server: stopped');
  });
});
