// Micro-benchmark: verifying one HS256 access token. jsonwebtoken the usual
// way (the secret as a string, turned into a key on every call), the same
// with a KeyObject built once, and ours (bearerAuth()'s middleware), on a
// token it accepted before (the common case: a client reuses its token) and
// on tokens it sees for the first time. Claims checked alike: algorithm, issuer, audience,
// expiry.
import { createSecretKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { bearerTokenForBench } from '../http.mjs';
import { loadLibrary } from '../lib/library.mjs';
import { compare } from '../lib/micro.mjs';
import { ACCESS_TOKEN_KEYS, JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET } from '../lib/payload.mjs';

export async function runBearer() {
  const token = bearerTokenForBench();
  const options = { algorithms: ['HS256'], issuer: JWT_ISSUER, audience: JWT_AUDIENCE };
  const key = createSecretKey(Buffer.from(JWT_SECRET));
  const candidates = {
    'jsonwebtoken, string secret': () => jwt.verify(token, JWT_SECRET, options),
    'jsonwebtoken, KeyObject': () => jwt.verify(token, key, options),
  };
  // Ours: bearerAuth()'s middleware on a request that carries the token (it
  // reads the header, verifies, and fills req.auth), as a route runs it.
  const { bearerAuth, MemoryRevokedFamilies } = await loadLibrary();
  const middleware = bearerAuth({ keys: ACCESS_TOKEN_KEYS, issuer: JWT_ISSUER, audience: JWT_AUDIENCE });
  const req = { headers: { authorization: `Bearer ${token}` } };
  let passed = false;
  const next = (error) => {
    if (error) throw error;
    passed = true;
  };
  candidates['ours: bearerAuth(), a token seen before'] = () => {
    passed = false;
    middleware(req, undefined, next);
    return passed;
  };
  // The same with revokedFamilies (access tokens die with their
  // refresh-token family): the token carries its family in `sid`, and 1,000
  // other families are revoked; the check is one local lookup per request.
  const revokedFamilies = new MemoryRevokedFamilies();
  for (let i = 0; i < 1000; i++) await revokedFamilies.revoke(`family-${i}`, Date.now() + 3_600_000);
  const withRevocations = bearerAuth({ keys: ACCESS_TOKEN_KEYS, issuer: JWT_ISSUER, audience: JWT_AUDIENCE, revokedFamilies });
  const familyReq = { headers: { authorization: `Bearer ${bearerTokenForBench({ sid: 'family-live' })}` } };
  // The same token (with its `sid`, as tokenRouter() issues them) without revokedFamilies: the baseline of the 5 % target.
  candidates['ours: same token, no revokedFamilies'] = () => {
    passed = false;
    middleware(familyReq, undefined, next);
    return passed;
  };
  candidates['ours: with revokedFamilies, seen before'] = () => {
    passed = false;
    withRevocations(familyReq, undefined, next);
    return passed;
  };
  // Every call a token the verifier has not accepted yet: 20,000 distinct
  // tokens, twice the verifier's memory, taken in turn.
  const fresh = bearerAuth({ keys: ACCESS_TOKEN_KEYS, issuer: JWT_ISSUER, audience: JWT_AUDIENCE });
  const tokens = Array.from({ length: 20_000 }, (_, i) => ({
    headers: { authorization: `Bearer ${bearerTokenForBench({ jti: `t${i}` })}` },
  }));
  let turn = 0;
  candidates['ours: bearerAuth(), each token new'] = () => {
    passed = false;
    fresh(tokens[turn], undefined, next);
    turn = (turn + 1) % tokens.length;
    return passed;
  };
  return compare(candidates, 'jsonwebtoken, string secret');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await runBearer()) {
    console.log(
      `${row.name.padEnd(30)} ${Math.round(row.opsPerSecond).toLocaleString('en-US').padStart(9)} ops/s  ${row.ratio.toFixed(3)}x the time`,
    );
  }
}
