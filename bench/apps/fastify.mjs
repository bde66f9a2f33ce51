// Fastify 5 with the same features from its own plugins: @fastify/helmet,
// @fastify/cors, @fastify/rate-limit (memory store). Fastify sends no ETag
// by default (that would be @fastify/etag, not part of this set). The bearer
// route checks the token like the peer stack: jsonwebtoken, string secret.

import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';
import jwt from 'jsonwebtoken';
import { BENCH_RATE_LIMIT, JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET, USER } from '../lib/payload.mjs';
import { bearerToken } from './auth.mjs';

/** Fastify owns its server: this returns the Fastify instance, ready. */
export async function createFastify() {
  const app = Fastify({ logger: false });
  await app.register(helmet);
  await app.register(cors);
  await app.register(rateLimit, { max: BENCH_RATE_LIMIT, timeWindow: 60_000 });

  async function requireBearer(request, reply) {
    try {
      request.user = jwt.verify(bearerToken(request.raw) ?? '', JWT_SECRET, {
        algorithms: ['HS256'],
        issuer: JWT_ISSUER,
        audience: JWT_AUDIENCE,
      });
    } catch {
      return reply.code(401).send({ errors: [{ message: 'Unauthorized', code: 40100 }] });
    }
  }

  app.get('/v1/users/:id', async () => USER);
  app.get('/v1/me', { preHandler: requireBearer }, async () => USER);
  await app.ready();
  return app;
}
