import { type RequestHandler, Router } from 'express';
import { apiError, type CsrfTokens, clearSiteData, validate } from 'express-api-conventions';
import { requireXhr } from 'express-api-conventions/cors';
import type { SessionStore } from 'express-api-conventions-authorization-server';
import type { UserRepository } from '../users/repository.js';
import { representUser } from '../users/routes.js';
import { scriptOnlyForCookies, signedIn } from './auth.js';
import { type BrowserSignIn, SESSION_COOKIE_OPTIONS } from './sign-in.js';
import { SESSION_COOKIE, sessionOf } from './store.js';

export interface SessionsRouterOptions {
  readonly sessions: SessionStore;
  /** Checks the password and opens the session (sign-in.ts), as the sign-in page does. */
  readonly signIn: BrowserSignIn;
  readonly csrf: CsrfTokens;
  readonly users: UserRepository;
}

/** The sign-in form, as docs/openapi.yaml describes it (`Credentials`). */
const CREDENTIALS = {
  type: 'object',
  required: ['username', 'password'],
  properties: {
    username: { type: 'string', minLength: 1, maxLength: 256 },
    password: { type: 'string', minLength: 1, maxLength: 1024 },
  },
} as const;

/** Browser sign-in, the current session, sign-out, and the user's sessions: listed, and ended one by one. */
export function sessionsRouter(options: SessionsRouterOptions): Router {
  const { sessions, signIn, csrf, users } = options;
  const router = Router();

  const currentSession: RequestHandler = async (req, _res, next) => {
    next((await sessionOf(sessions, req)) ? undefined : apiError('unauthenticated', { message: 'No session: sign in first.' }));
  };
  const scriptOnly = scriptOnlyForCookies();

  router.post('/v1/sessions', validate({ body: CREDENTIALS }), async (req, res) => {
    const { username, password } = req.body as { username: string; password: string };
    const session = await signIn(req, res, username, password);
    if (!session) throw apiError('unauthenticated', { message: 'The username or password is not right.' });
    res
      .status(201)
      .location('/v1/sessions/current')
      .json({ csrfToken: csrf.issue(session.id) });
  });

  router.get('/v1/sessions/current', requireXhr(), currentSession, async (req, res) => {
    const session = req.session;
    const user = session ? await users.get(BigInt(session.data.subject)) : undefined;
    if (!session || !user) throw apiError('resourceNotFound', { message: 'The user of this session no longer exists.' });
    res.json({ ...representUser(user), csrfToken: csrf.issue(session.data.id) });
  });

  router.delete('/v1/sessions/current', currentSession, clearSiteData(), async (req, res) => {
    if (req.session) await sessions.endByCookie(req.session.cookie, { request: req });
    res.clearCookie(SESSION_COOKIE, SESSION_COOKIE_OPTIONS);
    res.status(204).end();
  });

  // The user's live sessions, by public id: never a cookie value.
  router.get('/v1/sessions', scriptOnly, signedIn, async (req, res) => {
    const subject = req.auth?.subject ?? '';
    const mine = await sessionOf(sessions, req);
    const current = mine?.data.subject === subject ? mine.data.id : undefined;
    const listed = await sessions.list(subject);
    res.json({
      sessions: listed.map(({ id, createdAt, lastSeenAt, device }) => ({
        id,
        createdAt,
        lastSeenAt,
        current: id === current,
        device,
      })),
    });
  });

  // Ends one session of the same user; the preset's CSRF check has already run when a cookie authenticates.
  router.delete('/v1/sessions/:id', signedIn, async (req, res) => {
    const ended = await sessions.end(req.auth?.subject ?? '', String(req.params.id), { request: req });
    // One answer for an unknown id and another user's: ids of others are not confirmed.
    if (!ended) throw apiError('resourceNotFound', { message: 'No such session.' });
    res.status(204).end();
  });

  return router;
}
