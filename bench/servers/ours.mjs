// Ours: Express 5 + conventions() with every default on, from the built
// package (dist/), the way a service uses it. The rate limit is raised so the
// load generator, one client, is never refused; the limiter still counts,
// stores and writes its headers on every request. The bearer route uses
// bearerAuth() when the build has it.
import http from 'node:http';
import express from 'express';
import { BENCH_RATE_LIMIT, JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET, USER } from '../lib/payload.mjs';
import { announce, listen } from './serve.mjs';

// BENCH_LIBRARY lets the smoke test point at a fresh transpile of src/.
const library = await import(process.env.BENCH_LIBRARY ?? new URL('../../dist/esm/index.js', import.meta.url).href);
const { conventions, errorHandler, notFound } = library;

const app = express();
app.use(conventions(library.rateLimit ? { rateLimit: { limit: BENCH_RATE_LIMIT } } : undefined));
app.get('/v1/users/:id', (_req, res) => res.json(USER));
if (typeof library.bearerAuth === 'function') {
  app.get('/v1/me', library.bearerAuth({ secret: JWT_SECRET, issuer: JWT_ISSUER, audience: JWT_AUDIENCE }), (_req, res) =>
    res.json(USER),
  );
}
app.use(notFound(), errorHandler());

announce(await listen(http.createServer(app)));
