// Ours: Express 5 + conventions() with every default on, from the built
// package (dist/), the way a service uses it. CORS, the one module off by
// default (it needs its origins), is on with the bench's origin. The rate
// limit is raised so the load generator, one client, is never refused; the
// limiter still counts, stores and writes its headers on every request.
import express from 'express';
import { loadLibrary } from '../lib/library.mjs';
import { ACCESS_TOKEN_KEYS, BENCH_ORIGIN, BENCH_RATE_LIMIT, JWT_AUDIENCE, JWT_ISSUER, USER } from '../lib/payload.mjs';

/**
 * `variant`: options laid over the bench's, to measure what one module
 * costs (bench/micro/modules.mjs turns modules off one at a time);
 * `library`: another build of the package (bench/micro/compare-builds.mjs).
 */
export async function createHandler(variant = JSON.parse(process.env.BENCH_OURS ?? '{}'), library = undefined) {
  library ??= await loadLibrary();
  const { bearerAuth, conventions, errorHandler, notFound } = library;
  const tokens = { keys: ACCESS_TOKEN_KEYS, issuer: JWT_ISSUER, audience: JWT_AUDIENCE };
  const app = express();
  // As the README sets a service up: the preset identifies bearer callers
  // (optional bearerAuth before the rate limiter), the route requires one.
  const options = {
    corsPolicy: { origins: [BENCH_ORIGIN] },
    rateLimit: { limit: BENCH_RATE_LIMIT },
    bearerAuth: tokens,
    ...variant,
  };
  const preset = conventions(options);
  if (preset.length > 0) app.use(preset);
  app.get('/v1/users/:id', (_req, res) => res.json(USER));
  app.get('/v1/me', bearerAuth(tokens), (_req, res) => res.json(USER));
  app.use(notFound(), errorHandler());
  return app;
}
