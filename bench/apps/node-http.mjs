// Bare node:http: the floor. One exact path, JSON.stringify, no middleware.
// The bearer route checks a jsonwebtoken HS256 token with a KeyObject built
// once at start-up (the fast way to call jsonwebtoken).
import { createSecretKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { BEARER_PATH, JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET, PUBLIC_PATH, USER } from '../lib/payload.mjs';
import { bearerToken } from './auth.mjs';

export async function createHandler() {
  const key = createSecretKey(Buffer.from(JWT_SECRET));
  const verifyOptions = { algorithms: ['HS256'], issuer: JWT_ISSUER, audience: JWT_AUDIENCE };

  function send(res, status, body) {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  }

  return function nodeHttpHandler(req, res) {
    if (req.method === 'GET' && req.url === PUBLIC_PATH) return send(res, 200, USER);
    if (req.method === 'GET' && req.url === BEARER_PATH) {
      try {
        jwt.verify(bearerToken(req) ?? '', key, verifyOptions);
      } catch {
        return send(res, 401, { errors: [{ message: 'Unauthorized', code: 40100 }] });
      }
      return send(res, 200, USER);
    }
    return send(res, 404, { errors: [{ message: 'Not found', code: 40400 }] });
  };
}
