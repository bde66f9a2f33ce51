import express, { type Express } from 'express';
import { apiError, checkRoutes, conventions, csrfTokens, errorHandler, notFound } from 'express-api-conventions';
import { CORS_DEFAULT_ALLOWED_HEADERS, CORS_DEFAULT_EXPOSED_HEADERS } from 'express-api-conventions/cors';
import { type ClientStore, type DpopReplayStore, dpopAuth, type RevokedFamilies } from 'express-api-conventions/oauth2';
import type { CounterStore } from 'express-api-conventions/stores';
import {
  deviceCookies,
  type RefreshTokenStore,
  type SessionStore,
  type SignInGuardStore,
  signInGuard,
  tokenRouter,
  type UserStore,
} from 'express-api-conventions-authorization-server';
import { REALM, requireBearer, SCOPES, tokenSettings } from './auth.js';
import { exportsRouter } from './exports.js';
import { sessionAuth } from './sessions/auth.js';
import { sessionsRouter } from './sessions/routes.js';
import { sessionOf } from './sessions/store.js';
import type { Settings } from './settings.js';
import { accessTokenKeys } from './signing-key.js';
import type { SharedState } from './state.js';
import type { UserRepository } from './users/repository.js';
import { representUser, usersRouter } from './users/routes.js';

/** What the app is made of, apart from its settings: each in memory, or in Redis for several instances. */
export interface Services {
  readonly state: SharedState;
  readonly users: UserRepository;
  readonly sessions: SessionStore;
  /** Sign-in accounts (bcrypt hashes), read by the token endpoint and by browser sign-in. */
  readonly accounts: UserStore;
  readonly clients: ClientStore;
  readonly refreshTokens: RefreshTokenStore;
  /** Refresh-token families revoked before their access tokens expire (reuse detected). */
  readonly revokedFamilies: RevokedFamilies;
  /** Rate-limit counters. */
  readonly counters: CounterStore;
  /** The sign-in guard's counts (both doors that check a password). */
  readonly signIns: SignInGuardStore;
  /** The ids of DPoP proofs seen (DPoP is on unless DPOP=0). */
  readonly dpopReplay: DpopReplayStore;
  /** Secrets every instance shares (see secrets.ts). */
  readonly secrets: { readonly token: string; readonly csrf: string; readonly partition: string };
  /** The tokens' `iss` and the metadata's `issuer`: the service's URL, the same on every instance (issuer.ts). */
  readonly issuer: string;
  /** The private key (PEM) that signs access tokens with ACCESS_TOKEN_ALG other than HS256, the same on every instance (signing-key.ts). */
  readonly signingKey: string | undefined;
}

/**
 * The reference server: every rule of docs/conventions.md on one small users service,
 * assembled from the library's public exports, in the order they must run.
 */
export function createApp(settings: Settings, services: Services): Express {
  const {
    state,
    users,
    sessions,
    accounts,
    clients,
    refreshTokens,
    revokedFamilies,
    counters,
    signIns,
    secrets,
    issuer,
    dpopReplay,
  } = services;
  const keys = accessTokenKeys(settings.accessTokenAlg, secrets.token, services.signingKey);
  const tokens = tokenSettings(keys, issuer, revokedFamilies, users);
  const csrf = csrfTokens({ secret: secrets.csrf });
  // One sign-in guard for both doors that check a password (token endpoint, browser sign-in), on the shared counts.
  const guard = signInGuard({ store: signIns });
  const app = express();

  // The preset, whole (docs/preset.md): common and security headers,
  // no-store by default and strong ETags, CORS with credentials for the
  // listed origins, secure cookies, JSON output (checked by the
  // response-shape linter outside production), the maintenance stop, bearer
  // callers identified (a bad token is a 401), the rate limit (docs/conventions.md
  // rule 12.6: per user and per application, RateLimit headers on every answer),
  // state-changing requests from pages of other sites refused on every door,
  // sign-in included (Fetch Metadata; CORS_ORIGINS are trusted), bounded
  // bodies, method override, CSRF for whatever the session cookie
  // authenticates, and the OAuth endpoints: POST /v1/oauth2/token (password
  // and refresh_token grants, rotation, the sign-in guard shared with browser
  // sign-in), POST /v1/oauth2/revocations (RFC 7009), POST
  // /v1/oauth2/introspections (RFC 7662) and GET
  // /.well-known/oauth-authorization-server (RFC 8414).
  app.use(
    conventions({
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
        store: counters,
        partitionSecret: secrets.partition,
      },
      csrfProtection: { tokens: csrf, sessionOf: async (req) => (await sessionOf(sessions, req))?.data.id },
      tokenRouter: tokenRouter({
        ...tokens,
        users: accounts,
        clients,
        refreshTokens,
        scopes: SCOPES,
        // RFC 7662: the demo application may introspect the tokens issued to it, and no others'.
        introspectors: { [settings.demoClientId]: 'own-tokens' },
        accessTokenTtlSeconds: settings.accessTokenTtl,
        refreshGraceSeconds: settings.refreshGrace,
        // The contract lists the metadata document: an issuer it cannot describe stops the start.
        metadata: true,
        // DPoP (RFC 9449), on unless DPOP=0: a token request with a proof gets a token bound to the
        // client's key; one without gets a bearer token.
        dpop: settings.dpop ? { replay: dpopReplay } : false,
        // Your users' bcrypt cost: what an outdated hash is upgraded to, and unknown usernames' cost until a known one signs in.
        passwordCost: settings.passwordCost,
        signInGuard: guard,
      }),
    }),
  );

  app.use(usersRouter(users));

  // The token's own user: bearer only, and confidential (no-store, the default of caching()).
  // With DPoP on (the default) it also takes DPoP-bound tokens, each request with a proof of the token's key.
  const meAuth = settings.dpop
    ? dpopAuth({ ...tokens, realm: REALM, origin: new URL(issuer).origin, dpop: { replay: dpopReplay } })
    : requireBearer(tokens);
  app.get('/v1/me', meAuth, async (req, res) => {
    const user = await users.get(BigInt(req.auth?.subject ?? '0'));
    if (!user) throw apiError('resourceNotFound', { message: 'The user of this token no longer exists.' });
    res.json(representUser(user));
  });

  app.use(
    exportsRouter({
      state,
      users,
      delaySeconds: settings.exportDelay,
      keptSeconds: settings.exportKept,
      limit: settings.exportLimit,
      callerLimit: settings.exportCallerLimit,
    }),
  );
  // The device cookie is signed with the token secret (under its own label): the same on every instance.
  const devices = deviceCookies({ secret: secrets.token });
  app.use(sessionsRouter({ sessions, accounts, guard, devices, passwordCost: settings.passwordCost, csrf, users }));

  // A wrong URI is 404 (or 405 with Allow), told apart from a missing record; every error is JSON.
  // A 401 without a challenge of its own (a failed browser sign-in) names the bearer scheme of this API.
  app.use(notFound(), errorHandler({ production: settings.production, challenge: `Bearer realm="${REALM}"` }));

  // The server's own routes follow the path rules (docs/conventions.md section 3), or it does not start.
  // `me` names the caller, not a collection. Well-known URIs (RFC 8615) are
  // names fixed by their RFCs, outside the API's versioned paths.
  checkRoutes(app, { exceptions: { plural: ['me'] }, ignore: [/^\/\.well-known\//] });
  console.log('route check: every route follows the path rules (docs/conventions.md §3)');
  return app;
}
