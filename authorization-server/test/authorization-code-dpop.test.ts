import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { basic, decodeJwt } from '../../test/support/oauth2.js';
import { closeServer } from '../../test/support/services.js';
import {
  approveConsent,
  authorize,
  authorizeQuery,
  type CodeServer,
  codeServer,
  PARTNER,
  pkce,
  SPA,
} from './support/code-flow.js';

/**
 * DPoP with the authorization code grant (RFC 9449 §10, §5), with real
 * proofs: a code bound by `dpop_jkt` is redeemed only with a proof of that
 * key, and the tokens it gives are bound to the key proved at the exchange.
 */

const TOKEN = '/v1/oauth2/token';

interface ProofKey {
  readonly privateKey: KeyObject;
  readonly jwk: Record<string, unknown>;
  /** RFC 7638 thumbprint (SHA-256, base64url), the value of `dpop_jkt` and `cnf.jkt`. */
  readonly jkt: string;
}

function newKey(): ProofKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' }) as Record<string, string>;
  // RFC 7638 §3.2: the required members of an EC key, in lexicographic order, no white space.
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return { privateKey, jwk, jkt: createHash('sha256').update(canonical).digest('base64url') };
}

/** A DPoP proof (RFC 9449 §4.2) of `key` for a POST to the server's token endpoint. */
const proofFor = (server: CodeServer, key: ProofKey): string =>
  jwt.sign(
    { jti: randomUUID(), iat: Math.floor(Date.now() / 1000), htm: 'POST', htu: `${server.issuer}${TOKEN}` },
    key.privateKey,
    { algorithm: 'ES256', header: { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk } as jwt.JwtHeader },
  );

const dpopServer = () => codeServer({ router: { dpop: true } });

/** A code for the first-party SPA; `jkt` is sent as `dpop_jkt` when given. */
async function spaCode(server: CodeServer, jkt?: string) {
  const { verifier, challenge } = pkce();
  const query = authorizeQuery(SPA.id, SPA.redirect, challenge, { dpop_jkt: jkt });
  const { location } = await authorize(server, query, await server.signIn());
  const code = location?.searchParams.get('code');
  if (typeof code !== 'string') throw new Error(`no code: ${location}`);
  return { code, code_verifier: verifier, redirect_uri: SPA.redirect, client_id: SPA.id };
}

const post = (server: CodeServer, form: Record<string, string>, key?: ProofKey, headers: Record<string, string> = {}) => {
  const req = request(server.app).post(TOKEN).type('form').set(headers);
  if (key !== undefined) req.set('DPoP', proofFor(server, key));
  return req.send(form);
};

const exchange = (server: CodeServer, form: Record<string, string>, key?: ProofKey, headers?: Record<string, string>) =>
  post(server, { grant_type: 'authorization_code', ...form }, key, headers);

const refresh = (server: CodeServer, refreshToken: string, key?: ProofKey) =>
  post(server, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: SPA.id }, key);

