import { spawnSync } from 'node:child_process';
import http from 'node:http';
import request from 'supertest';
import { documentedAlert } from '../support/alerts.js';
import { describeWith } from '../support/services.js';
import { waitUntil } from '../support/timing.js';
import { DEMO } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * The log alerts of docs/observability.md ("Alerts", "Over the log"), run
 * with jq as written over the reference server's own standard error, during
 * the attacks they name: wrong passwords from many addresses, a refresh token
 * used twice, writes from another site. Each client binds its own loopback
 * source address (`localAddress`; all of 127.0.0.0/8 is loopback on Linux),
 * as the server trusts no proxy.
 */

const JQ = process.env.JQ_BIN ?? '/usr/bin/jq';
const WRONG = 'not-the-password';

/** The findings a documented jq alert prints over `log`, one object each. */
function findings(name: string, log: string, since: string): Record<string, unknown>[] {
  const run = spawnSync(JQ, ['-cnR', '--arg', 'since', since, documentedAlert(name)], { input: log, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`jq ${name}: ${run.stderr}`);
  return run.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A form POST to the token endpoint from the source address `from`, on its own connection. */
function passwordGrantFrom(server: RunningProcess, from: string, password: string): Promise<number> {
  const body = new URLSearchParams({
    grant_type: 'password',
    username: DEMO.username,
    password,
    client_id: DEMO.clientId,
    client_secret: DEMO.clientSecret,
  }).toString();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: '/v1/oauth2/token',
        localAddress: from,
        agent: false,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describeWith(JQ, 'the documented log alerts, over the reference server’s log', () => {
  let server: RunningProcess;
  let log = '';
  const since = new Date(Date.now() - 1000).toISOString().slice(0, 19);
  const lines = (event: string) => log.split('\n').filter((line) => line.includes(`"event":"${event}"`)).length;

  beforeAll(async () => {
    server = await startServer({ REFRESH_GRACE: '0' });
    server.child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
  }, 60_000);
  afterAll(() => server.stop());

  // First: the stuffing below locks the demo user's sign-ins.
  it('token-reuse-who: a refresh token used twice names the user, the client and the address', async () => {
    const signedIn = await request(server.url).post('/v1/oauth2/token').type('form').send({
      grant_type: 'password',
      username: DEMO.username,
      password: DEMO.password,
      client_id: DEMO.clientId,
      client_secret: DEMO.clientSecret,
    });
    expect(signedIn.status).toBe(200);
    const refresh = {
      grant_type: 'refresh_token',
      refresh_token: signedIn.body.refresh_token as string,
      client_id: DEMO.clientId,
      client_secret: DEMO.clientSecret,
    };
    expect((await request(server.url).post('/v1/oauth2/token').type('form').send(refresh)).status).toBe(200);
    expect((await request(server.url).post('/v1/oauth2/token').type('form').send(refresh)).status).toBe(400);
    await waitUntil(() => lines('authn_token_reuse') >= 1, 'the reuse on standard error');
    const [alert, ...more] = findings('token-reuse-who', log, since);
    expect(more).toEqual([]);
    expect(alert).toMatchObject({ clientId: DEMO.clientId, sourceIp: expect.stringContaining('127.0.0.1') });
    expect(alert?.subject).toEqual(expect.any(String));
  });

  it('credential-stuffing: 30 wrong passwords for one username from 19 addresses fire it, naming the username', async () => {
    expect(findings('credential-stuffing', log, since)).toEqual([]);
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => passwordGrantFrom(server, `127.0.0.${(i % 19) + 2}`, WRONG)),
    );
    expect(statuses.every((status) => status === 400 || status === 429)).toBe(true);
    await waitUntil(
      () => lines('authn_login_fail') + lines('authn_login_fail_max') + lines('authn_login_lock') >= 30,
      'the 30 sign-in events on standard error',
    );
    const [alert, ...more] = findings('credential-stuffing', log, since);
    expect(more).toEqual([]);
    expect(alert).toEqual({ username: DEMO.username, attempts: 30, addresses: 19 });
  });

  it('cross-origin-source: 25 writes from another site fire it, naming the address', async () => {
    expect(findings('cross-origin-source', log, since)).toEqual([]);
    for (let i = 0; i < 25; i++) {
      const res = await request(server.url)
        .post('/v1/sessions')
        .set('Sec-Fetch-Site', 'cross-site')
        .set('Origin', 'https://evil.example')
        .type('form')
        .send({ username: DEMO.username, password: WRONG });
      expect(res.status).toBe(403);
    }
    await waitUntil(() => lines('malicious_cross_site') >= 25, 'the 25 refusals on standard error');
    const [alert, ...more] = findings('cross-origin-source', log, since);
    expect(more).toEqual([]);
    expect(alert).toMatchObject({
      refused: 25,
      origins: ['https://evil.example'],
      sourceIp: expect.stringContaining('127.0.0.1'),
    });
  });
});
