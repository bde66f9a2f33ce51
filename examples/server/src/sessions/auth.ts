import type { RequestHandler } from 'express';
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
