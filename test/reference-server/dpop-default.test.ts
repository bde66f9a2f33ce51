import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { DEMO } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * The reference server shows DPoP (RFC 9449) by default.
 * A client that sends a proof gets a token bound to its key; one that sends
 * none still gets a bearer token, as the conventions say. `DPOP=0` turns it
 * off. The refresh grace stays off.
 */

const run = promisify(execFile);
const OAUTH4WEBAPI_DPOP_SCRIPT = join(__dirname, '..', 'fixtures', 'strict-clients', 'oauth4webapi-dpop.mjs');
const DEMO_BASIC = `Basic ${Buffer.from(`${DEMO.clientId}:${DEMO.clientSecret}`).toString('base64')}`;
const METADATA = '/.well-known/oauth-authorization-server';

const tokenRequest = (url: string, form: Record<string, string>) =>
  request(url).post('/v1/oauth2/token').type('form').set('Authorization', DEMO_BASIC).send(form);
const PASSWORD = { grant_type: 'password', username: DEMO.username, password: DEMO.password };

describe('reference server, started with no DPOP setting', () => {
  let server: RunningProcess;
  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT: '100000' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('says so in its metadata: the proof algorithms it accepts', async () => {
    const metadata = await request(server.url).get(METADATA);
    expect(metadata.body.dpop_signing_alg_values_supported).toEqual(['ES256', 'RS256', 'PS256']);
  });

  it('gives a client with a proof a bound token (oauth4webapi), which GET /v1/me takes only with a proof', async () => {
    const { stdout } = await run(
      process.execPath,
      [OAUTH4WEBAPI_DPOP_SCRIPT, server.url, DEMO.clientId, DEMO.clientSecret, DEMO.username, DEMO.password],
      { timeout: 20_000 },
    );
    const seen = JSON.parse(stdout);
    expect(seen.tokenType).toBe('dpop');
    expect(seen.meStatus).toBe(200);
    expect(seen.asBearerStatus).toBe(401);
  });

  it('gives a client without a proof a bearer token, which GET /v1/me takes', async () => {
    const res = await tokenRequest(server.url, PASSWORD);
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('bearer');
    const me = await request(server.url).get('/v1/me').set('Authorization', `Bearer ${res.body.access_token}`);
    expect(me.status).toBe(200);
  });

  it('has the refresh grace on: one retry of a rotated token answers the same tokens, a second revokes the family', async () => {
    const first = await tokenRequest(server.url, PASSWORD);
    const refresh = { grant_type: 'refresh_token', refresh_token: first.body.refresh_token };
    const rotated = await tokenRequest(server.url, refresh);
    expect(rotated.status).toBe(200);
    const retried = await tokenRequest(server.url, refresh);
    expect(retried.status).toBe(200);
    expect(retried.body.refresh_token).toBe(rotated.body.refresh_token);
    expect(retried.body.access_token).toBe(rotated.body.access_token);
    const again = await tokenRequest(server.url, refresh);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    const successor = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token });
    expect(successor.status).toBe(400);
    expect(successor.body.error).toBe('invalid_grant');
  });
});

describe('reference server with DPOP=0', () => {
  it('offers no DPoP: its metadata lists no proof algorithm', async () => {
    const server = await startServer({ RATE_LIMIT: '100000', DPOP: '0' });
    try {
      const metadata = await request(server.url).get(METADATA);
      expect(metadata.status).toBe(200);
      expect(metadata.body).not.toHaveProperty('dpop_signing_alg_values_supported');
    } finally {
      await server.stop();
    }
  });
});
