import { type RequestHandler, Router } from 'express';
import {
  apiError,
  type CounterStore,
  type CsrfTokens,
  clearSiteData,
  limiter,
  normalizeUsername,
  requireXhr,
  tooManyRequests,
  type UserStore,
  verifyPassword,
} from 'express-api-conventions';
import type { UserRepository } from '../users/repository.js';
import { representUser } from '../users/routes.js';
import { SESSION_COOKIE, SESSION_TTL_SECONDS, type SessionStore } from './store.js';

export interface SessionsRouterOptions {
  readonly sessions: SessionStore;
  /** The sign-in accounts: the same store the token endpoint reads. */
  readonly accounts: UserStore;
  /** A bcrypt hash of no one's password: an unknown username costs a comparison too. */
  readonly dummyHash: string;
  readonly csrf: CsrfTokens;
  readonly users: UserRepository;
  /** Where failed sign-ins are counted (shared by every instance with Redis). */
  readonly counters: CounterStore;
  readonly partitionSecret: string;
}

// SPEC.md: "Cookies carry the attributes Secure and HttpOnly" (secureCookies()
// adds both to every cookie); Strict keeps the cookie off every cross-site request.
const COOKIE = { path: '/', maxAge: SESSION_TTL_SECONDS * 1000, sameSite: 'strict' } as const;

/** Browser sign-in, the current session, sign-out. */
export function sessionsRouter(options: SessionsRouterOptions): Router {
  const { sessions, accounts, dummyHash, csrf, users, counters, partitionSecret } = options;
  // Ten failed sign-ins per username per quarter hour, as the token endpoint's guard.
  const failures = limiter({ name: 'sign-in-failures', limit: 10, windowSeconds: 900, store: counters, partitionSecret });
  const router = Router();

  const currentSession: RequestHandler = async (req, _res, next) => {
    next((await sessions.of(req)) ? undefined : apiError('unauthenticated', { message: 'No session: sign in first.' }));
  };

  router.post('/v1/sessions', async (req, res) => {
    const { username, password } = (req.body ?? {}) as Record<string, unknown>;
    if (typeof username !== 'string' || typeof password !== 'string') {
      throw apiError('validationFailed', { message: 'Send `username` and `password`.' });
    }
    const name = normalizeUsername(username);
    const seen = await failures.peek(name);
    // While throttled, even the right password is refused: one 201 among the 429s would tell.
    if (seen.limited) throw tooManyRequests(seen, { error: 'tooManyLoginFailures' });
    const account = await accounts.findByUsername(name);
    const matches = await verifyPassword(password, account?.passwordHash ?? dummyHash);
    if (!account || !matches) {
      await failures.consume(name);
      // One answer for an unknown user and a wrong password: no user enumeration.
      throw apiError('unauthenticated', { message: 'The username or password is not right.' });
    }
    await failures.reset(name);
    const id = await sessions.create(account.subject);
    res.cookie(SESSION_COOKIE, id, COOKIE);
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
