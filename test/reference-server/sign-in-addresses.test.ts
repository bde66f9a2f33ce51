import { generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import http from 'node:http';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { describeWith, REDIS_SERVER, type RedisServer, startRedis } from '../support/services.js';
import { DEMO } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * The sign-in guard over HTTP on the reference server, with real client addresses:
 * the server trusts no proxy, and on Linux all of 127.0.0.0/8 is loopback,
 * so each client binds its own source address (`localAddress`) while the
 * server listens on 127.0.0.1. In memory (one instance) and on two
 * instances over one redis-server:
 * - the owner, on a device that signed in before (the `__Host-device`
 *   cookie at the browser door, the same DPoP key at the token endpoint),
 *   signs in on every try while four addresses keep failing and re-arming
 *   the username-wide delay; forged device cookies buy nothing; the
 *   attackers' checked guesses stay within docs/oauth2-choices.md's bound;
 * - 30 and 60 parallel wrong passwords, from one address and from 30,
 *   check at most the allowance;
 * - a replayed refresh request (same refresh token, same proof) gets 400
 *   `invalid_dpop_proof` and the family lives on.
 */

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

interface Call {
  readonly path: string;
  /** The client's source address, 127.0.0.2 … 127.0.0.254. */
  readonly from: string;
  readonly form: Record<string, string>;
  readonly headers?: Record<string, string>;
}

/** A form POST from the source address `from` (no connection reuse: each request its own socket). */
function post(server: RunningProcess, call: Call): Promise<Answer> {
  const body = new URLSearchParams(call.form).toString();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: call.path,
        localAddress: call.from,
        agent: false,
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          'Content-Length': Buffer.byteLength(body),
          ...call.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => {
          let parsed: Record<string, unknown> = {};
          try {
            parsed = JSON.parse(text);
          } catch {
            // An empty or non-JSON body: the status says enough.
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const WRONG = 'not-the-password';
const PUBLIC_CLIENT = 'browser-page';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A DPoP key and its proofs (RFC 9449 §4) for one request each. */
function dpopKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  return {
    proof(htu: string): string {
      return jwt.sign({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), htm: 'POST', htu }, privateKey as KeyObject, {
        algorithm: 'ES256',
        header: { alg: 'ES256', typ: 'dpop+jwt', jwk } as jwt.JwtHeader,
      });
    },
  };
}

const browserSignIn = (
  server: RunningProcess,
  from: string,
  password: string,
  cookie?: string,
  username: string = DEMO.username,
) =>
  post(server, {
    path: '/v1/sessions',
    from,
    form: { username, password },
    headers: cookie === undefined ? {} : { Cookie: cookie },
  });

const passwordGrant = (
  server: RunningProcess,
  from: string,
  password: string,
  proof?: string,
  username: string = DEMO.username,
) =>
  post(server, {
    path: '/v1/oauth2/token',
    from,
    form: { grant_type: 'password', username, password, client_id: PUBLIC_CLIENT },
    headers: proof === undefined ? {} : { DPoP: proof },
  });

/**
 * The token endpoint's URL, as a proof's `htu` names it: the issuer's, which instances over one Redis agree on
 * (the first one's), whichever instance answers.
 */
async function tokenEndpoint(server: RunningProcess): Promise<string> {
  return (await request(server.url).get('/.well-known/oauth-authorization-server')).body.token_endpoint as string;
}

/** The `Cookie` header that sends back the device cookie a sign-in set. */
function deviceCookieOf(res: Answer): string {
  const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const cookie = set.find((line) => line.startsWith('__Host-device='));
  if (!cookie) throw new Error(`no device cookie was set: ${res.status}`);
  return cookie.split(';')[0] as string;
}

/** Whether a refusal is the guard's (429) or the deadline's (503), each with Retry-After. */
function expectRefusedWithRetryAfter(res: Answer): void {
  expect([429, 503]).toContain(res.status);
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
}

/** A password checked and found wrong: 400 invalid_grant at the token endpoint, 401 at the browser door. */
const checked = (res: Answer): boolean => res.status === 400 || res.status === 401;

type Instances = () => [RunningProcess, RunningProcess];

function knownDevices(instances: Instances): void {
  it('lets the owner on known devices sign in on every try while 4 addresses keep failing and re-arming; forged cookies buy nothing', async () => {
    const [a, b] = instances();
    const key = dpopKey();
    // The owner's devices sign in once: a browser (its device cookie) and an app (its DPoP key).
    const first = await browserSignIn(a, '127.0.0.2', DEMO.password);
    expect(first.status).toBe(201);
    const cookie = deviceCookieOf(first);
    const htu = await tokenEndpoint(a);
    expect((await passwordGrant(b, '127.0.0.3', DEMO.password, key.proof(htu))).status).toBe(200);
    // Forged device cookies: the owner's id with another signature, a made-up id, the id without its signature.
    const [id, signature] = cookie.slice('__Host-device='.length).split('.') as [string, string];
    const forged = [
      `__Host-device=${id}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`,
      `__Host-device=${randomUUID()}.c2lnbmF0dXJl`,
      `__Host-device=${id}`,
    ];
    const attackers = ['127.0.0.11', '127.0.0.12', '127.0.0.13', '127.0.0.14'];
    /** When each checked guess was sent and answered. */
    const checks: { sent: number; answered: number }[] = [];
    let retryAfter = 0;
    for (let round = 0; round < 4; round++) {
      for (const [i, address] of attackers.entries()) {
        // The attackers fail again as soon as the delay has ended, which re-arms it, interleaved with the owner's tries.
        const server = (i + round) % 2 === 0 ? a : b;
        const sent = Date.now();
        const res = i % 2 === 0 ? await passwordGrant(server, address, WRONG) : await browserSignIn(server, address, WRONG);
        if (checked(res)) checks.push({ sent, answered: Date.now() });
        else expectRefusedWithRetryAfter(res);
        if (checks.length >= 3) {
          // The username is delayed now: an unknown device (a new browser, a forged cookie) is refused, its right password included.
          const unknown = await browserSignIn(a, '127.0.0.4', DEMO.password);
          expect([round, i, unknown.status]).toEqual([round, i, 429]);
          retryAfter = Number(unknown.headers['retry-after']);
          const fake = forged[(round + i) % forged.length] as string;
          const res = await browserSignIn(b, `127.0.0.${20 + i}`, DEMO.password, fake);
          expect([fake, res.status]).toEqual([fake, 429]);
        }
        // The owner's known devices sign in on every try, on either instance.
        const browser = await browserSignIn(i % 2 === 0 ? b : a, '127.0.0.2', DEMO.password, cookie);
        expect([round, i, browser.status]).toEqual([round, i, 201]);
        const token = await passwordGrant(i % 2 === 0 ? a : b, '127.0.0.3', DEMO.password, key.proof(htu));
        expect([round, i, token.status]).toEqual([round, i, 200]);
      }
      // The next round starts when the delay has ended (Retry-After rounds up).
      await sleep(retryAfter * 1000 + 100);
    }
    // docs/oauth2-choices.md: from unknown devices, the failures of (usernameDelayAfterAddresses − 1) addresses and
    // one more are checked freely (here one each: 3); after the n-th of those later ones, the next waits the n-th
    // delay, 1 s, 2 s, 4 s … 60 s, one guess at a time.
    expect(checks.length).toBeGreaterThanOrEqual(3 + 3);
    for (let j = 2; j + 1 < checks.length; j++) {
      const delayMs = Math.min(2 ** (j - 2), 60) * 1000;
      const next = checks[j + 1] as { answered: number };
      expect([j, next.answered - (checks[j] as { sent: number }).sent >= delayMs]).toEqual([j, true]);
    }
  }, 60_000);
}

/**
 * docs/oauth2-choices.md: 10 from one address; from 30 addresses sending one
 * each, 3; sending two each, 5 (two addresses use both, a third fails once).
 */
function parallelGuesses(instances: Instances): void {
  it.each([
    [30, 1, 10],
    [60, 1, 10],
    [30, 30, 3],
    [60, 30, 5],
  ])(
    'checks at most the allowance of %i parallel wrong passwords from %i address(es): %i',
    async (total, addresses, allowance) => {
      const [a, b] = instances();
      // A username of its own for each case (the guard counts names that have no account as it counts those that do).
      const username = `guessed-${total}-${addresses}`;
      const first = addresses === 1 ? 100 : 120 + (total === 30 ? 0 : 40);
      const results = await Promise.all(
        Array.from({ length: total }, (_, i) => {
          const server = i % 4 < 2 ? a : b;
          const from = `127.0.0.${first + (i % addresses)}`;
          return i % 2 === 0
            ? passwordGrant(server, from, WRONG, undefined, username)
            : browserSignIn(server, from, WRONG, undefined, username);
        }),
      );
      const count = results.filter(checked).length;
      expect(count).toBeGreaterThanOrEqual(1);
      expect(count).toBeLessThanOrEqual(allowance);
      for (const res of results.filter((r) => !checked(r))) expectRefusedWithRetryAfter(res);
    },
    60_000,
  );
}

describe('reference server, one instance in memory: real client addresses', () => {
  let server: RunningProcess;
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT: '100000' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('sees each client at the source address it bound (127.0.0.0/8 is loopback)', async () => {
    // A wrong password from 127.0.0.2 ten times throttles 127.0.0.2 only: the server told the addresses apart.
    for (let i = 0; i < 10; i++) expect((await passwordGrant(server, '127.0.0.2', WRONG, undefined, 'probe')).status).toBe(400);
    expect((await passwordGrant(server, '127.0.0.2', WRONG, undefined, 'probe')).status).toBe(429);
    expect((await passwordGrant(server, '127.0.0.5', WRONG, undefined, 'probe')).status).toBe(400);
  });

  knownDevices(() => [server, server]);
  parallelGuesses(() => [server, server]);
});

describeWith(REDIS_SERVER, 'reference server, two instances over one redis-server: real client addresses', () => {
  let redis: RedisServer;
  let a: RunningProcess;
  let b: RunningProcess;
  beforeAll(async () => {
    redis = await startRedis();
    [a, b] = await Promise.all([
      startServer({ REDIS_URL: redis.url, RATE_LIMIT: '100000' }),
      startServer({ REDIS_URL: redis.url, RATE_LIMIT: '100000' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  knownDevices(() => [a, b]);
  parallelGuesses(() => [a, b]);

  it('answers a replayed refresh request (same token, same proof) 400 invalid_dpop_proof on the other instance, and the family lives on', async () => {
    const key = dpopKey();
    const htu = await tokenEndpoint(b);
    const granted = await passwordGrant(a, '127.0.0.2', DEMO.password, key.proof(htu));
    expect(granted.status).toBe(200);
    const refresh = (server: RunningProcess, token: string, proof: string) =>
      post(server, {
        path: '/v1/oauth2/token',
        from: '127.0.0.2',
        form: { grant_type: 'refresh_token', refresh_token: token, client_id: PUBLIC_CLIENT },
        headers: { DPoP: proof },
      });
    const proof = key.proof(htu);
    const first = await refresh(a, granted.body.refresh_token as string, proof);
    expect(first.status).toBe(200);
    // Someone who saw the whole request sends it again, to the other instance.
    const replay = await refresh(b, granted.body.refresh_token as string, proof);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_dpop_proof');
    // The client's next refresh, with the token it was given and a fresh proof, works on either instance.
    const next = await refresh(b, first.body.refresh_token as string, key.proof(htu));
    expect(next.status).toBe(200);
    expect((await refresh(a, next.body.refresh_token as string, key.proof(htu))).status).toBe(200);
  });
});
