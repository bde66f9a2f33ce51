// The login storm's peer: the peer stack (bench/apps/peer.mjs) plus a
// password grant written the usual way: bcryptjs's async compare on the
// main thread, then jsonwebtoken.sign with the secret as a string.
import bcrypt from 'bcryptjs';
import express from 'express';
import jwt from 'jsonwebtoken';
import { JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET, STORM_USER } from '../lib/payload.mjs';
import { createHandler as peerApp } from './peer.mjs';

export async function createHandler() {
  const hash = process.env.BENCH_PASSWORD_HASH;
  if (!hash) throw new Error('storm-peer: BENCH_PASSWORD_HASH is not set');
  const app = await peerApp();
  app.post('/v1/oauth2/token', express.urlencoded({ extended: false }), async (req, res) => {
    const { grant_type: grant, username, password } = req.body ?? {};
    if (grant !== 'password' || username !== STORM_USER.username || !(await bcrypt.compare(String(password), hash))) {
      return res.status(400).json({ error: 'invalid_grant' });
    }
    const token = jwt.sign({ sub: STORM_USER.username }, JWT_SECRET, {
      algorithm: 'HS256',
      issuer: JWT_ISSUER,
      audience: JWT_AUDIENCE,
      expiresIn: 3600,
    });
    res.set('Cache-Control', 'no-store').json({ access_token: token, token_type: 'bearer', expires_in: 3600 });
  });
  return app;
}
