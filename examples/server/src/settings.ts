/**
 * The server's settings, read once from the environment at start-up.
 * Names and defaults are the reference server's contract
 * (examples/server/README.md, "Settings"); a wrong value stops the start
 * with a message naming the variable, the value and what is expected.
 */

import { hostname } from 'node:os';

export interface Settings {
  readonly port: number;
  readonly host: string;
  readonly demoUsername: string;
  readonly demoPassword: string;
  readonly demoClientId: string;
  readonly demoClientSecret: string;
  /** The public, first-party client of the authorization code flow (DEMO_SPA_CLIENT_ID). */
  readonly demoSpaClientId: string;
  /** The confidential third-party client of the code flow, whose user consents first (DEMO_PARTNER_CLIENT_ID, _SECRET). */
  readonly demoPartnerClientId: string;
  readonly demoPartnerClientSecret: string;
  /** The machine client, client_credentials only (DEMO_SERVICE_CLIENT_ID, _SECRET). */
  readonly demoServiceClientId: string;
  readonly demoServiceClientSecret: string;
  /** Exact origins allowed cross-origin, with credentials. */
  readonly corsOrigins: readonly string[];
  /** Requests per window, per user and per application. */
  readonly rateLimit: number;
  /** The rate-limit window, in seconds. */
  readonly rateWindow: number;
  /** Access-token lifetime in seconds: the token response's `expires_in`. */
  readonly accessTokenTtl: number;
  /** How access tokens are signed (ACCESS_TOKEN_ALG): HS256, or a private key whose public half is published at `jwks_uri`. */
  readonly accessTokenAlg: AccessTokenAlg;
  readonly maintenance: boolean;
  /** Shared state for several instances; `undefined` keeps everything in memory. */
  readonly redisUrl: string | undefined;
  /**
   * Shared state on a Redis Cluster instead (REDIS_CLUSTER, not in the
   * contract): the URLs of some of its nodes, the rest found from them.
   * Never set together with `redisUrl`.
   */
  readonly redisClusterUrls: readonly string[] | undefined;
  readonly production: boolean;
  /**
   * Key that signs access tokens (TOKEN_SECRET). Not in the contract: unset,
   * each instance draws one at random, or, with Redis, the first instance
   * draws it and the others read it, so that tokens from one instance work on
   * all (see secrets.ts).
   */
  readonly tokenSecret: string | undefined;
  /** Key of the CSRF tokens (CSRF_SECRET); unset, drawn as tokenSecret is. */
  readonly csrfSecret: string | undefined;
  /** Key of the rate-limit partition keys, `pk` (RATE_LIMIT_PARTITION_SECRET); unset, drawn as tokenSecret is. */
  readonly partitionSecret: string | undefined;
  /** Exports being prepared or kept at once, at most (EXPORT_LIMIT, not in the contract). */
  readonly exportLimit: number;
  /** Exports one caller may have prepared or kept at once (EXPORT_CALLER_LIMIT, not in the contract). */
  readonly exportCallerLimit: number;
  /** Seconds an export is kept once asked for (EXPORT_KEPT, not in the contract). */
  readonly exportKept: number;
  /** Seconds an export takes to prepare (not in the contract). */
  readonly exportDelay: number;
  /** bcrypt cost of password hashes (not in the contract); tests lower it to run fast. */
  readonly passwordCost: number;
  /**
   * The service's public URL (ISSUER, not in the contract): the tokens'
   * `iss`, and where clients discover the metadata (RFC 8414). Unset, it is
   * `http://HOST:PORT`, or, with Redis, the first instance's (see issuer.ts).
   */
  readonly issuer: string | undefined;
  /**
   * Seconds within which a refresh token rotated last may be presented again
   * (its answer was lost) and answer the same new tokens (REFRESH_GRACE, not
   * in the contract); 0 turns it off. Default: 10 (DEFAULT_REFRESH_GRACE).
   */
  readonly refreshGrace: number;
  /** DPoP (RFC 9449; on unless DPOP=0): tokens bound to the client's key when it sends a proof, bearer tokens otherwise. */
  readonly dpop: boolean;
  /** Security events as JSON lines on standard error (LOG_EVENTS; on unless 0). */
  readonly logEvents: boolean;
  /** The name every log line gives this instance (INSTANCE_ID; default the host's name). */
  readonly instanceId: string;
}

