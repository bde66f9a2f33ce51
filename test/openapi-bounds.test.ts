import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Express } from 'express';
import request from 'supertest';
import { parse } from 'yaml';
import { EXPORT_MAX_USERS, exportsRouter } from '../examples/server/src/exports.js';
import { MemoryState } from '../examples/server/src/memory-state.js';
import { UserRepository } from '../examples/server/src/users/repository.js';
import { usersRouter } from '../examples/server/src/users/routes.js';
import { errorHandler, notFound } from '../src/index.js';
import { jsonResponses } from '../src/json/index.js';
import { parseBodies } from '../src/request/index.js';

/**
 * The bounds docs/openapi.yaml states are the ones the reference server
 * enforces: the search term, and the users one export holds.
 */

// biome-ignore lint/suspicious/noExplicitAny: the document's JSON, read by hand.
const DOCUMENT: any = parse(readFileSync(join(__dirname, '..', 'docs', 'openapi.yaml'), 'utf8'));

function app(users: UserRepository, state: MemoryState, maxUsers?: number): Express {
  const made = express();
  made.use(jsonResponses(), parseBodies());
  made.use((req, _res, next) => {
    req.auth = { subject: 'ann', scopes: ['exports'] } as typeof req.auth;
    next();
  });
  made.use(usersRouter(users));
  made.use(exportsRouter({ state, users, delaySeconds: 0, keptSeconds: 60, ...(maxUsers === undefined ? {} : { maxUsers }) }));
  made.use(notFound(), errorHandler({ log: false }));
  return made;
}

describe('the reference server enforces the bounds its document states', () => {
  it('refuses a search term longer than `q`’s maxLength with 400, and takes one of that length', async () => {
    const max = DOCUMENT.components.parameters.q.schema.maxLength as number;
    expect(max).toBe(256);
    const state = new MemoryState();
    const served = app(new UserRepository(state), state);
    expect(
      (
        await request(served)
          .get('/v1/users/search')
          .query({ q: 'a'.repeat(max) })
      ).status,
    ).toBe(200);
    const longer = await request(served)
      .get('/v1/users/search')
      .query({ q: 'a'.repeat(max + 1) });
    expect(longer.status).toBe(400);
  });

  it('holds at most `Export.users`’ maxItems users in one export: POST /v1/exports answers 503 beyond', async () => {
    expect(DOCUMENT.components.schemas.Export.properties.users.maxItems).toBe(EXPORT_MAX_USERS);
    const state = new MemoryState();
    const users = new UserRepository(state);
    for (const name of ['Ann', 'Bob', 'Cy'])
      await users.create({ name, email: `${name.toLowerCase()}@example.com`, gender: 'female' });
    expect((await request(app(users, state, 3)).post('/v1/exports')).status).toBe(202);
    const full = await request(app(users, state, 2)).post('/v1/exports');
    expect(full.status).toBe(503);
    expect(full.body.errors[0].message).toBe('An export holds at most 2 users; this service has more.');
    expect(full.headers['retry-after']).toBe('60');
  });
});
