import { createHash, randomBytes } from 'node:crypto';
import type { Request } from 'express';
import { cookieValue } from 'express-api-conventions';
import type { SharedState } from '../state.js';

/** A signed-in browser. */
export interface Session {
  /** The user's id, as a token's `sub`. */
  readonly subject: string;
  readonly createdAt: string;
}

/** The session cookie. `__Host-` makes the browser insist on Secure, Path=/ and no Domain. */
export const SESSION_COOKIE = '__Host-session';
/** Eight hours: a working day. */
export const SESSION_TTL_SECONDS = 8 * 60 * 60;

// The state holds a digest of each session id, never the id itself: a copy
// of the store (a Redis dump) signs nobody in.
const keyOf = (id: string): string => `sessions:${createHash('sha256').update(id).digest('base64url')}`;
// Each user's one live session, named by its key: a new sign-in ends the
// earlier sessions (docs/security.md, "Sessions"). A session whose key is
// not its user's current one is over, so parallel sign-ins leave exactly one.
const currentOf = (subject: string): string => `sessions-current:${subject}`;

declare module 'express-serve-static-core' {
  interface Request {
    /** The live browser session named by the request's cookie, once looked up. */
    session?: { readonly id: string; readonly data: Session } | null;
  }
}

/**
 * Browser sessions, in the shared state, so any instance knows every
 * session. One live session per user: signing in again ends the earlier
 * one, on every instance (a cookie left on a shared computer, or stolen,
 * stops working when its owner signs in anew).
 */
export class SessionStore {
  constructor(private readonly state: SharedState) {}

  async create(subject: string): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    const key = keyOf(id);
    const session: Session = { subject, createdAt: new Date().toISOString() };
    const earlier = await this.state.get(currentOf(subject));
    await this.state.set(key, JSON.stringify(session), SESSION_TTL_SECONDS);
    await this.state.set(currentOf(subject), key, SESSION_TTL_SECONDS);
    // The earlier session is already over (its key is no longer current); its record goes now, not at its expiry.
    if (earlier !== undefined) await this.state.delete(earlier);
    return id;
  }

  async find(id: string): Promise<Session | undefined> {
    const key = keyOf(id);
    const text = await this.state.get(key);
    if (text === undefined) return undefined;
    const session = JSON.parse(text) as Session;
    return (await this.state.get(currentOf(session.subject))) === key ? session : undefined;
  }

  async destroy(id: string): Promise<void> {
    await this.state.delete(keyOf(id));
  }

  /**
   * The live session of the request's cookie, looked up once per request
   * (the CSRF check and the authentication both ask). Signing in is never
   * authenticated by an old cookie.
   */
  async of(req: Request): Promise<{ readonly id: string; readonly data: Session } | undefined> {
    if (req.session !== undefined) return req.session ?? undefined;
    const signingIn = req.method === 'POST' && req.path === '/v1/sessions';
    const id = signingIn ? undefined : cookieValue(req, SESSION_COOKIE);
    const data = id ? await this.find(id) : undefined;
    req.session = id && data ? { id, data } : null;
    return req.session ?? undefined;
  }
}