/** What stops the start and is told in one line, without a stack: the process prints it and exits with status 1. */
export class StartupError extends Error {
  override readonly name: string = 'StartupError';
}

/** A setting with a wrong value. */
export class SettingsError extends StartupError {
  override readonly name = 'SettingsError';
}

type Environment = Readonly<Record<string, string | undefined>>;

const invalid = (name: string, value: string, expected: string): never => {
  throw new SettingsError(`${name}=${JSON.stringify(value)} is not valid: expected ${expected}.`);
};

function integer(env: Environment, name: string, fallback: number, min: number, max: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) {
    invalid(name, value, `a whole number from ${min} to ${max}`);
  }
  return Number(value);
}

function text(env: Environment, name: string, fallback: string): string {
  const value = env[name];
  if (value === undefined) return fallback;
  if (value.trim() === '') invalid(name, value, 'a non-empty value (or leave it unset for the default)');
  return value;
}

function origins(env: Environment): string[] {
  const value = text(env, 'CORS_ORIGINS', 'http://localhost:5173');
  return value.split(',').map((item) => {
    const origin = item.trim();
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    // An origin is scheme, host and port only: exactly what the browser sends in `Origin`.
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== origin) {
      invalid(
        'CORS_ORIGINS',
        value,
        `a comma list of origins such as http://localhost:5173 (no path, no trailing slash); "${origin}" is not one`,
      );
    }
    return origin;
  });
}

function flag(env: Environment, name: string, unset = false): boolean {
  const value = env[name];
  if (value === undefined || value === '') return unset;
  if (value === '0') return false;
  if (value === '1') return true;
  return invalid(name, value, unset ? '1 or unset (on), 0 (off)' : '1 (on), 0 or unset (off)');
}

/** The algorithms ACCESS_TOKEN_ALG takes: HS256 (a shared secret, the default), or one of a key pair. */
export const ACCESS_TOKEN_ALGS = ['HS256', 'ES256', 'EdDSA', 'RS256'] as const;
export type AccessTokenAlg = (typeof ACCESS_TOKEN_ALGS)[number];

function accessTokenAlg(env: Environment): AccessTokenAlg {
  const value = text(env, 'ACCESS_TOKEN_ALG', 'HS256');
  if (!(ACCESS_TOKEN_ALGS as readonly string[]).includes(value)) invalid('ACCESS_TOKEN_ALG', value, ACCESS_TOKEN_ALGS.join(', '));
  return value as AccessTokenAlg;
}

function redisUrl(env: Environment): string | undefined {
  const value = env.REDIS_URL;
  if (value === undefined || value === '') return undefined;
  if (!/^rediss?:\/\/[^/]/.test(value)) invalid('REDIS_URL', value, 'a redis:// or rediss:// URL');
  return value;
}

function redisClusterUrls(env: Environment): string[] | undefined {
  const value = env.REDIS_CLUSTER;
  if (value === undefined || value === '') return undefined;
  const urls = value.split(',').map((url) => url.trim());
  if (urls.some((url) => !/^rediss?:\/\/[^/]/.test(url))) {
    invalid('REDIS_CLUSTER', value, "a comma list of redis:// or rediss:// URLs of the cluster's nodes");
  }
  if (env.REDIS_URL !== undefined && env.REDIS_URL !== '') {
    invalid('REDIS_CLUSTER', value, 'unset while REDIS_URL is set: the shared state is one Redis or one cluster');
  }
  return urls;
}

function environment(env: Environment): boolean {
  const value = env.NODE_ENV ?? 'development';
  if (!['development', 'production', 'test'].includes(value)) invalid('NODE_ENV', value, 'development, production or test');
  return value === 'production';
}

/** The fewest bytes of a pinned secret: HS256 and HMAC keys of 256 bits. */
export const MIN_SECRET_BYTES = 32;

/**
 * The refresh grace by default, in seconds: short, as Amazon Cognito's (at
 * most 60 s) and Curity's warning (a longer grace widens the replay window)
 * advise, and safe because the library gives it once per rotation, never to
 * two rotations in a row, and only to clients that prove themselves (a
 * secret, or a DPoP-bound family).
 */
