// The one payload every server answers with: a ~400-byte user, as the
// reference server's `GET /v1/users/{id}` shapes it (docs/conventions.md
// rule 2.9: `id` and `id_str`). The id stays below 2^53 so that bare
// servers writing it with plain JSON.stringify send the very same bytes.

export const USER = Object.freeze({
  id: 4503599627370497,
  id_str: '4503599627370497',
  name: 'Ada Lovelace',
  email: 'ada.lovelace@example.com',
  gender: 'female',
  locale: 'en-GB',
  bio: 'Mathematician and writer, known for her notes on the Analytical Engine and on computation.',
  website: 'https://example.com/people/ada-lovelace',
  followers: 18150,
  verified: true,
  createdAt: '2025-03-14T09:26:53Z',
  updatedAt: '2026-11-02T17:45:10Z',
});

/**
 * Every request the bench sends carries this Origin, as a browser's would:
 * the CORS middlewares then do their whole work (the peer's cors() allows
 * every origin; ours is given this one, the reference server's default).
 */
export const BENCH_ORIGIN = 'http://localhost:5173';

/** The route every server answers: public, and the same behind a bearer check. */
export const PUBLIC_PATH = '/v1/users/4503599627370497';
export const BEARER_PATH = '/v1/me';

/**
 * HS256 secret shared by the token issuer (the harness) and every server. A
 * bench-only value: 32 random-looking bytes, never used outside bench/.
 */
export const JWT_SECRET = 'bench-only-secret-3f9c1e7a5b2d4086a1c3e5f7092b4d6f';
export const JWT_ISSUER = 'https://bench.example';
/** The key id in the token header: bearerAuth() finds its key by `kid` (rotation). */
export const JWT_KID = 'bench-2026-11';
/** Ours as a service configures it: one HS256 key, in bearerAuth()'s and tokenRouter()'s shape. */
export const ACCESS_TOKEN_KEYS = Object.freeze([Object.freeze({ kid: JWT_KID, algorithm: 'HS256', secret: JWT_SECRET })]);
export const JWT_AUDIENCE = 'bench-api';

/**
 * The rate limit every limiter in the bench is given: one client (the load
 * generator) must never reach it during a run, so that every answer is 200
 * and each limiter still counts, stores and writes its headers.
 */
export const BENCH_RATE_LIMIT = 1_000_000_000;

/** The login storm's user: bcrypt cost 12, as the token endpoint stores it. */
export const STORM_USER = Object.freeze({ username: 'alice', password: 'wonderland-rabbit-hole', cost: 12 });
