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

declare module 'express-serve-static-core' {
  interface Request {
    /** The live browser session named by the request's cookie, once looked up. */
    session?: { readonly id: string; readonly data: Session } | null;
  }
}

/** Browser sessions, in the shared state, so any instance knows every session. */
export class SessionStore {
  constructor(private readonly state: SharedState) {}

  async create(subject: string): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    const session: Session = { subject, createdAt: new Date().toISOString() };
    await this.state.set(keyOf(id), JSON.stringify(session), SESSION_TTL_SECONDS);
    return id;
  }

  async find(id: string): Promise<Session | undefined> {
    const text = await this.state.get(keyOf(id));
    return text === undefined ? undefined : (JSON.parse(text) as Session);
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
