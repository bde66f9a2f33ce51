// The control: bare Express 5 doing only the work no middleware logic can
// avoid for ours' answer: the same 18 headers as ours sends (security
// headers, Cache-Control, Vary, CORS, rate-limit state, ETag) as fixed
// strings, each with setHeader() while the response is open (the way ours
// writes them), and the same body, serialized per request and
// written with its Content-Length in one res.end(). No origin check, no
// counting, no hashing: the floor a preset on Express is measured against.
// BENCH_CONTROL_WRITE=writeHead hands them to writeHead() in one
// prepared list instead (Node's cheapest write of headers, which ours once took
// by replacing the app's header methods). The bearer route is the
// same answer behind the same pre-built-key jsonwebtoken check as bare
// Express's.
import { createSecretKey } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import { BENCH_ORIGIN, JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET, USER } from '../lib/payload.mjs';
import { bearerToken } from './auth.mjs';

const PK = ':H4q+uO3alu4Xd1Qj:';
/** What ours sends besides Content-Type, Content-Length and Date, as fixed strings. */
export const CONTROL_HEADERS = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'deny'],
  ['Content-Security-Policy', "script-src 'self'"],
  ['Cross-Origin-Embedder-Policy', 'require-corp'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Referrer-Policy', 'no-referrer'],
  ['Strict-Transport-Security', 'max-age=63072000; includeSubDomains'],
  ['X-DNS-Prefetch-Control', 'off'],
  ['X-Permitted-Cross-Domain-Policies', 'none'],
  ['Cache-Control', 'no-store, max-age=0'],
  ['Vary', 'Origin'],
  ['Access-Control-Allow-Origin', BENCH_ORIGIN],
  ['Access-Control-Allow-Credentials', 'true'],
  ['Access-Control-Expose-Headers', 'ETag, Location, RateLimit, RateLimit-Policy, Retry-After'],
  ['RateLimit-Policy', `"user";q=1000000000;w=60;pk=${PK}, "application";q=1000000000;w=60;pk=${PK}`],
  ['RateLimit', `"user";r=999999999;t=60;pk=${PK}, "application";r=999999999;t=60;pk=${PK}`],
  ['ETag', '"t_VaseKnTuWoYVFKamt_oM7UUZE"'],
];

const FLAT = CONTROL_HEADERS.flat();

function sendWithSetHeader(res, body) {
  for (const [name, value] of CONTROL_HEADERS) res.setHeader(name, value);
  const text = JSON.stringify(body);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

// The same answer through writeHead() with a prepared flat array of names
// and values, Node's cheapest write of fixed headers on a response that has
// none set yet.
function sendWithWriteHead(res, body) {
  const text = JSON.stringify(body);
  res.writeHead(200, [
    ...FLAT,
    'Content-Type',
    'application/json; charset=utf-8',
    'Content-Length',
    String(Buffer.byteLength(text)),
  ]);
  res.end(text);
}

export async function createHandler(write = process.env.BENCH_CONTROL_WRITE) {
  const send = write === 'writeHead' ? sendWithWriteHead : sendWithSetHeader;
  const key = createSecretKey(Buffer.from(JWT_SECRET));
  const verifyOptions = { algorithms: ['HS256'], issuer: JWT_ISSUER, audience: JWT_AUDIENCE };
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.get('/v1/users/:id', (_req, res) => send(res, USER));
  app.get('/v1/me', (req, res) => {
    try {
      req.user = jwt.verify(bearerToken(req) ?? '', key, verifyOptions);
    } catch {
      res.status(401).json({ errors: [{ message: 'Unauthorized', code: 40100 }] });
      return;
    }
    send(res, USER);
  });
  return app;
}