describe('DPoP with the authorization code grant (RFC 9449 §10)', () => {
  it('binds the code to dpop_jkt: a proof of that key gets DPoP tokens whose cnf.jkt is the key, and the refresh is bound too', async () => {
    const server = await dpopServer();
    const key = newKey();
    const res = await exchange(server, await spaCode(server, key.jkt), key);
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    expect(decodeJwt(res.body.access_token).payload.cnf).toEqual({ jkt: key.jkt });
    // RFC 9449 §5: a public client's refresh token is bound to the key; a refresh proves it again.
    const refreshed = await refresh(server, res.body.refresh_token, key);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.token_type).toBe('DPoP');
    expect(decodeJwt(refreshed.body.access_token).payload.cnf).toEqual({ jkt: key.jkt });
  });

  it('refuses a refresh of the bound family with no proof or a proof of another key: 400 invalid_dpop_proof', async () => {
    const server = await dpopServer();
    const key = newKey();
    const { body } = await exchange(server, await spaCode(server, key.jkt), key);
    for (const other of [undefined, newKey()]) {
      const res = await refresh(server, body.refresh_token, other);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_dpop_proof');
    }
    // The thief's attempts took nothing from the holder of the key.
    expect((await refresh(server, body.refresh_token, key)).status).toBe(200);
  });

  it.each([
    ['a proof of another key', newKey()],
    ['no proof', undefined],
  ])('refuses the exchange of a bound code with %s: 400 invalid_dpop_proof, no token', async (_, sent) => {
    const server = await dpopServer();
    const key = newKey();
    const form = await spaCode(server, key.jkt);
    const res = await exchange(server, form, sent);
    expect(res.status).toBe(400);
    expect(res.headers['cache-control']).toBe('no-store, max-age=0');
    expect(res.body).toEqual({ error: 'invalid_dpop_proof', error_description: expect.any(String) });
    // The code is single-use (RFC 6749 §4.1.2): the refused attempt spent it.
    expect((await exchange(server, form, key)).body.error).toBe('invalid_grant');
  });

  it('binds the tokens to the proof of the exchange when the request had no dpop_jkt (RFC 9449 §5)', async () => {
    const server = await dpopServer();
    const key = newKey();
    const res = await exchange(server, await spaCode(server), key);
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    expect(decodeJwt(res.body.access_token).payload.cnf).toEqual({ jkt: key.jkt });
    expect((await refresh(server, res.body.refresh_token)).body.error).toBe('invalid_dpop_proof');
    expect((await refresh(server, res.body.refresh_token, key)).status).toBe(200);
  });

  it('gives bearer tokens to an exchange with no proof when the request had no dpop_jkt', async () => {
    const server = await dpopServer();
    const res = await exchange(server, await spaCode(server));
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('bearer');
    expect(decodeJwt(res.body.access_token).payload.cnf).toBeUndefined();
  });

  it('binds a confidential client’s access token to its proof; its refresh token stays bound to its authentication', async () => {
    const server = await dpopServer();
    const key = newKey();
    const { verifier, challenge } = pkce();
    const query = authorizeQuery(PARTNER.id, PARTNER.redirect, challenge, { scope: 'users:read', dpop_jkt: key.jkt });
    const location = await approveConsent(server, query, await server.signIn());
    const form = { code: location.searchParams.get('code') as string, code_verifier: verifier, redirect_uri: PARTNER.redirect };
    const auth = { Authorization: basic(PARTNER.id, PARTNER.secret) };
    const res = await exchange(server, form, key, auth);
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    expect(decodeJwt(res.body.access_token).payload.cnf).toEqual({ jkt: key.jkt });
    const refreshed = await post(server, { grant_type: 'refresh_token', refresh_token: res.body.refresh_token }, undefined, auth);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.token_type).toBe('bearer');
  });

  it('refuses dpop_jkt at the authorization endpoint when DPoP is off, back at the client', async () => {
    const server = await codeServer();
    const { challenge } = pkce();
    const query = authorizeQuery(SPA.id, SPA.redirect, challenge, { dpop_jkt: newKey().jkt });
    const { location } = await authorize(server, query, await server.signIn());
    expect(location?.searchParams.get('error')).toBe('invalid_request');
    expect(location?.searchParams.get('code')).toBeNull();
  });

  describe('with oauth4webapi’s own DPoP support as a strict client', () => {
    const run = promisify(execFile);
    const SCRIPT = resolve(__dirname, 'fixtures', 'oauth4webapi-code-flow.mjs');

    it('sends dpop_jkt, exchanges the code with its proof, gets DPoP tokens bound to its key, refreshes them', async () => {
      const server = await dpopServer();
      const http = await server.listen();
      try {
        const input = {
          issuer: server.issuer,
          clientId: SPA.id,
          redirectUri: 'http://127.0.0.1:53682/callback',
          cookie: await server.signIn(),
          scope: 'users:read',
          dpop: true,
        };
        const { stdout } = await run(process.execPath, [SCRIPT, JSON.stringify(input)], {
          cwd: resolve(__dirname, '..'),
          timeout: 20_000,
        });
        expect(JSON.parse(stdout)).toEqual({
          authorizeStatus: 302,
          landedOn: 'http://127.0.0.1:53682/callback',
          // RFC 6749 §5.1: scope is left out when it is the one requested.
          tokens: { tokenType: 'dpop', refresh: true },
          bound: { cnfIsOwnKey: true },
          rotated: true,
          refreshed: { tokenType: 'dpop', cnfIsOwnKey: true },
          replay: { status: 400, error: 'invalid_grant' },
          afterReplay: { status: 400, error: 'invalid_grant' },
        });
      } finally {
        await closeServer(http);
      }
    });
  });
});
