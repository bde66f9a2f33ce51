// Micro-benchmark: the DPoP check of dpopAuth() (RFC 9449 §7: the access
// token, and a proof of its key on each request: an ES256 signature, the
// JWK imported, htm/htu/iat/ath, the replay store) against bearerAuth()'s
// check of the same kind of access token. Both middlewares run whole, on a
// request object, and are awaited (dpopAuth() answers asynchronously: the
// replay store may be Redis). Every DPoP call uses a proof never seen
// before, made ahead of the timing; the replay store here only counts (a
// Map insert per proof in MemoryDpopReplayStore, one SET NX round trip in
// Redis: neither is what this measures).
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { loadLibrary } from '../lib/library.mjs';
import { compareAsync } from '../lib/micro.mjs';
import { ACCESS_TOKEN_KEYS, JWT_AUDIENCE, JWT_ISSUER, JWT_KID, JWT_SECRET } from '../lib/payload.mjs';

const ORIGIN = 'https://bench.example';
const PROOFS = 4000;

const run = (middleware, req) =>
  new Promise((resolve, reject) => {
    middleware(req, { headersSent: false }, (error) => (error ? reject(error) : resolve(req.auth)));
  });

export async function runDpop() {
  const { bearerAuth, dpopAuth } = await loadLibrary();
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const jkt = createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
    .digest('base64url');
  const sign = (claims) =>
    jwt.sign({ sub: '1', scope: 'users:read', ...claims }, JWT_SECRET, {
      algorithm: 'HS256',
      header: { alg: 'HS256', kid: JWT_KID, typ: 'at+jwt' },
      issuer: JWT_ISSUER,
      audience: JWT_AUDIENCE,
      expiresIn: '1h',
    });
  const bound = sign({ cnf: { jkt } });
  const plain = sign({});
  const ath = createHash('sha256').update(bound).digest('base64url');
  // A replay store that remembers nothing: the proofs are used in turn, each many times.
  const replay = { remember: async () => true };
  const options = { keys: ACCESS_TOKEN_KEYS, issuer: JWT_ISSUER, audience: JWT_AUDIENCE };
  const bearer = bearerAuth(options);
  const dpop = dpopAuth({ ...options, origin: ORIGIN, dpop: { replay } });
  const proofs = Array.from({ length: PROOFS }, () =>
    jwt.sign({ jti: randomUUID(), htm: 'GET', htu: `${ORIGIN}/v1/me`, iat: Math.floor(Date.now() / 1000), ath }, privateKey, {
      algorithm: 'ES256',
      header: { alg: 'ES256', typ: 'dpop+jwt', jwk },
    }),
  );
  const bearerReq = { method: 'GET', originalUrl: '/v1/me', headers: { authorization: `Bearer ${plain}` } };
  let turn = 0;
  const dpopReq = () => ({
    method: 'GET',
    originalUrl: '/v1/me',
    headers: { authorization: `DPoP ${bound}`, dpop: proofs[turn++ % PROOFS] },
  });
  // The bearer check of a token seen for the first time: 20,000 tokens in turn, twice what the verifier remembers.
  const FRESH = 20_000;
  const freshTokens = Array.from({ length: FRESH }, () => sign({ jti: randomUUID() }));
  let freshTurn = 0;
  const freshBearer = bearerAuth(options);
  return compareAsync(
    {
      'bearerAuth(), a token seen before': () => run(bearer, bearerReq),
      'bearerAuth(), each token new': () =>
        run(freshBearer, { method: 'GET', headers: { authorization: `Bearer ${freshTokens[freshTurn++ % FRESH]}` } }),
      'dpopAuth(), token seen before, new ES256 proof': () => run(dpop, dpopReq()),
    },
    'bearerAuth(), a token seen before',
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await runDpop()) {
    console.log(
      `${row.name.padEnd(48)} ${Math.round(row.opsPerSecond).toLocaleString('en-US').padStart(9)} ops/s  ${row.ratio.toFixed(2)}x the time`,
    );
  }
}
