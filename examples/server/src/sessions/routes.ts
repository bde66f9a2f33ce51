import { type RequestHandler, Router } from 'express';
import { apiError, type CsrfTokens, clearSiteData, validate } from 'express-api-conventions';
import { requireXhr } from 'express-api-conventions/cors';
import {
  type DeviceCookies,
  passwordSignIn,
  type SessionStore,
  type SignInGuard,
  type UserStore,
} from 'express-api-conventions-authorization-server';
import type { UserRepository } from '../users/repository.js';
import { representUser } from '../users/routes.js';
import { SESSION_COOKIE, sessionOf } from './store.js';

export interface SessionsRouterOptions {
  readonly sessions: SessionStore;
  /** The sign-in accounts: the same store the token endpoint reads. */
  readonly accounts: UserStore;
  /** The sign-in guard the token endpoint uses too: one allowance of failures for both doors. */
  readonly guard: SignInGuard;
  /** The signed device cookie: a browser that signed an account in before keeps signing in while others guess. */
  readonly devices: DeviceCookies;
  /** bcrypt cost of the accounts' hashes: an unknown username is checked against a dummy hash of this cost. */
  readonly passwordCost: number;
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

// docs/conventions.md rule 11.14: cookies are Secure and HttpOnly (secureCookies()
// adds both to every cookie); Strict keeps the cookie off every cross-site request.
const COOKIE = { path: '/', sameSite: 'strict' } as const;

/** Browser sign-in, the current session, sign-out, and the user's sessions: listed, and ended one by one. */
export function sessionsRouter(options: SessionsRouterOptions): Router {
  const { sessions, accounts, guard, devices, passwordCost, csrf, users } = options;
  // The library's password check: the shared guard counts the attempt before
  // the password is checked, and an unknown user costs a dummy comparison.
  const checkPassword = passwordSignIn({ users: accounts, signInGuard: guard, passwordCost });
  const router = Router();

  const { currentSession, signedIn, scriptOnlyForCookies } = sessionGuards(sessions);

  router.post('/v1/sessions', validate({ body: CREDENTIALS }), async (req, res) => {
    const { username, password } = req.body as { username: string; password: string };
    // While the username or address is throttled, even the right password gets 429
    // (unless this browser's device cookie signed this account in before).
    const device = devices.deviceOf(req);
    const account = await checkPassword(req, username, password, { device: device.device });
    // One answer for an unknown user, a wrong password and a deleted user: no user enumeration.
    if (!account || !(await users.get(BigInt(account.subject)))) {
      throw apiError('unauthenticated', { message: 'The username or password is not right.' });
    }
    // Each sign-in opens its own session: the user's other devices stay signed in.
    const { cookie, session } = await sessions.create(account.subject, { request: req });
    res.cookie(SESSION_COOKIE, cookie, { ...COOKIE, maxAge: sessions.ttlSeconds * 1000 });
    devices.remember(res, device);
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
    res.clearCookie(SESSION_COOKIE, { path: '/', sameSite: 'strict' });
    res.status(204).end();
  });

  // The user's live sessions, by public id: never a cookie value.
  router.get('/v1/sessions', scriptOnlyForCookies, signedIn, async (req, res) => {
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

/** The checks in front of the session routes: a session cookie, any sign-in, and scripts only for cookies. */
function sessionGuards(sessions: SessionsRouterOptions['sessions']) {
  const currentSession: RequestHandler = async (req, _res, next) => {
    next((await sessionOf(sessions, req)) ? undefined : apiError('unauthenticated', { message: 'No session: sign in first.' }));
  };
  // The session cookie or a bearer token (the preset's bearerAuth, or sessionAuth, filled req.auth).
  const signedIn: RequestHandler = (req, _res, next) => {
    next(req.auth ? undefined : apiError('unauthenticated', { message: 'Sign in, or send a bearer token.' }));
  };
  // A read the cookie authenticates is for the page's own scripts only (X-Requested-With). A request
  // with Authorization is authenticated by it, and that header too cannot cross sites without a preflight.
  const xhr = requireXhr();
  const scriptOnlyForCookies: RequestHandler = (req, res, next) => {
    if (req.headers.authorization === undefined) xhr(req, res, next);
    else next();
  };
  return { currentSession, signedIn, scriptOnlyForCookies };
}
