// Bare Express 5 with its defaults (weak SHA-1 ETag, X-Powered-By, res.json).
// The bearer route checks the token with a KeyObject built once: the
// "pre-built-key jsonwebtoken check" that bearerAuth() is held to (0.9x).
import { createSecretKey } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import { JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET, USER } from '../lib/payload.mjs';
import { bearerToken } from './auth.mjs';

export async function createHandler() {
  const key = createSecretKey(Buffer.from(JWT_SECRET));
  const verifyOptions = { algorithms: ['HS256'], issuer: JWT_ISSUER, audience: JWT_AUDIENCE };

  function requireBearer(req, res, next) {
    try {
      req.user = jwt.verify(bearerToken(req) ?? '', key, verifyOptions);
    } catch {
      return res.status(401).json({ errors: [{ message: 'Unauthorized', code: 40100 }] });
    }
    next();
  }

  const app = express();
  app.get('/v1/users/:id', (_req, res) => res.json(USER));
  app.get('/v1/me', requireBearer, (_req, res) => res.json(USER));
  return app;
}
