import { timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { apiError } from 'express-api-conventions';
import type { Session, SessionStore } from './store.js';

/** The session cookie. `__Host-` makes the browser insist on Secure, Path=/ and no Domain. */
export const SESSION_COOKIE = '__Host-session';
/** Scopes a browser session holds: everything its user may do. */
export const SESSION_SCOPES = ['users:write', 'exports'] as const;

declare module 'express-serve-static-core' {
  interface Request {
    /** The browser session that authenticated this request, if one did. */
    session?: { readonly id: string; readonly data: Session };
  }
}

/** The value of one cookie, read from the `Cookie` header. */
export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at !== -1 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * Authenticates by the session cookie, when the request has one that names a
 * live session: fills `req.session` and `req.auth`. Never refuses by itself.
 */
export function sessionAuth(sessions: SessionStore): RequestHandler {
  return async function sessionAuthMiddleware(req, _res, next) {
    // Signing in is not authenticated by the old cookie, whatever it holds.
    const signingIn = req.method === 'POST' && req.path === '/v1/sessions';
    const id = req.auth || signingIn ? undefined : readCookie(req, SESSION_COOKIE);
    const data = id ? await sessions.find(id) : undefined;
    if (id && data) {
      req.session = { id, data };
      req.auth = { subject: data.subject, scopes: SESSION_SCOPES };
    }
    next();
  };
}

/** Refuses a request that no bearer token and no session authenticated (401). */
export function requireAuthentication(): RequestHandler {
  return function requireAuthenticationMiddleware(req, _res, next) {
    next(
      req.auth ? undefined : apiError('unauthenticated', { headers: { 'WWW-Authenticate': 'Bearer realm="reference-server"' } }),
    );
  };
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const sameSecret = (given: unknown, expected: string): boolean => {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * SPEC.md "Cross-site request forgery": a state-changing request that a
 * session cookie authenticated carries the session's token, in the
 * `CSRF-Token` header or the `_csrf` form field; otherwise 403. A request
 * authenticated by a bearer token carries no ambient credential and is not
 * checked. Runs after method override, so an overridden POST is checked as
 * the method it becomes.
 */
export function sessionCsrf(): RequestHandler {
  return function sessionCsrfMiddleware(req, _res, next) {
    if (!req.session || !UNSAFE.has(req.method)) return next();
    const body = req.body as Record<string, unknown> | undefined;
    const fromForm = body && typeof body === 'object' && req.is('application/x-www-form-urlencoded') ? body._csrf : undefined;
    if (body && typeof body === 'object') delete body._csrf;
    const given = req.headers['csrf-token'] ?? fromForm;
    next(sameSecret(given, req.session.data.csrfToken) ? undefined : apiError('csrfTokenInvalid'));
  };
}
