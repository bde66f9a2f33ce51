import { Agent, request as httpRequest, type Server } from 'node:http';
import bcrypt from 'bcryptjs';
import express from 'express';
import { ConfigurationError } from '../../src/config/index.js';
import { errorHandler, notFound } from '../../src/errors/index.js';
import { AUDIENCE, ISSUER, KEYS } from '../../test/support/oauth2.js';
import { closeServer, listen } from '../../test/support/services.js';
import { MACHINE_ALLOWANCE_MS } from '../../test/support/timing.js';
import { MemoryClientStore, MemoryUserStore, PasswordHasher, passwordSignIn, tokenRouter } from '../src/index.js';

/**
 * A password grant is answered, or refused with 503 or
 * 429 and Retry-After, within its deadline counted from the request's
 * arrival, whatever it waited for on the way (the sign-in guard's queue,
 * the stores, the password pool). A bounded mixed load: list requests and
 * password grants over 50 keep-alive connections, on one bcrypt thread.
 * Each grant is timed by the server, from its `request` event (the request's
 * arrival) to the response's `finish`, so the test's own client, which shares
 * the process, adds nothing to it.
 */

const DEADLINE_MS = 1500;
const COST = 10;

interface Answer {
  readonly status: number;
  readonly retryAfter: string | undefined;
}

describe('the password grant answers within its deadline under a mixed load', () => {
  let server: Server;
  let url: string;
  let hasher: PasswordHasher;
  /** Milliseconds from arrival to the last byte written, of each password grant the server answered. */
  const grantTimes: number[] = [];

  beforeAll(async () => {
    hasher = new PasswordHasher({ threads: 1, cost: COST });
    const users = new MemoryUserStore();
    await users.add({ username: 'alice', subject: 'u-1', passwordHash: bcrypt.hashSync('wonderland-rabbit-hole', COST) });
    const clients = new MemoryClientStore();
    await clients.add({ id: 'demo-client', secret: 'demo-secret' });
    const app = express();
    app.use(
      tokenRouter({
        keys: KEYS,
        issuer: ISSUER,
        audience: AUDIENCE,
        users,
        clients,
        passwordHasher: hasher,
        passwordCost: COST,
        signInDeadlineMs: DEADLINE_MS,
      }),
    );
    app.get('/v1/users', (_req, res) => {
      res.json({ data: Array.from({ length: 20 }, (_, i) => ({ id: i })) });
    });
    app.use(notFound(), errorHandler({ production: true, log: false }));
    ({ server, url } = await listen(app));
    server.prependListener('request', (req, res) => {
      const arrived = performance.now();
      if (req.method === 'POST') res.once('finish', () => grantTimes.push(performance.now() - arrived));
    });
  });
  afterAll(async () => {
    await closeServer(server);
    await hasher.close();
  });

  /** One request on a keep-alive connection. */
  function send(agent: Agent, method: string, path: string, body?: string): Promise<Answer> {
    const target = new URL(path, url);
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method,
          headers: body ? { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) } : {},
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              retryAfter: res.headers['retry-after'] as string | undefined,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  it('300 password grants among 300 list requests: each answered or refused with Retry-After within the deadline', async () => {
    const grant = new URLSearchParams({
      grant_type: 'password',
      username: 'alice',
      password: 'wonderland-rabbit-hole',
      client_id: 'demo-client',
      client_secret: 'demo-secret',
    }).toString();
    const agent = new Agent({ keepAlive: true, maxSockets: 50 });
    const grants: Answer[] = [];
    const lists: Answer[] = [];
    // 50 connections, each sending its share in turn: 12 requests, every other one a password grant.
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        for (let i = 0; i < 12; i++) {
          if (i % 2 === 0) grants.push(await send(agent, 'POST', '/v1/oauth2/token', grant));
          else lists.push(await send(agent, 'GET', '/v1/users'));
        }
      }),
    );
    agent.destroy();
    expect(grants).toHaveLength(300);
    if (process.env.DEADLINE_STATS)
      console.log(
        JSON.stringify({
          max: Math.max(...grantTimes),
          ok: grants.filter((a) => a.status === 200).length,
          refused: grants
            .filter((a) => a.status !== 200)
            .map((a) => a.status)
            .join(','),
        }),
      );
    expect(grantTimes).toHaveLength(300);
    // The deadline's timer, and the write after it, may run late on a loaded machine: the allowance.
    expect(grantTimes.filter((ms) => ms > DEADLINE_MS + MACHINE_ALLOWANCE_MS)).toEqual([]);
    for (const answer of grants) {
      if (answer.status === 200) continue;
      expect([429, 503]).toContain(answer.status);
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // Some were answered: the deadline refuses the excess, not everything.
    expect(grants.filter((answer) => answer.status === 200).length).toBeGreaterThan(0);
    expect(lists.every((answer) => answer.status === 200)).toBe(true);
  }, 60_000);

  it('refuses a deadline outside 100 to 60000 ms, at both doors', () => {
    const users = new MemoryUserStore();
    for (const wrong of [99, 60_001, 1.5]) {
      expect(() => tokenRouter({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, users, signInDeadlineMs: wrong })).toThrow(
        ConfigurationError,
      );
      expect(() => passwordSignIn({ users, deadlineMs: wrong, signInGuard: false })).toThrow(ConfigurationError);
    }
  });
});

describe("the deadline counts from the preset's entry, not from the token router's", () => {
  it('refuses with 503 and Retry-After a grant that spent its budget in stages before the router', async () => {
    const { conventions } = await import('../../src/preset.js');
    const users = new MemoryUserStore();
    await users.add({ username: 'alice', subject: 'u-1', passwordHash: bcrypt.hashSync('wonderland-rabbit-hole', 4) });
    const clients = new MemoryClientStore();
    await clients.add({ id: 'demo-client', secret: 'demo-secret' });
    const hasher = new PasswordHasher({ threads: 1, cost: 4 });
    // A team's own middleware before the token endpoint that takes longer than the whole budget.
    const slow = (_req: unknown, _res: unknown, next: () => void) => setTimeout(next, 400);
    const app = express();
    app.use(
      conventions({
        rateLimit: false,
        tokenRouter: tokenRouter({
          keys: KEYS,
          issuer: ISSUER,
          audience: AUDIENCE,
          users,
          clients,
          passwordHasher: hasher,
          passwordCost: 4,
          signInDeadlineMs: 300,
        }),
        before: { tokenRouter: [slow] },
      }),
    );
    app.use(notFound(), errorHandler({ production: true, log: false }));
    const served = await listen(app);
    try {
      const res = await fetch(`${served.url}/v1/oauth2/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=password&username=alice&password=wonderland-rabbit-hole',
      });
      expect(res.status).toBe(503);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(((await res.json()) as { error: string }).error).toBe('temporarily_unavailable');
    } finally {
      await closeServer(served.server);
      await hasher.close();
    }
  });
});
