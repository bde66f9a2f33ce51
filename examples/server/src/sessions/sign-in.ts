import type { Request, Response } from 'express';
import {
  type DeviceCookies,
  type LiveSession,
  passwordSignIn,
  type SessionStore,
  type SignInGuard,
  type UserStore,
} from 'express-api-conventions-authorization-server';
import type { UserRepository } from '../users/repository.js';
import { SESSION_COOKIE } from './store.js';

export interface BrowserSignInOptions {
  readonly sessions: SessionStore;
  /** The sign-in accounts: the same store the token endpoint reads. */
  readonly accounts: UserStore;
  /** The sign-in guard the token endpoint uses too: one allowance of failures for every door. */
  readonly guard: SignInGuard;
  /** The signed device cookie: a browser that signed an account in before keeps signing in while others guess. */
  readonly devices: DeviceCookies;
  /** bcrypt cost of the accounts' hashes: an unknown username is checked against a dummy hash of this cost. */
  readonly passwordCost: number;
  readonly users: UserRepository;
}

/** Checks a password and opens a session with its cookie; undefined for a wrong username or password. */
export type BrowserSignIn = (req: Request, res: Response, username: string, password: string) => Promise<LiveSession | undefined>;

// docs/conventions.md rule 11.14: cookies are Secure and HttpOnly (secureCookies() adds both to
// every cookie). Lax, not Strict: a signed-in user who follows a client's link to the authorization
// endpoint from another site arrives with their session; every state-changing request still needs
// its CSRF token (docs/oauth2-choices.md, "The session cookie: SameSite=Lax").
export const SESSION_COOKIE_OPTIONS = { path: '/', sameSite: 'lax' } as const;

/**
 * The browser door, shared by `POST /v1/sessions` (JSON) and the sign-in page
 * (HTML): the shared guard counts the attempt before the password is checked,
 * an unknown user costs a dummy comparison, and each sign-in opens its own
 * session (the user's other devices stay signed in).
 */
export function browserSignIn(options: BrowserSignInOptions): BrowserSignIn {
  const { sessions, accounts, guard, devices, passwordCost, users } = options;
  const checkPassword = passwordSignIn({ users: accounts, signInGuard: guard, passwordCost });
  return async function signInBrowser(req, res, username, password) {
    // While the username or address is throttled, even the right password gets 429
    // (unless this browser's device cookie signed this account in before).
    const device = devices.deviceOf(req);
    const account = await checkPassword(req, username, password, { device: device.device });
    // One answer for an unknown user, a wrong password and a deleted user: no user enumeration.
    if (!account || !(await users.get(BigInt(account.subject)))) return undefined;
    const { cookie, session } = await sessions.create(account.subject, { request: req });
    res.cookie(SESSION_COOKIE, cookie, { ...SESSION_COOKIE_OPTIONS, maxAge: sessions.ttlSeconds * 1000 });
    devices.remember(res, device);
    return session;
  };
}
