// The login storm's ours: the bench's ours (conventions() with every default
// on) plus the authorization server's token router in the preset, as the README
// wires it. Password grants verify bcrypt hashes in the worker pool.
import express from 'express';
import { loadAuthorizationServer, loadLibrary } from '../lib/library.mjs';
import {
  ACCESS_TOKEN_KEYS,
  BENCH_ORIGIN,
  BENCH_RATE_LIMIT,
  JWT_AUDIENCE,
  JWT_ISSUER,
  STORM_USER,
  USER,
} from '../lib/payload.mjs';

export async function createHandler() {
  const hash = process.env.BENCH_PASSWORD_HASH;
  if (!hash) throw new Error('storm-ours: BENCH_PASSWORD_HASH is not set');
  const { conventions, errorHandler, notFound } = await loadLibrary();
  const { MemoryUserStore, tokenRouter } = await loadAuthorizationServer();
  const users = new MemoryUserStore();
  await users.add({ username: STORM_USER.username, subject: USER.id_str, passwordHash: hash });
  const tokens = { keys: ACCESS_TOKEN_KEYS, issuer: JWT_ISSUER, audience: JWT_AUDIENCE };
  const app = express();
  app.use(
    conventions({
      corsPolicy: { origins: [BENCH_ORIGIN] },
      rateLimit: { limit: BENCH_RATE_LIMIT },
      bearerAuth: tokens,
      tokenRouter: tokenRouter({ ...tokens, users }),
    }),
  );
  app.get('/v1/users/:id', (_req, res) => res.json(USER));
  app.use(notFound(), errorHandler());
  return app;
}
