import { type RequestHandler, Router } from 'express';
import { apiError, type CsrfTokens, clearSiteData, validate } from 'express-api-conventions';
import { requireXhr } from 'express-api-conventions/cors';
import {
  type DeviceCookies,
  passwordSignIn,
  type SignInGuard,
  type UserStore,
} from 'express-api-conventions-authorization-server';
import type { UserRepository } from '../users/repository.js';
import { representUser } from '../users/routes.js';
import { SESSION_COOKIE, SESSION_TTL_SECONDS, type SessionStore } from './store.js';

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
const COOKIE = { path: '/', maxAge: SESSION_TTL_SECONDS * 1000, sameSite: 'strict' } as const;

/** Browser sign-in, the current session, sign-out. */
export function sessionsRouter(options: SessionsRouterOptions): Router {
  const { sessions, accounts, guard, devices, passwordCost, csrf, users } = options;
  // The library's password check: the shared guard counts the attempt before
  // the password is checked, and an unknown user costs a dummy comparison.
  const checkPassword = passwordSignIn({ users: accounts, signInGuard: guard, passwordCost });
  const router = Router();

  const currentSession: RequestHandler = async (req, _res, next) => {
    next((await sessions.of(req)) ? undefined : apiError('unauthenticated', { message: 'No session: sign in first.' }));
  };

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
    const id = await sessions.create(account.subject);
    res.cookie(SESSION_COOKIE, id, COOKIE);
    devices.remember(res, device);
    res
      .status(201)
      .location('/v1/sessions/current')
      .json({ csrfToken: csrf.issue(id) });
  });

  router.get('/v1/sessions/current', requireXhr(), currentSession, async (req, res) => {
    const session = req.session;
    const user = session ? await users.get(BigInt(session.data.subject)) : undefined;
    if (!session || !user) throw apiError('resourceNotFound', { message: 'The user of this session no longer exists.' });
    res.json({ ...representUser(user), csrfToken: csrf.issue(session.id) });
  });

  router.delete('/v1/sessions/current', currentSession, clearSiteData(), async (req, res) => {
    if (req.session) await sessions.destroy(req.session.id);
    res.clearCookie(SESSION_COOKIE, { path: '/', sameSite: 'strict' });
    res.status(204).end();
  });

  return router;
}
