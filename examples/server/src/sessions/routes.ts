import { type RequestHandler, Router } from 'express';
import { apiError } from 'express-api-conventions';
import type { Accounts } from '../accounts.js';
import type { UserRepository } from '../users/repository.js';
import { representUser } from '../users/routes.js';
import { SESSION_COOKIE } from './auth.js';
import { SESSION_TTL_SECONDS, type SessionStore } from './store.js';

export interface SessionsRouterOptions {
  readonly sessions: SessionStore;
  readonly accounts: Accounts;
  readonly users: UserRepository;
  /** Refuses a request without `X-Requested-With: XMLHttpRequest` (browser-script-only endpoints). */
  readonly requireXhr: RequestHandler;
  /** Sends `Clear-Site-Data: "cache", "cookies", "storage"` on sign-out. */
  readonly clearSiteData: RequestHandler;
}

// SPEC.md "Cookies carry the attributes Secure and HttpOnly"; SameSite=Strict
// keeps the cookie off every cross-site request, CSRF token or not.
const COOKIE_ATTRIBUTES = `Path=/; Max-Age=${SESSION_TTL_SECONDS}; Secure; HttpOnly; SameSite=Strict`;
const EXPIRED_COOKIE = `${SESSION_COOKIE}=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Strict`;

const signInFailed = () =>
  // One answer for an unknown user and a wrong password: no user enumeration.
  apiError('unauthenticated', { message: 'The username or password is not right.' });

/** Browser sign-in, the current session, sign-out. */
export function sessionsRouter(options: SessionsRouterOptions): Router {
  const { sessions, accounts, users, requireXhr, clearSiteData } = options;
  const router = Router();

  const currentSession: RequestHandler = (req, _res, next) =>
    next(req.session ? undefined : apiError('unauthenticated', { message: 'No session: sign in first.' }));

  router.post('/v1/sessions', async (req, res) => {
    const { username, password } = (req.body ?? {}) as Record<string, unknown>;
    if (typeof username !== 'string' || typeof password !== 'string') {
      throw apiError('validationFailed', { message: 'Send `username` and `password`.' });
    }
    const subject = await accounts.verify(username, password);
    if (!subject) throw signInFailed();
    const { id, session } = await sessions.create(subject);
    res.setHeader('Set-Cookie', `${SESSION_COOKIE}=${id}; ${COOKIE_ATTRIBUTES}`);
    res.status(201).location('/v1/sessions/current').json({ csrfToken: session.csrfToken });
  });

  router.get('/v1/sessions/current', requireXhr, currentSession, async (req, res) => {
    const user = await users.get(BigInt(req.session?.data.subject ?? '0'));
    if (!user) throw apiError('resourceNotFound', { message: 'The user of this session no longer exists.' });
    res.json({ ...representUser(user), csrfToken: req.session?.data.csrfToken });
  });

  router.delete('/v1/sessions/current', currentSession, clearSiteData, async (req, res) => {
    if (req.session) await sessions.destroy(req.session.id);
    res.setHeader('Set-Cookie', EXPIRED_COOKIE);
    res.status(204).end();
  });

  return router;
}
