import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { type RunningProcess, startServer } from './harness.js';

/**
 * ACCESS_TOKEN_ALG=ES256: the reference server signs access tokens with a
 * private key and publishes the public one at its metadata's `jwks_uri`; a
 * second service, built from the package's public exports, verifies its
 * tokens knowing only the issuer URL and its audience (discovery, then the
 * key set). With the default HS256 nothing is published.
 */

const AUDIENCE = 'urn:express-api-conventions:reference-server';
const VERIFIER = join(__dirname, '..', 'fixtures', 'jwks-verifier.cjs');

async function signIn(server: RunningProcess): Promise<string> {
  const res = await fetch(`${server.url}/v1/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username: 'alice', password: 'wonderland-rabbit-hole' }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Starts the second service and waits for its address. */
async function startVerifier(issuer: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [VERIFIER], {
    cwd: join(__dirname, '..', '..'),
    env: { PATH: process.env.PATH ?? '', ISSUER: issuer, AUDIENCE },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  const url = /http:\/\/127\.0\.0\.1:\d+/.exec(line.toString())?.[0];
  if (url === undefined) throw new Error(`the verifier did not start: ${line.toString()}`);
  return { url, child };
}

const headerOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString());

describe('two services: the reference server signs with ES256, another verifies through jwks_uri discovery alone', () => {
  let server: RunningProcess;
  let verifier: { url: string; child: ChildProcess };
  beforeAll(async () => {
    server = await startServer({ ACCESS_TOKEN_ALG: 'ES256' });
    verifier = await startVerifier(server.url);
  }, 120_000);
  afterAll(async () => {
    verifier?.child.kill('SIGTERM');
    await server?.stop();
  });

  it('names jwks_uri in its metadata and serves one public ES256 key there', async () => {
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as {
      issuer: string;
      jwks_uri: string;
    };
    expect(metadata.issuer).toBe(server.url);
    expect(metadata.jwks_uri).toBe(`${server.url}/v1/oauth2/keys`);
    const res = await fetch(metadata.jwks_uri);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('etag')).toMatch(/^"[^"]+"$/);
    const { keys } = (await res.json()) as { keys: Record<string, unknown>[] };
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(keys[0]).not.toHaveProperty('d');
  });

  it('signs with ES256, and accepts its own tokens', async () => {
    const token = await signIn(server);
    expect(headerOf(token)).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    const me = await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
  });

  it('has its tokens accepted by the second service, and a tampered one refused with the 401', async () => {
    const token = await signIn(server);
    const res = await fetch(`${verifier.url}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { subject: string }).subject).toMatch(/^[1-9][0-9]*$/);
    const refused = await fetch(`${verifier.url}/v1/me`, { headers: { authorization: `Bearer ${token.slice(0, -4)}AAAA` } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(refused.headers.get('pragma')).toBe('no-cache');
    expect(await refused.json()).toMatchObject({ error: 'invalid_token' });
  });
});

describe('the reference server with the default HS256', () => {
  it('publishes no key and names no jwks_uri', async () => {
    const server = await startServer();
    try {
      const metadata = await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json();
      expect(metadata).not.toHaveProperty('jwks_uri');
      expect((await fetch(`${server.url}/v1/oauth2/keys`)).status).toBe(404);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
