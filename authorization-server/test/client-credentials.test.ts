import { execFile } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { RequestListener, Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import express, { type Express } from 'express';
import request from 'supertest';
import { errorHandler, notFound } from '../../src/errors/index.js';
import { SECURITY_EVENTS_CHANNEL, type SecurityEvent } from '../../src/events/index.js';
import { basic, decodeJwt, postToken, SCOPES, seedStores, TOKEN_OPTIONS } from '../../test/support/oauth2.js';
import { closeServer, listen } from '../../test/support/services.js';
import { type MemoryClientStore, tokenRouter } from '../src/index.js';
import { TOKEN_CACHE_CONTROL } from '../src/protocol/token-errors.js';

const run = promisify(execFile);
const OAUTH4WEBAPI_SCRIPT = join(
  __dirname,
  '..',
  '..',
  'test',
  'fixtures',
  'strict-clients',
  'oauth4webapi-client-credentials.mjs',
);
const SERVICE = basic('demo-service', 'service-secret');

async function registerMachineClients(clients: MemoryClientStore): Promise<void> {
  await clients.add({
    id: 'demo-service',
    type: 'confidential',
    secret: 'service-secret',
    grants: ['client_credentials'],
    scopes: ['users:read', 'exports'],
  });
  await clients.add({ id: 'spa', type: 'public', grants: ['refresh_token'] });
}

/** The package's token router alone, as a team mounts it, with the issuer it is reached at. */
async function machineApp(issuer: string = TOKEN_OPTIONS.issuer): Promise<Express> {
  const { users, clients } = await seedStores();
  await registerMachineClients(clients);
  const app = express();
  app.use(tokenRouter({ ...TOKEN_OPTIONS, issuer, scopes: SCOPES, users, clients }));
  app.use(notFound(), errorHandler({ production: true, log: false }));
  return app;
}

describe('the client credentials grant (RFC 6749 §4.4)', () => {
  let app: Express;
  beforeAll(async () => {
    app = await machineApp();
  });

  describe('for a confidential client registered for it', () => {
    it('issues an access token whose subject is the client, without a refresh token (§4.4.3)', async () => {
      const res = await postToken(app, { grant_type: 'client_credentials' }, { Authorization: SERVICE });
      expect(res.status).toBe(200);
      // RFC 6749 §5.1: the answer holding the token is never stored.
      expect(res.headers['cache-control']).toBe(TOKEN_CACHE_CONTROL);
      expect(res.body).toEqual({
        access_token: expect.any(String),
        token_type: 'bearer',
        expires_in: 3600,
        scope: 'users:read exports',
      });
      const claims = decodeJwt(res.body.access_token).payload;
      expect(claims).toMatchObject({ sub: 'demo-service', client_id: 'demo-service', scope: 'users:read exports' });
      expect(claims).not.toHaveProperty('sid');
    });

    it('narrows to the scopes asked for, omitting `scope` when it is what was asked (RFC 6749 §5.1)', async () => {
      const res = await postToken(app, { grant_type: 'client_credentials', scope: 'exports' }, { Authorization: SERVICE });
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty('scope');
      expect(decodeJwt(res.body.access_token).payload.scope).toBe('exports');
    });

    it('refuses a scope outside its registration with invalid_scope', async () => {
      const res = await postToken(app, { grant_type: 'client_credentials', scope: 'users:write' }, { Authorization: SERVICE });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_scope', error_description: 'The requested scope is not allowed.' });
    });

    it('accepts the credentials in the body too (client_secret_post)', async () => {
      const res = await postToken(app, {
        grant_type: 'client_credentials',
        client_id: 'demo-service',
        client_secret: 'service-secret',
      });
      expect(res.status).toBe(200);
    });

    it('publishes authn_token_created naming the client and the grant, with no secret', async () => {
      const events: SecurityEvent[] = [];
      const listener = (event: unknown) => events.push(event as SecurityEvent);
      subscribe(SECURITY_EVENTS_CHANNEL, listener);
      try {
        const res = await postToken(app, { grant_type: 'client_credentials' }, { Authorization: SERVICE });
        expect(res.status).toBe(200);
      } finally {
        unsubscribe(SECURITY_EVENTS_CHANNEL, listener);
      }
      expect(events).toEqual([
        expect.objectContaining({
          event: 'authn_token_created',
          outcome: 'success',
          subject: 'demo-service',
          clientId: 'demo-service',
          description: 'Tokens issued by the client_credentials grant.',
        }),
      ]);
      expect(JSON.stringify(events)).not.toContain('service-secret');
    });
  });

  it('is not listed in the metadata of a router without a client store (no client can be registered for it)', async () => {
    const { users } = await seedStores();
    const alone = express().use(tokenRouter({ ...TOKEN_OPTIONS, users }));
    const res = await request(alone).get('/.well-known/oauth-authorization-server');
    expect(res.body.grant_types_supported).toEqual(['password', 'refresh_token']);
    const refused = await postToken(alone, { grant_type: 'client_credentials' });
    expect(refused.body.error).toBe('unsupported_grant_type');
  });

  describe('refused', () => {
    it('to a client not registered for it: unauthorized_client', async () => {
      const res = await postToken(
        app,
        { grant_type: 'client_credentials' },
        { Authorization: basic('demo-client', 'demo-secret') },
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'unauthorized_client',
        error_description: 'This client may not use the client_credentials grant.',
      });
    });

    it('to a public client: unauthorized_client', async () => {
      const res = await postToken(app, { grant_type: 'client_credentials', client_id: 'spa' });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('unauthorized_client');
    });

    it('without client authentication: invalid_client, 401 with the Basic challenge (§4.4.2, §5.2)', async () => {
      const res = await postToken(app, { grant_type: 'client_credentials' });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="api", charset="UTF-8"');
      expect(res.body.error).toBe('invalid_client');
    });

    it('with a wrong secret in the Basic header: invalid_client, 401 with the challenge (§5.2)', async () => {
      const res = await postToken(app, { grant_type: 'client_credentials' }, { Authorization: basic('demo-service', 'nope') });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="api", charset="UTF-8"');
      expect(res.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed.' });
    });
  });
});

describe('the client credentials grant with oauth4webapi as a strict client', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    let app: RequestListener = (_req, res) => res.end();
    ({ server, url } = await listen((req, res) => app(req, res)));
    // The issuer is the address the client discovers it at (RFC 8414 §3.3).
    app = await machineApp(url);
  });
  afterAll(async () => {
    await closeServer(server);
  });

  it('discovers the grant, gets a token for the client, and reads the refusals as RFC 6749 §5.2 errors', async () => {
    const { stdout } = await run(
      process.execPath,
      [OAUTH4WEBAPI_SCRIPT, url, 'demo-service', 'service-secret', 'exports', 'spa'],
      {
        timeout: 20_000,
      },
    );
    const seen = JSON.parse(stdout);
    expect(seen.grantTypes).toEqual(['password', 'refresh_token', 'client_credentials']);
    expect(seen.tokenType).toBe('bearer');
    expect(seen.expiresIn).toBe(3600);
    expect(seen.hasRefreshToken).toBe(false);
    expect(decodeJwt(seen.accessToken).payload).toMatchObject({ iss: url, sub: 'demo-service', scope: 'exports' });
    expect(seen.asPublic).toEqual({ status: 400, error: 'unauthorized_client' });
    expect(seen.wrongSecret).toEqual({ status: 401, schemes: ['basic'] });
  });
});
