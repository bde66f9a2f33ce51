import { createHash, randomBytes } from 'node:crypto';
import type { SharedState } from '../state.js';

/** A signed-in browser: who it is, and the CSRF token issued with the session. */
export interface Session {
  readonly subject: string;
  readonly csrfToken: string;
  readonly createdAt: string;
}

/** Eight hours: a working day. */
export const SESSION_TTL_SECONDS = 8 * 60 * 60;

// The state holds a digest of each session id, never the id itself: a copy
// of the store (a Redis dump) signs nobody in.
const keyOf = (id: string): string => `sessions:${createHash('sha256').update(id).digest('base64url')}`;

const token = (): string => randomBytes(32).toString('base64url');

/** Browser sessions, in the shared state, so any instance knows every session. */
export class SessionStore {
  constructor(private readonly state: SharedState) {}

  async create(subject: string): Promise<{ id: string; session: Session }> {
    const id = token();
    const session: Session = { subject, csrfToken: token(), createdAt: new Date().toISOString() };
    await this.state.set(keyOf(id), JSON.stringify(session), SESSION_TTL_SECONDS);
    return { id, session };
  }

  async find(id: string): Promise<Session | undefined> {
    const text = await this.state.get(keyOf(id));
    return text === undefined ? undefined : (JSON.parse(text) as Session);
  }

  async destroy(id: string): Promise<void> {
    await this.state.delete(keyOf(id));
  }
}
