import type { RequestHandler } from 'express';
import { apiError } from 'express-api-conventions';
import { requireXhr } from 'express-api-conventions/cors';
import type { SubjectActiveCheck } from 'express-api-conventions/oauth2';
import type { SessionStore } from 'express-api-conventions-authorization-server';
import { SCOPES } from '../auth.js';
import { sessionOf } from './store.js';

/**
 * Authenticates by the session cookie when no bearer token did: fills
 * `req.auth` for a live session whose user still exists, with every scope of
 * the service. Never refuses by itself; requireScope() on a route does.
 */
export function sessionAuth(sessions: SessionStore, isSubjectActive: SubjectActiveCheck): RequestHandler {
  return async function sessionAuthMiddleware(req, _res, next) {
    if (!req.auth) {
      const session = await sessionOf(sessions, req);
      if (session && (await isSubjectActive(session.data.subject))) req.auth = { subject: session.data.subject, scopes: SCOPES };
    }
    next();
  };
}

/** The session cookie or a bearer token authenticated the request (the preset's bearerAuth, or sessionAuth, filled req.auth). */
export const signedIn: RequestHandler = (req, _res, next) => {
  next(req.auth ? undefined : apiError('unauthenticated', { message: 'Sign in, or send a bearer token.' }));
};

/**
 * A read the cookie authenticates is for the page's own scripts only (X-Requested-With). A request
 * with Authorization is authenticated by it, and that header too cannot cross sites without a preflight.
 */
export function scriptOnlyForCookies(): RequestHandler {
  const xhr = requireXhr();
  return function scriptOnlyForCookiesMiddleware(req, res, next) {
    if (req.headers.authorization === undefined) xhr(req, res, next);
    else next();
  };
}
