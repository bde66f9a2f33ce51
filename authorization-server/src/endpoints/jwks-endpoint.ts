import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { entityTag, notModified, setValidators } from 'express-api-conventions/caching';
import { type ReadyKey, setResponseHeader, writeJsonAnswer } from 'express-api-conventions/extend';
import { stringifyJson } from 'express-api-conventions/json';
import type { TokenKeys } from '../token-keys.js';

/**
 * The token service's public keys as a JWK Set (RFC 7517 §5), at the
 * metadata's `jwks_uri`: another service verifies this one's tokens with
 * bearerAuth({ issuer, audience }) alone, discovering this address. Only
 * asymmetric keys are published (a HS256 secret never is), each with its
 * `kid`, `alg` and `use: sig`, so that a verifier pins its algorithm.
 *
 * Rotation (docs/oauth2-token.md, "Key rotation without restarts"): list
 * the next key second, so it is published before it signs; after at least
 * the cache age below, list it first, so it signs; after the longest
 * access-token lifetime, drop the old.
 */

/** How long a verifier may keep the set before asking again, in seconds: the wait between publishing a key and signing with it. */
export const JWKS_MAX_AGE_SECONDS = 300;

/** The public JWKs of the asymmetric keys among `keys`; empty when they are all secrets. */
export function publicJwks(keys: readonly ReadyKey[]): Record<string, unknown>[] {
  return keys
    .filter((key) => key.verifyingKey.type === 'public')
    .map((key) => ({ ...key.verifyingKey.export({ format: 'jwk' }), kid: key.kid, alg: key.algorithm, use: 'sig' }));
}

/**
 * GET of the key set, serialized again only when the list changes (a
 * rotation, token-keys.ts): `Cache-Control` with the max-age above, a strong
 * `ETag` over the text, 304 to a client that has it.
 */
export function jwksEndpoint(keys: TokenKeys): RequestHandler {
  let served: { readonly keys: readonly ReadyKey[]; readonly text: string; readonly etag: string } | undefined;
  const cacheControl = `public, max-age=${JWKS_MAX_AGE_SECONDS}`;
  return function jwksMiddleware(req: Request, res: Response, _next: NextFunction) {
    const current = keys.current();
    if (served?.keys !== current) {
      const text = stringifyJson({ keys: publicJwks(current) });
      served = { keys: current, text, etag: entityTag(text) };
    }
    setResponseHeader(res, 'Cache-Control', cacheControl);
    setValidators(res, { etag: served.etag });
    if (notModified(req, res)) return;
    writeJsonAnswer(res, 200, served.text);
  };
}
