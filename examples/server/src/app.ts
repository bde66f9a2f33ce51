import express, { type Express, type RequestHandler } from 'express';
import { apiError, type CounterStore, conventions, errorHandler, notFound, rateLimit } from 'express-api-conventions';
import type { Accounts } from './accounts.js';
import { exportsRouter } from './exports.js';
import { requireAuthentication, sessionAuth, sessionCsrf } from './sessions/auth.js';
import { sessionsRouter } from './sessions/routes.js';
import type { SessionStore } from './sessions/store.js';
import type { Settings } from './settings.js';
import type { SharedState } from './state.js';
import type { UserRepository } from './users/repository.js';
import { usersRouter } from './users/routes.js';

/** What the app is made of, apart from its settings: in memory or in Redis. */
export interface Services {
  readonly state: SharedState;
  readonly users: UserRepository;
  readonly sessions: SessionStore;
  readonly accounts: Accounts;
  /** Rate-limit counters: a MemoryCounterStore, or a RedisCounterStore shared by every instance. */
  readonly counters: CounterStore;
  /** Secrets every instance shares (see secrets.ts). */
  readonly secrets: { readonly partition: string };
}

// SPEC.md "Cross-origin (CORS)": browser-script-only endpoints refuse a request without it.
const requireXhr: RequestHandler = function requireXhrMiddleware(req, _res, next) {
  next(req.headers['x-requested-with'] === 'XMLHttpRequest' ? undefined : apiError('xhrRequired'));
};

// SPEC.md "Security response headers": data clearing on logout.
const clearSiteData: RequestHandler = function clearSiteDataMiddleware(_req, res, next) {
  res.setHeader('Clear-Site-Data', '"cache", "cookies", "storage"');
  next();
};

/**
 * The reference server: every rule of SPEC.md on one small users service,
 * assembled from the library's public exports in the order they must run.
 */
export function createApp(settings: Settings, services: Services): Express {
  const { state, users, sessions, accounts, counters, secrets } = services;
  const app = express();
  app.disable('x-powered-by');

  // Common headers, JSON output, maintenance stop, bounded bodies, method override.
  // The rate limiter is mounted below, once the request's user is known.
  app.use(conventions({ maintenance: settings.maintenance ? { retryAfter: 300 } : false, rateLimit: false }));

  // Who is asking: a browser session (a bearer token when the oauth2 module is wired).
  // A state-changing request that the session cookie authenticated needs its CSRF token.
  app.use(sessionAuth(sessions), sessionCsrf());

  // SPEC.md Limits rule 4: counted per user and per application, RateLimit headers on every answer.
  app.use(
    rateLimit({
      limit: settings.rateLimit,
      windowSeconds: settings.rateWindow,
      store: counters,
      partitionSecret: secrets.partition,
    }),
  );

  // Writes need a user.
  const writeGuards = [requireAuthentication()];

  app.use(usersRouter({ users, writeGuards }));
  app.use(exportsRouter({ state, users, delaySeconds: settings.exportDelay, guards: writeGuards }));
  app.use(sessionsRouter({ sessions, accounts, users, requireXhr, clearSiteData }));

  // A wrong URI is 404 (or 405 with Allow), told apart from a missing record; every error is JSON.
  app.use(notFound(), errorHandler({ production: settings.production }));
  return app;
}
