import type { Request } from 'express';
import { cookieValue } from 'express-api-conventions';
import type { LiveSession, SessionStore } from 'express-api-conventions-authorization-server';
import { SIGN_IN_PAGE } from '../page-paths.js';

/** The session cookie. `__Host-` makes the browser insist on Secure, Path=/ and no Domain. */
export const SESSION_COOKIE = '__Host-session';

/** The request's session: its secret cookie value and the live session it names. */
export interface CurrentSession {
  readonly cookie: string;
  readonly data: LiveSession;
}

declare module 'express-serve-static-core' {
  interface Request {
    /** The live browser session named by the request's cookie, once looked up. */
    session?: CurrentSession | null;
  }
}

/**
 * The live session of the request's cookie, looked up once per request
 * (the CSRF check, the authentication and the route all ask). Signing in is
 * never authenticated by an old cookie. The sessions are the
 * authorization-server package's store, in memory or in Redis: every
 * instance knows every session, and each sign-in keeps its own.
 */
export async function sessionOf(sessions: SessionStore, req: Request): Promise<CurrentSession | undefined> {
  if (req.session !== undefined) return req.session ?? undefined;
  const signingIn = req.method === 'POST' && (req.path === '/v1/sessions' || req.path === SIGN_IN_PAGE);
  const cookie = signingIn ? undefined : cookieValue(req, SESSION_COOKIE);
  const data = cookie ? await sessions.find(cookie, { request: req }) : undefined;
  req.session = cookie && data ? { cookie, data } : null;
  return req.session ?? undefined;
}
