import { checkBoolean, checkInteger, invalidOption, readOptions } from '../config/options.js';
import { issuerKeys, type KeySource } from './access-tokens.js';
import { isFetchableUrl } from './bounded-fetch.js';
import { DEFAULT_REMOTE_ALGORITHMS, isRemoteAlgorithmList } from './jwk.js';
import { REMOTE_ALGORITHMS, type RemoteAlgorithm } from './keys.js';
import { sharedKeySet } from './shared-key-sets.js';

/**
 * The options of an issuer's key set, read when bearerAuth() or dpopAuth()
 * is given no `keys`: this module, and the fetch, discovery and JWK code it
 * loads, stay unloaded for an app that verifies its own keys.
 */

/** How an issuer's key set is fetched and kept (every field optional; the defaults suit the providers of docs/bearer-auth.md). */
export interface JwksOptions {
  /** Fetch the key set when the middleware is built, rather than on the first token. Default: `false`. */
  fetchAtStart?: boolean;
  /** The shortest time between two fetches, in seconds (1 to 3600): a token with an unknown `kid` makes at most one per cooldown. Default: 30. */
  cooldownSeconds?: number;
  /** How long a fetched set is fresh, in seconds (0 to 86400); the answer's `Cache-Control: max-age` when shorter. Default: 600. */
  cacheMaxAgeSeconds?: number;
  /** How long a set serves beyond its cache age while the issuer cannot be reached, in seconds (0 to 604800); then 503. Default: 3600. */
  staleGraceSeconds?: number;
  /** Time-out of one fetch, in milliseconds (100 to 30000): the longest a request waits for keys. Default: 3000. */
  timeoutMs?: number;
  /** The largest metadata or key-set answer read, in bytes (1024 to 1048576). Default: 65536. */
  maxBytes?: number;
  /** The most keys a set may hold (1 to 1000); a larger set is refused whole. Default: 32. */
  maxKeys?: number;
  /** The algorithms accepted: a key's own `alg` must be listed; a key without one verifies each listed algorithm its type fits. Default: `['RS256', 'ES256', 'EdDSA']`. */
  algorithms?: readonly RemoteAlgorithm[];
}

const JWKS_OPTION_NAMES = [
  'fetchAtStart',
  'cooldownSeconds',
  'cacheMaxAgeSeconds',
  'staleGraceSeconds',
  'timeoutMs',
  'maxBytes',
  'maxKeys',
  'algorithms',
] as const;

// The process's own fetch and clock, read at each call (a test may fake Date); a shared set's are the same for every middleware.
const processFetch: typeof fetch = (input, init) => fetch(input, init);
const processClock = () => Date.now();

/** An integer option of `jwks`, or its default. */
function integer(
  factory: string,
  given: Partial<JwksOptions>,
  name: keyof JwksOptions,
  fallback: number,
  min: number,
  max: number,
) {
  const value = given[name];
  return value === undefined ? fallback : checkInteger(factory, `jwks.${name}`, value, { min, max });
}

/** The key source of an issuer: its `jwksUri`, or the one its metadata names. */
export function readIssuerKeys(factory: string, issuer: string, jwksUri: unknown, jwks: unknown): KeySource {
  if (jwksUri !== undefined && (typeof jwksUri !== 'string' || !isFetchableUrl(jwksUri))) {
    invalidOption(factory, 'jwksUri', jwksUri, 'an https URL (http only on a loopback host)');
  }
  if (jwksUri === undefined && !isFetchableUrl(issuer)) {
    invalidOption(factory, 'issuer', issuer, 'an https URL to discover its keys from (or give `keys` or `jwksUri`)');
  }
  const given = jwks === undefined ? {} : readOptions<JwksOptions>(`${factory} jwks`, jwks, JWKS_OPTION_NAMES);
  if (given.algorithms !== undefined && !isRemoteAlgorithmList(given.algorithms)) {
    invalidOption(
      factory,
      'jwks.algorithms',
      given.algorithms,
      `a non-empty list of ${Object.keys(REMOTE_ALGORITHMS).join(', ')}`,
    );
  }
  // The process's one set for this issuer and these options (shared-key-sets.ts): one fetch however many middlewares.
  const set = sharedKeySet({
    issuer,
    jwksUri: jwksUri as string | undefined,
    algorithms: given.algorithms ?? DEFAULT_REMOTE_ALGORITHMS,
    cooldownMs: integer(factory, given, 'cooldownSeconds', 30, 1, 3600) * 1000,
    maxAgeMs: integer(factory, given, 'cacheMaxAgeSeconds', 600, 0, 86_400) * 1000,
    graceMs: integer(factory, given, 'staleGraceSeconds', 3600, 0, 604_800) * 1000,
    timeoutMs: integer(factory, given, 'timeoutMs', 3000, 100, 30_000),
    maxBytes: integer(factory, given, 'maxBytes', 65_536, 1024, 1_048_576),
    maxKeys: integer(factory, given, 'maxKeys', 32, 1, 1000),
    fetch: processFetch,
    now: processClock,
  });
  if (given.fetchAtStart !== undefined && checkBoolean(factory, 'jwks.fetchAtStart', given.fetchAtStart)) set.prefetch();
  return issuerKeys(set);
}
