import { type AuthorizationOptions, sessionFromCookie } from 'express-api-conventions-authorization-server';
import { CONSENT_PAGE, SIGN_IN_PAGE } from '../page-paths.js';
import type { Services } from '../services.js';
import { SESSION_COOKIE } from '../sessions/store.js';
import { messagePage } from './html.js';

/**
 * The authorization endpoint's part of tokenRouter() (docs/authorization-code.md):
 * the users signed in by the session cookie, this server's two pages, and the
 * codes and consents every instance shares (memory, or Redis).
 */
export function authorizationOptions(services: Services): AuthorizationOptions {
  return {
    findSession: sessionFromCookie(services.sessions, SESSION_COOKIE),
    signInUrl: SIGN_IN_PAGE,
    consentUrl: CONSENT_PAGE,
    codes: services.codes,
    consents: services.consents,
    // An error that cannot go back to the client, for a browser: the server's own page, no script.
    errorPage: (_req, res, page) => {
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(messagePage('Authorization failed', `${page.description} (${page.error})`));
    },
  };
}
