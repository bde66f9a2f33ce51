import type { ConventionsOptions, CsrfTokens } from 'express-api-conventions';
import { CORS_DEFAULT_ALLOWED_HEADERS, CORS_DEFAULT_EXPOSED_HEADERS } from 'express-api-conventions/cors';
import type { TokenRouter } from 'express-api-conventions-authorization-server';
import { REALM, type TokenSettings } from './auth.js';
import type { Services } from './services.js';
import { sessionAuth } from './sessions/auth.js';
import { sessionOf } from './sessions/store.js';
import type { Settings } from './settings.js';

/** What the preset is given besides the settings and the services. */
export interface PresetParts {
  readonly tokens: TokenSettings;
  readonly csrf: CsrfTokens;
  /** tokenService(): the OAuth endpoints, the authorization endpoint included. */
  readonly tokenRouter: TokenRouter;
}

/**
 * The preset, whole (docs/preset.md): common and security headers, no-store
 * by default and strong ETags, CORS with credentials for the listed origins,
 * secure cookies, JSON output (checked by the response-shape linter outside
 * production), the maintenance stop, bearer callers identified (a bad token
 * is a 401), the rate limit (docs/conventions.md rule 12.6: per user and per
 * application, RateLimit headers on every answer), state-changing requests
 * from pages of other sites refused on every door, sign-in included (Fetch
 * Metadata; CORS_ORIGINS are trusted), bounded bodies, method override, CSRF
 * for whatever the session cookie authenticates (the consent form too), and
 * the OAuth endpoints (token-service.ts).
 */
export function presetOptions(settings: Settings, services: Services, parts: PresetParts): ConventionsOptions {
  const { sessions, clients } = services;
  const { tokens, csrf, tokenRouter } = parts;
  return {
    // Beyond the defaults, for the browser page: it reads `Link` (the next
    // page) and `Clear-Site-Data` (sign-out), and its own conditional GET
    // sends `Cache-Control: max-age=0` (a script's If-None-Match otherwise
    // goes out with the browser's `no-cache`, which rules a 304 out).
    corsPolicy: {
      origins: [...settings.corsOrigins],
      allowedHeaders: [...CORS_DEFAULT_ALLOWED_HEADERS, 'Cache-Control'],
      exposedHeaders: [...CORS_DEFAULT_EXPOSED_HEADERS, 'Link', 'Clear-Site-Data'],
    },
    maintenance: settings.maintenance ? { retryAfter: 300 } : false,
    // Bearer callers, and applications whose Basic credentials verify, are
    // known before the rate limiter counts them (docs/conventions.md rule 12.6).
    bearerAuth: { ...tokens, realm: REALM, clients },
    // A request without a bearer token may come from a signed-in browser:
    // its session is looked up before the rate limiter counts its user.
    before: { rateLimit: [sessionAuth(sessions, tokens.isSubjectActive)] },
    rateLimit: {
      limit: settings.rateLimit,
      windowSeconds: settings.rateWindow,
      store: services.counters,
      partitionSecret: services.secrets.partition,
    },
    csrfProtection: { tokens: csrf, sessionOf: async (req) => (await sessionOf(sessions, req))?.data.id },
    tokenRouter,
  };
}
