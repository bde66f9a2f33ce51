// The peer stack: what a careful team assembles by hand from the field's
// packages, each with its documented defaults: helmet(), cors(),
// express-rate-limit (memory store, draft-8 RateLimit headers) and Express's
// default weak ETag. The bearer route uses jsonwebtoken the usual way: the
// secret passed as a string on every call.
import cors from 'cors';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import helmet from 'helmet';
import jwt from 'jsonwebtoken';
import { BENCH_RATE_LIMIT, JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET, USER } from '../lib/payload.mjs';
import { bearerToken } from './auth.mjs';

/** `store`: an express-rate-limit store (bench/apps/peer-redis.mjs passes rate-limit-redis's); default its memory store. */
export async function createHandler(store = undefined) {
  function requireBearer(req, res, next) {
    try {
      req.user = jwt.verify(bearerToken(req) ?? '', JWT_SECRET, {
        algorithms: ['HS256'],
        issuer: JWT_ISSUER,
        audience: JWT_AUDIENCE,
      });
    } catch {
      return res.status(401).json({ errors: [{ message: 'Unauthorized', code: 40100 }] });
    }
    next();
  }

  const app = express();
  app.disable('x-powered-by');
  app.use(helmet());
  app.use(cors());
  app.use(
    rateLimit({
      windowMs: 60_000,
      limit: BENCH_RATE_LIMIT,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      ...(store === undefined ? {} : { store }),
    }),
  );
  app.get('/v1/users/:id', (_req, res) => res.json(USER));
  app.get('/v1/me', requireBearer, (_req, res) => res.json(USER));
  return app;
}
