import express, { type Express } from 'express';
import request from 'supertest';
import { errorHandler, notFound } from '../../src/errors/index.js';
import { basic, decodeJwt, postToken, SCOPES, seedStores, TOKEN_OPTIONS } from '../../test/support/oauth2.js';
import { GRANTS } from '../src/grants/index.js';
import { tokenRouter } from '../src/index.js';
import { TOY_GRANT_TYPE } from './fixtures/toy-grant.js';

// Adding a grant is one module and one line of the table: here the line, the module is ./fixtures/toy-grant.ts.
jest.mock('../src/grants/index.js', () => {
  const table = jest.requireActual('../src/grants/index.js');
  return { ...table, GRANTS: [...table.GRANTS, jest.requireActual('./fixtures/toy-grant.js').TOY_GRANT] };
});

async function toyApp(): Promise<Express> {
  const { users, clients } = await seedStores();
  await clients.add({ id: 'toy-app', secret: 'toy-secret', grants: [TOY_GRANT_TYPE] });
  const app = express();
  app.use(tokenRouter({ ...TOKEN_OPTIONS, scopes: SCOPES, users, clients }));
  app.use(notFound(), errorHandler({ production: true, log: false }));
  return app;
}

describe('the grant table', () => {
  let app: Express;
  beforeAll(async () => {
    app = await toyApp();
  });

  it('holds the toy grant after the built-in ones (the one line this test adds)', () => {
    expect(GRANTS.map((grant) => grant.type)).toEqual([
      'password',
      'refresh_token',
      'authorization_code',
      'client_credentials',
      TOY_GRANT_TYPE,
    ]);
  });

  describe('an extension grant added by one module and one line (RFC 6749 §4.5)', () => {
    it('is answered for a client registered for it, with its own parameter read from the form', async () => {
      const res = await postToken(
        app,
        { grant_type: TOY_GRANT_TYPE, toy_assertion: 'let-me-in' },
        { Authorization: basic('toy-app', 'toy-secret') },
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'bearer', expires_in: 3600 });
      expect(decodeJwt(res.body.access_token).payload).toMatchObject({ sub: 'toy:toy-app', client_id: 'toy-app' });
      expect(decodeJwt(res.body.access_token).payload).not.toHaveProperty('sid');
    });

    it('refuses a wrong assertion with its own invalid_grant', async () => {
      const res = await postToken(
        app,
        { grant_type: TOY_GRANT_TYPE, toy_assertion: 'nope' },
        { Authorization: basic('toy-app', 'toy-secret') },
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'The toy assertion is not valid.' });
    });

    it('refuses its parameter repeated, as every defined parameter (RFC 6749 §3.2)', async () => {
      const res = await postToken(
        app,
        { grant_type: TOY_GRANT_TYPE, toy_assertion: ['let-me-in', 'let-me-in'] },
        { Authorization: basic('toy-app', 'toy-secret') },
      );
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    });

    it('is listed in the metadata’s grant_types_supported', async () => {
      const res = await request(app).get('/.well-known/oauth-authorization-server');
      expect(res.status).toBe(200);
      expect(res.body.grant_types_supported).toEqual(['password', 'refresh_token', 'client_credentials', TOY_GRANT_TYPE]);
    });
  });

  describe('a client not registered for a grant', () => {
    it('gets unauthorized_client for the extension grant (RFC 6749 §5.2)', async () => {
      const res = await postToken(
        app,
        { grant_type: TOY_GRANT_TYPE, toy_assertion: 'let-me-in' },
        { Authorization: basic('demo-client', 'demo-secret') },
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'unauthorized_client',
        error_description: `This client may not use the ${TOY_GRANT_TYPE} grant.`,
      });
    });

    it('gets unauthorized_client for the password grant when registered for refresh_token only', async () => {
      const res = await postToken(
        app,
        { grant_type: 'password', username: 'alice', password: 'wonderland-rabbit-hole' },
        { Authorization: basic('refresh-only', 'r-secret') },
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'unauthorized_client',
        error_description: 'This client may not use the password grant.',
      });
    });
  });

  describe('a grant that needs client authentication', () => {
    it('answers a request without it invalid_client, 401 with the Basic challenge (RFC 6749 §5.2)', async () => {
      const res = await postToken(app, { grant_type: TOY_GRANT_TYPE, toy_assertion: 'let-me-in' });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="api", charset="UTF-8"');
      expect(res.body.error).toBe('invalid_client');
    });
  });

  describe('a grant type in no row', () => {
    it('answers unsupported_grant_type', async () => {
      const res = await postToken(
        app,
        { grant_type: 'https://grants.example.test/unknown' },
        { Authorization: basic('toy-app', 'toy-secret') },
      );
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('unsupported_grant_type');
    });
  });
});
