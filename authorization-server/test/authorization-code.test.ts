import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { basic, decodeJwt } from '../../test/support/oauth2.js';
import { closeServer } from '../../test/support/services.js';
import { useFakeDate } from '../../test/support/timing.js';
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
 * The authorization code grant with PKCE (RFC 6749 §4.1, RFC 7636, RFC 9700
 * §2.1, §4.1, §4.5, RFC 8252 §7.3, RFC 9207), at the package level: a token
 * router with its authorization endpoint, users signed in by a session cookie.
 */

const TOKEN = '/v1/oauth2/token';
const AUTHORIZE = '/v1/oauth2/authorize';

/** A code for the first-party SPA, issued to a signed-in user. */
async function spaCode(server: CodeServer, redirectUri: string = SPA.redirect) {
  const { verifier, challenge } = pkce();
  const { location } = await authorize(server, authorizeQuery(SPA.id, redirectUri, challenge), await server.signIn());
  return { code: location?.searchParams.get('code') as string, verifier, redirectUri };
}

const exchange = (server: CodeServer, form: Record<string, string>, headers: Record<string, string> = {}) =>
  request(server.app)
    .post(TOKEN)
    .type('form')
    .set(headers)
    .send({ grant_type: 'authorization_code', ...form });

describe('the authorization code grant with PKCE', () => {
  describe('the server metadata (RFC 8414, RFC 9207)', () => {
    it('advertises the authorization endpoint, the code response type, S256 and the iss parameter', async () => {
      const server = await codeServer();
      const res = await request(server.app).get('/.well-known/oauth-authorization-server');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        issuer: server.issuer,
        authorization_endpoint: `${server.issuer}${AUTHORIZE}`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
      });
      expect(res.body.grant_types_supported).toContain('authorization_code');
    });
  });

  describe('with oauth4webapi as a strict client', () => {
    const run = promisify(execFile);
    const SCRIPT = resolve(__dirname, 'fixtures', 'oauth4webapi-code-flow.mjs');

    it('discovers, validates the authorization response (state, iss), exchanges the code, refreshes, and is refused the code twice', async () => {
      const server = await codeServer();
      const http = await server.listen();
      try {
        // RFC 8252 §7.3: a loopback redirect URI on the port the app was given.
        const redirectUri = 'http://127.0.0.1:53682/callback';
        const input = {
          issuer: server.issuer,
          clientId: SPA.id,
          redirectUri,
          cookie: await server.signIn(),
          scope: 'users:read',
        };
        const { stdout } = await run(process.execPath, [SCRIPT, JSON.stringify(input)], {
          cwd: resolve(__dirname, '..'),
          timeout: 20_000,
        });
        expect(JSON.parse(stdout)).toEqual({
          authorizeStatus: 302,
          landedOn: 'http://127.0.0.1:53682/callback',
          tokens: { tokenType: 'bearer', refresh: true },
          rotated: true,
          replay: { status: 400, error: 'invalid_grant' },
          // RFC 6749 §4.1.2: what the code issued is revoked, rotated tokens included.
          afterReplay: { status: 400, error: 'invalid_grant' },
        });
      } finally {
        await closeServer(http);
      }
    });
  });

  describe('the authorization response (RFC 6749 §4.1.2)', () => {
    it('redirects to the redirect URI with a code, the state and iss, uncached', async () => {
      const server = await codeServer();
      const { challenge } = pkce();
      const { res, location } = await authorize(server, authorizeQuery(SPA.id, SPA.redirect, challenge), await server.signIn());
      expect(res.status).toBe(302);
      expect(res.headers['cache-control']).toBe('no-store, max-age=0');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(`${location?.origin}${location?.pathname}`).toBe(SPA.redirect);
      expect([...(location?.searchParams.keys() ?? [])].sort()).toEqual(['code', 'iss', 'state']);
      expect(location?.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(location?.searchParams.get('state')).toBe('xyz-state');
      expect(location?.searchParams.get('iss')).toBe(server.issuer);
    });

    it('uses the single registered redirect URI when the request names none (RFC 6749 §3.1.2.3)', async () => {
      const server = await codeServer();
      const { challenge } = pkce();
      const query = authorizeQuery(SPA.id, SPA.redirect, challenge, { client_id: 'other-spa', redirect_uri: undefined });
      const { location } = await authorize(server, query, await server.signIn());
      expect(`${location?.origin}${location?.pathname}`).toBe('http://127.0.0.1/other');
    });

    it('issues tokens for the code, naming the user, the client and the scopes', async () => {
      const server = await codeServer();
      const { code, verifier, redirectUri } = await spaCode(server);
      const res = await exchange(server, { code, code_verifier: verifier, redirect_uri: redirectUri, client_id: SPA.id });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'users:read users:write' });
      expect(decodeJwt(res.body.access_token).payload).toMatchObject({
        sub: 'u-1',
        client_id: SPA.id,
        scope: 'users:read users:write',
      });
    });
  });

  describe('errors sent back to the client (RFC 6749 §4.1.2.1)', () => {
    it.each([
      ['no PKCE', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
      ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request'],
      ['a challenge without its method (plain by default)', { code_challenge_method: undefined }, 'invalid_request'],
      ['a malformed challenge', { code_challenge: 'too-short' }, 'invalid_request'],
      ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
      ['no response_type', { response_type: undefined }, 'invalid_request'],
      ['an unknown scope', { scope: 'admin' }, 'invalid_scope'],
    ])('answers %s with a redirect carrying error, state and iss', async (_case, extra, error) => {
      const server = await codeServer();
      const { challenge } = pkce();
      const { res, location } = await authorize(
        server,
        authorizeQuery(SPA.id, SPA.redirect, challenge, extra),
        await server.signIn(),
      );
      expect(res.status).toBe(302);
      expect(`${location?.origin}${location?.pathname}`).toBe(SPA.redirect);
      expect(location?.searchParams.get('error')).toBe(error);
      expect(location?.searchParams.get('state')).toBe('xyz-state');
      expect(location?.searchParams.get('iss')).toBe(server.issuer);
      expect(location?.searchParams.has('code')).toBe(false);
    });
  });

  describe('errors never redirected: an unknown client, an unregistered or look-alike redirect URI', () => {
    it.each([
      ['an unknown client', 'nobody', SPA.redirect, 'invalid_client'],
      ['no client_id', '', SPA.redirect, 'invalid_request'],
      ['an unregistered redirect URI', SPA.id, 'https://evil.example/callback', 'invalid_request'],
      ['a look-alike host', SPA.id, 'http://127.0.0.1.evil.example/callback', 'invalid_request'],
      ['userinfo before the loopback host', SPA.id, 'http://127.0.0.1@evil.example/callback', 'invalid_request'],
      ['userinfo on the loopback host', SPA.id, 'http://evil@127.0.0.1/callback', 'invalid_request'],
      ['a fragment', SPA.id, 'http://127.0.0.1/callback#x', 'invalid_request'],
      ['another path on the loopback host', SPA.id, 'http://127.0.0.1:8080/callback/../evil', 'invalid_request'],
      ['localhost on another port (a name, not a loopback IP)', SPA.id, 'http://localhost:5174/callback', 'invalid_request'],
      ['another redirect URI of another client', SPA.id, 'http://127.0.0.1/other', 'invalid_request'],
    ])('answers %s with 400 and no Location', async (_case, clientId, redirectUri, error) => {
      const server = await codeServer();
      const { challenge } = pkce();
      const { res } = await authorize(server, authorizeQuery(clientId, redirectUri, challenge), await server.signIn());
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.headers['cache-control']).toBe('no-store, max-age=0');
      expect(res.body).toEqual({ error, error_description: expect.any(String) });
    });

    it('answers a redirect URI that is not the only one registered, when none is named, with 400', async () => {
      const server = await codeServer();
      const { challenge } = pkce();
      const query = authorizeQuery('two-uris', '', challenge, { redirect_uri: undefined });
      const { res } = await authorize(server, query, await server.signIn());
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
    });

    it('shows a browser a plain HTML page that repeats nothing of the request', async () => {
      const server = await codeServer();
      const { challenge } = pkce();
      const evil = 'https://evil.example/<script>alert(1)</script>';
      const { res } = await authorize(server, authorizeQuery(SPA.id, evil, challenge), await server.signIn(), 'text/html');
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe("default-src 'none'");
      expect(res.text).toContain('invalid_request');
      expect(res.text).not.toContain('<script>');
      expect(res.text).not.toContain('evil.example');
    });

    it('accepts the registered loopback URI on any port, and localhost only as registered', async () => {
      const server = await codeServer();
      const cookie = await server.signIn();
      for (const uri of ['http://127.0.0.1:1/callback', 'http://127.0.0.1:65535/callback', 'http://localhost:5173/callback']) {
        const { location } = await authorize(server, authorizeQuery(SPA.id, uri, pkce().challenge), cookie);
        expect(`${location?.origin}${location?.pathname}`).toBe(new URL(uri).href.replace(/\/$/, ''));
        expect(location?.searchParams.has('code')).toBe(true);
      }
    });
  });

  describe('the code exchange (RFC 6749 §4.1.3, RFC 7636 §4.6)', () => {
    it.each([
      ['a wrong verifier', (c: Exchange) => ({ ...c, code_verifier: pkce().verifier })],
      ['another redirect URI', (c: Exchange) => ({ ...c, redirect_uri: 'http://127.0.0.1:9999/callback' })],
      ['another client', (c: Exchange) => ({ ...c, client_id: 'other-spa' })],
      ['an unknown code', (c: Exchange) => ({ ...c, code: pkce().verifier })],
    ])('refuses %s with 400 invalid_grant', async (_case, change) => {
      const server = await codeServer();
      const { code, verifier, redirectUri } = await spaCode(server);
      const form = change({ code, code_verifier: verifier, redirect_uri: redirectUri, client_id: SPA.id });
      const res = await exchange(server, form);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    });

    it('refuses a code without its verifier with 400 invalid_request', async () => {
      const server = await codeServer();
      const { code, redirectUri } = await spaCode(server);
      const res = await exchange(server, { code, redirect_uri: redirectUri, client_id: SPA.id });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    });

    it('refuses a code presented twice, and revokes the tokens the first presentation issued', async () => {
      const server = await codeServer();
      const { code, verifier, redirectUri } = await spaCode(server);
      const form = { code, code_verifier: verifier, redirect_uri: redirectUri, client_id: SPA.id };
      const first = await exchange(server, form);
      expect(first.status).toBe(200);
      const second = await exchange(server, form);
      expect(second.status).toBe(400);
      expect(second.body.error).toBe('invalid_grant');
      const family = decodeJwt(first.body.access_token).payload.sid as string;
      expect(server.revokedFamilies.isRevoked(family)).toBe(true);
      const refresh = await request(server.app)
        .post(TOKEN)
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: SPA.id });
      expect(refresh.status).toBe(400);
      expect(refresh.body.error).toBe('invalid_grant');
    });

    it('refuses a code after its 60 seconds (fake clock)', async () => {
      useFakeDate();
      try {
        const server = await codeServer();
        const { code, verifier, redirectUri } = await spaCode(server);
        jest.setSystemTime(Date.now() + 60_000);
        const res = await exchange(server, { code, code_verifier: verifier, redirect_uri: redirectUri, client_id: SPA.id });
        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_grant');
      } finally {
        jest.useRealTimers();
      }
    });

    it('answers a code exchanged at 59 seconds', async () => {
      useFakeDate();
      try {
        const server = await codeServer();
        const { code, verifier, redirectUri } = await spaCode(server);
        jest.setSystemTime(Date.now() + 59_000);
        const res = await exchange(server, { code, code_verifier: verifier, redirect_uri: redirectUri, client_id: SPA.id });
        expect(res.status).toBe(200);
      } finally {
        jest.useRealTimers();
      }
    });

    it('requires a confidential client to authenticate', async () => {
      const server = await codeServer();
      const cookie = await server.signIn();
      const { verifier, challenge } = pkce();
      const consent = await approveConsent(server, authorizeQuery(PARTNER.id, PARTNER.redirect, challenge), cookie);
      const code = consent.searchParams.get('code') as string;
      const form = { code, code_verifier: verifier, redirect_uri: PARTNER.redirect };
      const unauthenticated = await exchange(server, { ...form, client_id: PARTNER.id });
      expect(unauthenticated.status).toBe(400);
      expect(unauthenticated.body.error).toBe('invalid_client');
      const res = await exchange(server, form, { Authorization: basic(PARTNER.id, PARTNER.secret) });
      expect(res.status).toBe(200);
      // RFC 6749 §5.1: the request named no scope, so the answer says which it got.
      expect(res.body.scope).toBe('users:read');
      expect(decodeJwt(res.body.access_token).payload).toMatchObject({ sub: 'u-1', client_id: PARTNER.id, scope: 'users:read' });
    });
  });
});

type Exchange = Record<string, string>;
