import { connect, createServer, type Server, type Socket } from 'node:net';
import request from 'supertest';
import { COMMAND_TIMEOUT_MS } from '../../examples/server/src/state.js';
import { describeWith, freePort, REDIS_SERVER } from '../support/services.js';
import { MACHINE_ALLOWANCE_MS, waitUntil } from '../support/timing.js';
import { DEMO, demoAccessToken, signIn } from './client.js';
import {
  type ControlledRedis,
  ensureBuilt,
  type RunningProcess,
  startControlledRedis,
  startFailure,
  startServer,
} from './harness.js';

/**
 * Faults. A Redis that accepts connections and never
 * answers, a Redis that hangs or goes away while the service runs, a port
 * already in use, and keep-alive clients at SIGTERM.
 */

/** A TCP server that accepts every connection and never writes a byte; `connectedAt` is the first one's time. */
async function blackHole(): Promise<{ port: number; connectedAt: () => number | undefined; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let connectedAt: number | undefined;
  const server: Server = createServer((socket) => {
    connectedAt ??= Date.now();
    sockets.add(socket);
    socket.on('error', () => {});
  });
  const port = await freePort();
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return {
    port,
    connectedAt: () => connectedAt,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}

describe('start-up faults', () => {
  it('gives up on a Redis that accepts the connection but never answers within 5 s: a clear message, exit 1', async () => {
    const hole = await blackHole();
    try {
      await ensureBuilt();
      const started = Date.now();
      const { code, output } = await startFailure({ REDIS_URL: `redis://127.0.0.1:${hole.port}` });
      const exitedAt = Date.now();
      expect(code).toBe(1);
      expect(output).toContain(
        `reference server: cannot start: cannot reach Redis at redis://127.0.0.1:${hole.port}: no answer within 5 s`,
      );
      expect(output).not.toContain('    at ');
      // It waited the five seconds (counted before the process started, so never less)...
      expect(exitedAt - started).toBeGreaterThanOrEqual(5000);
      // ...and gave up then: counted from its connection, so node's own start is not in it.
      expect(exitedAt - (hole.connectedAt() as number)).toBeLessThan(5000 + MACHINE_ALLOWANCE_MS);
    } finally {
      await hole.close();
    }
  }, 20_000);

  it('says that a port is already in use, and exits 1', async () => {
    const busy = createServer();
    const port = await freePort();
    await new Promise<void>((done) => busy.listen(port, '127.0.0.1', done));
    try {
      const { code, output } = await startFailure({ PORT: String(port) });
      expect(code).toBe(1);
      expect(output).toContain(
        `reference server: cannot start: 127.0.0.1:${port} is already in use by another process: stop it, or set PORT (or HOST) to a free one`,
      );
      expect(output).not.toContain('TypeError');
      expect(output).not.toContain('    at ');
    } finally {
      await new Promise((done) => busy.close(done));
    }
  });
});

describeWith(REDIS_SERVER, 'a Redis outage while the service runs', () => {
  let redis: ControlledRedis;
  let server: RunningProcess;
  let bearer: string;
  let cookie: string;

  beforeAll(async () => {
    redis = await startControlledRedis();
    server = await startServer({ REDIS_URL: redis.url, RATE_LIMIT: '100000', EXPORT_DELAY: '0' });
    cookie = (await signIn(server.url)).cookie;
    bearer = `Bearer ${await demoAccessToken(server.url)}`;
  });

  afterAll(async () => {
    await server?.stop();
    await redis?.stop();
  });

  // Every kind of request that needs Redis: the rate limit of an anonymous read,
  // a session lookup, a bearer read and write, a sign-in, the token endpoint.
  const needingRedis = () => [
    request(server.url).get('/v1/users').timeout(4000),
    request(server.url).get('/v1/sessions/current').set('Cookie', cookie).set('X-Requested-With', 'XMLHttpRequest').timeout(4000),
    request(server.url).get('/v1/me').set('Authorization', bearer).timeout(4000),
    request(server.url)
      .post('/v1/users')
      .set('Authorization', bearer)
      .send({ name: 'Never Stored', email: 'never.stored@example.com', gender: 'male' })
      .timeout(4000),
    request(server.url)
      .post('/v1/sessions')
      .type('form')
      .send({ username: DEMO.username, password: DEMO.password })
      .timeout(4000),
    request(server.url)
      .post('/v1/oauth2/token')
      .type('form')
      .send({
        grant_type: 'password',
        username: DEMO.username,
        password: DEMO.password,
        client_id: DEMO.clientId,
        client_secret: DEMO.clientSecret,
      })
      .timeout(4000),
  ];

  const expectUnavailable = async () => {
    const started = Date.now();
    const answers = await Promise.all(needingRedis());
    const took = Date.now() - started;
    for (const [i, res] of answers.entries()) {
      expect({ request: i, status: res.status }).toEqual({ request: i, status: 503 });
      expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      // The token endpoint may answer in RFC 6749's shape instead.
      if (i !== answers.length - 1) {
        expect(res.body).toEqual({
          errors: [expect.objectContaining({ code: 50302, message: 'A shared state store is unreachable.' })],
        });
      }
    }
    // The command time-out, never a hang.
    expect(took).toBeLessThan(COMMAND_TIMEOUT_MS + MACHINE_ALLOWANCE_MS);
  };

  /** Resolves once a request that needs Redis answers `status`. */
  const answering = (status: number, what: string) =>
    waitUntil(async () => (await request(server.url).get('/v1/users').timeout(4000)).status === status, what);
  /** Waits until a request that needs Redis answers 200 again, without a restart of the service. */
  const recovered = () => answering(200, 'the service to recover');

  it('a hung Redis (SIGSTOP): every request that needs it gets 503 JSON with Retry-After once the command time-out passes, never a hang', async () => {
    redis.pause();
    try {
      await expectUnavailable();
    } finally {
      redis.resume();
    }
  });

  it('then recovers by itself (SIGCONT), sessions and tokens included', async () => {
    await recovered();
    const current = await request(server.url)
      .get('/v1/sessions/current')
      .set('Cookie', cookie)
      .set('X-Requested-With', 'XMLHttpRequest');
    expect(current.status).toBe(200);
    expect((await request(server.url).get('/v1/me').set('Authorization', bearer)).status).toBe(200);
  });

  it('a stopped Redis: 503 with Retry-After at once; started again (empty), the service recovers and seeds again', async () => {
    await redis.stop();
    await answering(503, 'the service to see Redis gone');
    await expectUnavailable();
    await redis.restart();
    await recovered();
    // The demo user and application are back: signing in works again. The seed
    // runs when the connection comes back, the users before the demo account,
    // so a sign-in may be answered between the two (a loaded machine shows it).
    const signedIn = async () =>
      (await request(server.url).post('/v1/sessions').type('form').send({ username: DEMO.username, password: DEMO.password }))
        .status === 201;
    await waitUntil(signedIn, 'the demo account to be seeded again');
    expect(server.output()).not.toContain('"status":500');
  }, 60_000);
});

/** Whether `answer` holds a whole response: its head, and as many body bytes as its Content-Length. */
function isComplete(answer: string): boolean {
  const end = answer.indexOf('\r\n\r\n');
  const length = /\r\ncontent-length: (\d+)\r\n/i.exec(answer)?.[1];
  return end !== -1 && length !== undefined && Buffer.byteLength(answer.slice(end + 4)) >= Number(length);
}

describe('SIGTERM with keep-alive clients', () => {
  it('answers the requests sent on open connections just after the signal, with Connection: close, then exits 0', async () => {
    const server = await startServer();
    const CLIENTS = 5;
    const sockets = await Promise.all(
      Array.from(
        { length: CLIENTS },
        () =>
          new Promise<Socket>((done) => {
            const socket = connect(server.port, '127.0.0.1', () => done(socket));
          }),
      ),
    );
    const answers = sockets.map(() => '');
    const closed = sockets.map(
      (socket, i) =>
        new Promise<void>((done) => {
          socket.on('data', (chunk) => {
            answers[i] += chunk.toString();
          });
          socket.on('error', (error) => {
            answers[i] += `\n[error ${error.message}]`;
          });
          socket.once('close', () => done());
        }),
    );
    const ask = (socket: Socket) =>
      socket.write('GET /v1/users?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
    for (const socket of sockets) ask(socket);
    await waitUntil(() => answers.every(isComplete), 'the first answers');
    expect(answers.map((answer) => answer.match(/^HTTP\/1\.1 200 OK/gm)?.length ?? 0)).toEqual(sockets.map(() => 1));
    expect(answers.every((answer) => /\r\nConnection: keep-alive\r\n/i.test(answer))).toBe(true);

    server.child.kill('SIGTERM');
    await waitUntil(() => server.output().includes('SIGTERM: finishing requests in flight'), 'the server to take the signal');
    // The second request of each client, on its open connection, after the signal.
    for (const socket of sockets) ask(socket);
    await Promise.all(closed);
    for (const answer of answers) {
      expect(answer).not.toContain('[error');
      const responses = answer.split(/(?=HTTP\/1\.1 )/);
      expect(responses).toHaveLength(2);
      expect(responses[1]).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(responses[1]).toMatch(/\r\nConnection: close\r\n/i);
    }
    expect(await server.exited).toBe(0);
  });
});