export const DEFAULT_REFRESH_GRACE = 10;

// A secret pinned in the environment; its value is never printed.
function secret(env: Environment, name: string): string | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (Buffer.byteLength(value) < MIN_SECRET_BYTES || value.trim() !== value) {
    invalid(name, '(hidden)', `at least ${MIN_SECRET_BYTES} bytes, with no space at either end (openssl rand -base64 32)`);
  }
  return value;
}

// RFC 8414 §2: the issuer is a URL with no query or fragment; a trailing slash would make it differ from the tokens' `iss` as clients compare it.
function issuer(env: Environment): string | undefined {
  const value = env.ISSUER;
  if (value === undefined || value === '') return undefined;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash || value.endsWith('/')) {
    invalid('ISSUER', value, 'the public URL of the service, such as https://api.example.com (no query, no trailing slash)');
  }
  return value;
}

/** Reads and checks every setting; throws a SettingsError for the first wrong one. */
export function readSettings(env: Environment = process.env): Settings {
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: text(env, 'HOST', '127.0.0.1'),
    demoUsername: text(env, 'DEMO_USERNAME', 'alice'),
    demoPassword: text(env, 'DEMO_PASSWORD', 'wonderland-rabbit-hole'),
    demoClientId: text(env, 'DEMO_CLIENT_ID', 'demo-client'),
    demoClientSecret: text(env, 'DEMO_CLIENT_SECRET', 'demo-secret'),
    demoSpaClientId: text(env, 'DEMO_SPA_CLIENT_ID', 'demo-spa'),
    demoPartnerClientId: text(env, 'DEMO_PARTNER_CLIENT_ID', 'demo-partner'),
    demoPartnerClientSecret: text(env, 'DEMO_PARTNER_CLIENT_SECRET', 'partner-secret'),
    demoServiceClientId: text(env, 'DEMO_SERVICE_CLIENT_ID', 'demo-service'),
    demoServiceClientSecret: text(env, 'DEMO_SERVICE_CLIENT_SECRET', 'service-secret'),
    corsOrigins: origins(env),
    rateLimit: integer(env, 'RATE_LIMIT', 100, 1, 1_000_000),
    rateWindow: integer(env, 'RATE_WINDOW', 60, 1, 86_400),
    accessTokenTtl: integer(env, 'ACCESS_TOKEN_TTL', 3600, 1, 86_400),
    accessTokenAlg: accessTokenAlg(env),
    maintenance: flag(env, 'MAINTENANCE'),
    redisUrl: redisUrl(env),
    redisClusterUrls: redisClusterUrls(env),
    production: environment(env),
    tokenSecret: secret(env, 'TOKEN_SECRET'),
    csrfSecret: secret(env, 'CSRF_SECRET'),
    partitionSecret: secret(env, 'RATE_LIMIT_PARTITION_SECRET'),
    exportLimit: integer(env, 'EXPORT_LIMIT', 1000, 1, 1_000_000),
    exportCallerLimit: integer(env, 'EXPORT_CALLER_LIMIT', 10, 1, 1_000_000),
    exportKept: integer(env, 'EXPORT_KEPT', 3600, 1, 86_400),
    exportDelay: integer(env, 'EXPORT_DELAY', 2, 0, 3600),
    passwordCost: integer(env, 'PASSWORD_COST', 12, 4, 15),
    issuer: issuer(env),
    refreshGrace: integer(env, 'REFRESH_GRACE', DEFAULT_REFRESH_GRACE, 0, 300),
    // On unless DPOP=0: a client with a proof gets a bound token, one without a bearer token (it costs it nothing).
    dpop: flag(env, 'DPOP', true),
    logEvents: flag(env, 'LOG_EVENTS', true),
    instanceId: instanceId(env),
  };
}

/** INSTANCE_ID: visible ASCII, at most 64 characters; by default the host's name. */
function instanceId(env: Environment): string {
  const value = env.INSTANCE_ID;
  if (value === undefined || value === '') return hostname();
  if (!/^[\x21-\x7e]{1,64}$/.test(value)) invalid('INSTANCE_ID', value, 'at most 64 visible ASCII characters');
  return value;
}
