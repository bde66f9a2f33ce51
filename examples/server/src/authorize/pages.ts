import { type Response, Router } from 'express';
import { apiError, type CsrfTokens } from 'express-api-conventions';
import type { AuthorizationHelpers, SessionStore } from 'express-api-conventions-authorization-server';
import { REALM } from '../auth.js';
import { CONSENT_PAGE, SIGN_IN_PAGE } from '../page-paths.js';
import type { BrowserSignIn } from '../sessions/sign-in.js';
import { sessionOf } from '../sessions/store.js';
import { consentPage, messagePage, signInPage } from './html.js';

export interface AuthorizationPagesOptions {
  readonly sessions: SessionStore;
  /** The browser door `POST /v1/sessions` uses too. */
  readonly signIn: BrowserSignIn;
  /** The session's CSRF tokens: the consent form carries one, as every form of a session does. */
  readonly csrf: CsrfTokens;
  /** `router.authorization` of tokenRouter(): the returnTo check and the consent prompt. */
  readonly authorization: AuthorizationHelpers;
}

/** Answers a page; the preset already set no-store and the security headers (CSP `script-src 'self'`). */
const sendPage = (res: Response, status: number, html: string): void => {
  res.status(status).type('html').send(html);
};

/** A form field given once, as text of at most `max` characters; undefined otherwise. */
const field = (body: unknown, name: string, max: number): string | undefined => {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined;
};

/**
 * The application's part of the authorization code flow
 * (docs/authorization-code.md): the sign-in page, which goes back to the
 * authorization request it came from and nowhere else, and the consent page.
 */
export function authorizationPages(options: AuthorizationPagesOptions): Router {
  const { sessions, signIn, csrf, authorization } = options;
  const router = Router();

  router.get(SIGN_IN_PAGE, (req, res) => {
    sendPage(res, 200, signInPage(authorization.returnTo(req.query.returnTo)));
  });

  // Sign-in from another site's page is refused by the preset (Fetch Metadata), before this runs.
  router.post(SIGN_IN_PAGE, async (req, res) => {
    // Only this server's own authorization requests: the page is never an open redirect.
    const back = authorization.returnTo(req.body?.returnTo);
    const username = field(req.body, 'username', 256);
    const password = field(req.body, 'password', 1024);
    const session = username && password ? await signIn(req, res, username, password) : undefined;
    if (!session) {
      // The same words for an unknown user, a wrong password and an empty field: no user enumeration.
      res.setHeader('WWW-Authenticate', `Bearer realm="${REALM}"`);
      sendPage(res, 401, signInPage(back, 'The username or password is not right.'));
      return;
    }
    if (back !== undefined) res.redirect(303, back);
    else sendPage(res, 200, messagePage('Signed in', 'You are signed in. Go back to the application you came from.'));
  });

  router.get(CONSENT_PAGE, async (req, res) => {
    const prompt = await authorization.consentPrompt(req);
    if (prompt === undefined) {
      sendPage(res, 400, messagePage('Nothing to approve', 'Start again from the application you came from.'));
      return;
    }
    // Signed out meanwhile, or a request no longer valid: the endpoint decides again (sign-in, or an error).
    if (prompt.kind === 'restart') {
      res.redirect(303, prompt.location);
      return;
    }
    // An `ask` prompt comes only with a live session (the same cookie the package read).
    const session = await sessionOf(sessions, req);
    if (!session) throw apiError('unauthenticated', { message: 'No session: sign in first.' });
    sendPage(res, 200, consentPage(prompt, csrf.issue(session.data.id)));
  });

  return router;
}
