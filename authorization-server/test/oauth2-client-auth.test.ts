import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { expectHeaders } from '../../test/helpers.js';
import { ALICE, basic, postToken, TOKEN_PATH, tokenApp } from '../../test/support/oauth2.js';
import { closeServer, listen } from '../../test/support/services.js';

/**
 * RFC 6749 §5.2: a failed client authentication is `invalid_client`; the
 * answer is 401 with a `WWW-Authenticate` challenge when (and because) the
 * client authenticated with the `Authorization` header, and 400 without a
 * challenge otherwise. Checked with each authentication method, by hand and
 * with oauth4webapi, a strict client that reads a 401 with a challenge as an
 * HTTP authentication challenge.
 */

const ERROR_HEADERS = {
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store, max-age=0',
  Pragma: 'no-cache',
};
const CHALLENGE = 'Basic realm="api", charset="UTF-8"';
const FAILED = { error: 'invalid_client', error_description: 'Client authentication failed.' };

describe('client authentication failures (RFC 6749 §5.2)', () => {
  describe('client_secret_basic (the Authorization header)', () => {
    it.each([
      ['a wrong secret', basic('demo-client', 'wrong')],
      ['an unknown client', basic('nobody', 'demo-secret')],
      ['an empty secret for a confidential client', basic('demo-client', '')],
    ])('answers %s with 401 invalid_client and WWW-Authenticate: Basic', async (_case, authorization) => {
      const res = await postToken(await tokenApp(), ALICE, { Authorization: authorization });
      expect(res.status).toBe(401);
      expectHeaders(res, { ...ERROR_HEADERS, 'WWW-Authenticate': CHALLENGE });
      expect(res.body).toEqual(FAILED);
    });
  });

  describe('client_secret_post (client_id and client_secret in the body)', () => {
    it.each([
      ['a wrong secret', { client_id: 'demo-client', client_secret: 'wrong' }],
      ['an unknown client', { client_id: 'nobody', client_secret: 'demo-secret' }],
      ['a secret for a public client', { client_id: 'public-app', client_secret: 'made-up' }],
    ])('answers %s with 400 invalid_client and no challenge', async (_case, credentials) => {
      const res = await postToken(await tokenApp(), { ...ALICE, ...credentials });
      expect(res.status).toBe(400);
      expectHeaders(res, { ...ERROR_HEADERS, 'WWW-Authenticate': null });
      expect(res.body).toEqual(FAILED);
    });
  });

  describe('none (client_id alone)', () => {
    it('answers a confidential client named without its secret with 400 invalid_client and no challenge', async () => {
      const res = await postToken(await tokenApp(), { ...ALICE, client_id: 'demo-client' });
      expect(res.status).toBe(400);
      expectHeaders(res, { ...ERROR_HEADERS, 'WWW-Authenticate': null });
      expect(res.body).toEqual(FAILED);
    });

    it('answers an unknown client id with 400 invalid_client', async () => {
      const res = await postToken(await tokenApp(), { ...ALICE, client_id: 'nobody' });
      expect(res.status).toBe(400);
      expectHeaders(res, { 'WWW-Authenticate': null });
      expect(res.body).toEqual(FAILED);
    });

    it('still authenticates a public client by its id', async () => {
      const res = await postToken(await tokenApp(), { ...ALICE, client_id: 'public-app' });
      expect(res.status).toBe(200);
    });
  });

  describe('no client authentication at all, with requireClient', () => {
    it('answers 401 invalid_client with the challenge that says how to authenticate', async () => {
      const res = await postToken(await tokenApp({ requireClient: true }), ALICE);
      expect(res.status).toBe(401);
      expectHeaders(res, { ...ERROR_HEADERS, 'WWW-Authenticate': CHALLENGE });
      expect(res.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication is required.' });
    });
  });

  describe('as oauth4webapi reads them', () => {
    const run = promisify(execFile);
    const SCRIPT = resolve(__dirname, '..', '..', 'test', 'fixtures', 'oauth4webapi-password-grant.mjs');
    const grant = { username: ALICE.username, password: ALICE.password };

    it('reads invalid_client for a wrong secret in the body and for a confidential client without its secret, and a challenge for the header', async () => {
      const { server, url } = await listen(await tokenApp(), TOKEN_PATH);
      try {
        const cases = [
          { method: 'client_secret_post', clientId: 'demo-client', secret: 'demo-secret', ...grant },
          { method: 'client_secret_basic', clientId: 'demo-client', secret: 'demo-secret', ...grant },
          { method: 'none', clientId: 'public-app', ...grant },
          { method: 'client_secret_post', clientId: 'demo-client', secret: 'wrong', ...grant },
          { method: 'none', clientId: 'demo-client', ...grant },
          { method: 'client_secret_basic', clientId: 'demo-client', secret: 'wrong', ...grant },
        ];
        const { stdout } = await run(process.execPath, [SCRIPT, JSON.stringify({ tokenEndpoint: url, cases })], {
          cwd: resolve(__dirname, '..'),
          timeout: 20_000,
        });
        expect(JSON.parse(stdout)).toEqual([
          { outcome: 'tokens', tokenType: 'bearer' },
          { outcome: 'tokens', tokenType: 'bearer' },
          { outcome: 'tokens', tokenType: 'bearer' },
          { outcome: 'error', status: 400, error: 'invalid_client' },
          { outcome: 'error', status: 400, error: 'invalid_client' },
          // The header's failure is the HTTP challenge RFC 6749 §5.2 asks for.
          { outcome: 'challenge', status: 401, schemes: ['basic'] },
        ]);
      } finally {
        await closeServer(server);
      }
    });
  });
});
