import bcrypt from 'bcryptjs';
import express, { type Express } from 'express';
import {
  MemoryClientStore,
  MemoryUserStore,
  PasswordHasher,
  type TokenRouterOptions,
  tokenRouter,
} from 'express-api-conventions-authorization-server';
import request from 'supertest';
import { errorHandler, notFound } from '../../src/errors/index.js';
import type { AccessTokenKey } from '../../src/oauth2/index.js';

/** bcrypt's lowest cost: the suite stays fast; the code path is the same as at cost 12. */
export const TEST_COST = 4;
export const SECRET = 'a-test-secret-of-at-least-32-bytes-long!';
export const KEYS: AccessTokenKey[] = [{ kid: 'k1', algorithm: 'HS256', secret: SECRET }];
export const ISSUER = 'https://api.example.test';
export const AUDIENCE = 'https://api.example.test/v1';
export const TOKEN_PATH = '/v1/oauth2/token';
export const SCOPES = ['users:read', 'users:write', 'exports'];

export const testHasher = new PasswordHasher({ threads: 2, cost: TEST_COST });

/** Users and clients of the scenarios, hashed at the test cost. */
export async function seedStores(): Promise<{ users: MemoryUserStore; clients: MemoryClientStore }> {
  const users = new MemoryUserStore();
  await users.add({ username: 'alice', subject: 'u-1', passwordHash: bcrypt.hashSync('wonderland-rabbit-hole', TEST_COST) });
  await users.add({
    username: 'reader',
    subject: 'u-2',
    passwordHash: bcrypt.hashSync('read-only-pass', TEST_COST),
    scopes: ['users:read'],
  });
  const clients = new MemoryClientStore();
  await clients.add({ id: 'demo-client', secret: 'demo-secret' });
  await clients.add({ id: 'public-app' });
  await clients.add({ id: 'read-app', secret: 'read-secret', scopes: ['users:read'] });
  await clients.add({ id: 'refresh-only', secret: 'r-secret', grants: ['refresh_token'] });
  await clients.add({ id: 'blocked-app', secret: 'blocked-secret', blocked: true });
  await clients.add({ id: 'odd:id é', secret: 'odd secret:%' });
  return { users, clients };
}

/** What every test token router shares: the test keys, issuer and audience, and a fast hasher. */
export const TOKEN_OPTIONS = {
  keys: KEYS,
  issuer: ISSUER,
  audience: AUDIENCE,
  passwordHasher: testHasher,
  passwordCost: TEST_COST,
} as const;

export type TestTokenOptions = Partial<TokenRouterOptions>;

/** An app with the token router and the error handler, as a service mounts them. */
export async function tokenApp(options: TestTokenOptions = {}): Promise<Express> {
  const stores = await seedStores();
  const app = express();
  app.use(
    tokenRouter({
      keys: KEYS,
      issuer: ISSUER,
      audience: AUDIENCE,
      scopes: SCOPES,
      passwordHasher: testHasher,
      passwordCost: TEST_COST,
      ...stores,
      ...options,
    }),
  );
  app.use(notFound(), errorHandler({ production: true, log: false }));
  return app;
}

/** POSTs a form to the token endpoint. */
export function postToken(app: Express, form: Record<string, string | string[]>, headers: Record<string, string> = {}) {
  const req = request(app).post(TOKEN_PATH).type('form');
  for (const [name, value] of Object.entries(headers)) req.set(name, value);
  return req.send(form);
}

export const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

export const ALICE = { grant_type: 'password', username: 'alice', password: 'wonderland-rabbit-hole' } as const;

/** The JWT header and payload, decoded without verifying (for assertions). */
export function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(header ?? '', 'base64url').toString('utf8')),
    payload: JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')),
  };
}
