import type { Request } from 'express';
import { cookieValue } from 'express-api-conventions';
import type { SessionStore } from '../stores/session-store.js';

/**
 * The signed-in user of a browser request, as the authorization endpoint
 * needs them: who they are, which session (its public id: the consent
 * page's CSRF token is bound to it) and when they signed in (bound into
 * every code they approve).
 */
export interface AuthorizationSession {
  /** The user (a token's `sub`). */
  readonly subject: string;
  /** The session's public id, never its cookie. */
  readonly sessionId: string;
  /** When the user signed in, seconds since the epoch. */
  readonly authTime: number;
}

/** How the authorization endpoint finds the signed-in user of a request: undefined when nobody is signed in. */
export type FindSession = (req: Request) => Promise<AuthorizationSession | undefined>;

/**
 * The usual FindSession: the package's SessionStore, by the session cookie
 * named `cookie` (the app's own, e.g. `__Host-session`). The session's
 * creation is its authentication time: a session is opened by a sign-in.
 */
export function sessionFromCookie(sessions: SessionStore, cookie: string): FindSession {
  return async function findSessionByCookie(req) {
    const value = cookieValue(req, cookie);
    const live = value === undefined || value === '' ? undefined : await sessions.find(value, { request: req });
    if (live === undefined) return undefined;
    return { subject: live.subject, sessionId: live.id, authTime: Math.floor(Date.parse(live.createdAt) / 1000) };
  };
}
