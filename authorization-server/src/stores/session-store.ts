import { randomBytes } from 'node:crypto';
import type { Request } from 'express';
import type { SecurityEventReason } from 'express-api-conventions';
import {
  checkBoolean,
  checkInteger,
  invalidOption,
  publishSecurityEvent,
  readOptions,
  securityEventsWanted,
} from 'express-api-conventions/extend';
import { describeDevice } from './session-device.js';
import { hashRefreshToken } from './stores.js';

/**
 * Browser sessions a user can see and end (OWASP ASVS 4.0.3 V3.3.4): each
 * sign-in opens its own session, named by two values. The cookie value is
 * the secret the browser holds; the store keeps only its digest, so a copy
 * of the store signs nobody in. The session id is public: the user's list
 * of sessions and ending one name it, and so do the security events.
 */

/** One session as its user sees it in their list. */
export interface SessionSummary {
  /** The public id: lists it and ends it; never signs anyone in. */
  readonly id: string;
  /** RFC 3339 UTC. */
  readonly createdAt: string;
  /** RFC 3339 UTC; moves at most once a minute. */
  readonly lastSeenAt: string;
  /** A short description from the User-Agent ("Firefox on Linux"), never the header itself. */
  readonly device: string;
}

/** A live session, as a request's cookie finds it. */
export interface LiveSession extends SessionSummary {
  /** Its user (a token's `sub`). */
  readonly subject: string;
  /** RFC 3339 UTC: the session ends then, however active. */
  readonly expiresAt: string;
}

/** A session just opened: the cookie value to set, once, and the session. */
export interface NewSession {
  /** The secret cookie value; the store does not keep it. */
  readonly cookie: string;
  readonly session: LiveSession;
}

/** What a call may be given so that its security events carry the request's method, route and address. */
export interface SessionCallOptions {
  readonly request?: Request;
}

export interface SessionCreateOptions extends SessionCallOptions {
  /** The device's description; default: describeDevice() of the request's User-Agent. Cut to 64 characters. */
  readonly device?: string;
}

/**
 * Where sessions live: MemorySessionStore for one instance,
 * RedisSessionStore for several. Every method publishes its security
 * events (`session_created`, `session_expired`, `session_use_after_expire`).
 */
export interface SessionStore {
  /** A session's lifetime, seconds: the session cookie's `Max-Age`. */
  readonly ttlSeconds: number;
  /** Opens a session for `subject`; with `oneSessionPerUser`, ends the user's others in the same step. */
  create(subject: string, options?: SessionCreateOptions): Promise<NewSession>;
  /** The live session of a cookie value, or undefined (unknown, ended or expired). */
  find(cookie: string, options?: SessionCallOptions): Promise<LiveSession | undefined>;
  /** The user's live sessions, oldest first. */
  list(subject: string): Promise<SessionSummary[]>;
  /** Ends one session of `subject`; false when `id` is unknown, over, or another user's. */
  end(subject: string, id: string, options?: SessionCallOptions): Promise<boolean>;
  /** Ends every live session of `subject` but `currentId`; tells how many it ended. */
  endOthers(subject: string, currentId: string, options?: SessionCallOptions): Promise<number>;
  /** Sign-out: ends the cookie's session; false when it was not live. */
  endByCookie(cookie: string, options?: SessionCallOptions): Promise<boolean>;
}

export interface SessionStoreOptions {
  /** A session's lifetime from its sign-in, seconds (60 to 2,592,000, 30 days). Default: 28800 (8 hours). */
  ttlSeconds?: number;
  /**
   * `true`: a sign-in ends the user's other sessions, in the same atomic
   * step (of parallel sign-ins exactly one stays live). Default: `false`,
   * each device keeps its own session.
   */
  oneSessionPerUser?: boolean;
  /**
   * The most live sessions one user keeps (1 to 10,000): a sign-in beyond it
   * ends the user's least recently used session in the same step, so the
   * store and the list stay bounded. Default: 100.
   */
  maxSessionsPerUser?: number;
}

/** The options every session store reads. */
export const SESSION_STORE_OPTIONS = ['ttlSeconds', 'oneSessionPerUser', 'maxSessionsPerUser'] as const;
export const DEFAULT_SESSION_TTL_SECONDS = 8 * 60 * 60;
/** lastSeenAt moves at most this often: a busy browser does not write on every request. */
export const LAST_SEEN_INTERVAL_MS = 60_000;
const MAX_DEVICE = 64;

/** The rules both stores follow, read once from their options. */
export interface SessionRules {
  readonly ttlMs: number;
  /** The most live sessions a user keeps: 1 with `oneSessionPerUser`, else `maxSessionsPerUser`. */
  readonly mostLive: number;
  /**
   * How long an ended or expired session is remembered after it ends at the
   * latest: a full lifetime more, so that its cookie, presented again, is
   * told apart from a made-up one (`session_use_after_expire`).
   */
  readonly keepMs: number;
}

export function readSessionRules(factory: string, given: Partial<SessionStoreOptions>): SessionRules {
  const ttlSeconds = checkInteger(factory, 'ttlSeconds', given.ttlSeconds ?? DEFAULT_SESSION_TTL_SECONDS, {
    min: 60,
    max: 30 * 86_400,
  });
  const oneSessionPerUser = checkBoolean(factory, 'oneSessionPerUser', given.oneSessionPerUser ?? false);
  const maxSessionsPerUser = checkInteger(factory, 'maxSessionsPerUser', given.maxSessionsPerUser ?? 100, {
    min: 1,
    max: 10_000,
  });
  if (oneSessionPerUser && given.maxSessionsPerUser !== undefined && maxSessionsPerUser !== 1) {
    invalidOption(factory, 'maxSessionsPerUser', maxSessionsPerUser, '1 or left out when oneSessionPerUser is true');
  }
  const mostLive = oneSessionPerUser ? 1 : maxSessionsPerUser;
  return { ttlMs: ttlSeconds * 1000, mostLive, keepMs: 2 * ttlSeconds * 1000 };
}

/** A session as both stores hold it: times in milliseconds. */
export interface SessionRecord {
  readonly subject: string;
  readonly id: string;
  readonly createdAt: number;
  lastSeenAt: number;
  readonly expiresAt: number;
  readonly device: string;
  ended: boolean;
}

/** The digest a store keeps in place of the cookie value. */
// A session cookie is stored as a refresh token is: its SHA-256, one stored form for every random secret.
export const cookieDigest = (cookie: string): string => hashRefreshToken(cookie);

/** A new session's cookie value (256 random bits), public id (128) and record. */
export function openSession(
  subject: string,
  options: SessionCreateOptions,
  rules: SessionRules,
): { cookie: string; record: SessionRecord } {
  const now = Date.now();
  const device = (options.device ?? describeDevice(options.request?.headers['user-agent'])).slice(0, MAX_DEVICE);
  const record: SessionRecord = {
    subject,
    id: randomBytes(16).toString('base64url'),
    createdAt: now,
    lastSeenAt: now,
    expiresAt: now + rules.ttlMs,
    device,
    ended: false,
  };
  return { cookie: randomBytes(32).toString('base64url'), record };
}

export const isLive = (record: SessionRecord, now: number): boolean => !record.ended && record.expiresAt > now;

/**
 * The sessions that are over (ended or expired) a store keeps per user, the
 * most recently over: enough for a stale tab's or a stolen cookie's
 * `session_use_after_expire`, few enough that every step on a user's
 * sessions stays O(`maxSessionsPerUser`). The others leave the store in the
 * step that ends them.
 */
export const KEPT_OVER_SESSIONS = 10;

/** When a session that is over ended: when it was ended (an ended record's lastSeenAt), else when it expired. */
export const overSince = (record: SessionRecord): number => (record.ended ? record.lastSeenAt : record.expiresAt);

const iso = (ms: number): string => new Date(ms).toISOString();

export const summaryOf = (record: SessionRecord): SessionSummary => ({
  id: record.id,
  createdAt: iso(record.createdAt),
  lastSeenAt: iso(record.lastSeenAt),
  device: record.device,
});

export const liveSessionOf = (record: SessionRecord): LiveSession => ({
  ...summaryOf(record),
  subject: record.subject,
  expiresAt: iso(record.expiresAt),
});

/** Ends a session now: its lastSeenAt becomes when it ended (overSince()). */
function endRecord(record: SessionRecord, now: number): void {
  record.ended = true;
  record.lastSeenAt = now;
}

/** Why a session ended, as its `session_expired` event says. */
export type SessionEnding = 'signed out' | 'ended by its user' | 'ended by a new sign-in';

/** Each ending's `reason`: OWASP's `logout` and `revoked`, and `replaced` by a new sign-in. */
const ENDING_REASONS = {
  'signed out': 'logout',
  'ended by its user': 'revoked',
  'ended by a new sign-in': 'replaced',
} as const satisfies Record<SessionEnding, SecurityEventReason>;

/**
 * The sessions' security events: the subject and the public id, never the
 * cookie. A cookie of a session that is over is OWASP's
 * `session_use_after_expire` (CRITICAL): a stale browser tab, or a stolen
 * cookie tried after its owner ended the session. It is the request's one
 * event: the route's own refusal of it (`unauthenticated`) publishes nothing more.
 */
export const sessionEvents = {
  created(record: SessionRecord, options: SessionCallOptions): void {
    if (!securityEventsWanted()) return;
    publishSecurityEvent(options.request, {
      event: 'session_created',
      description: `A session was opened on ${record.device}.`,
      outcome: 'success',
      subject: record.subject,
      sessionId: record.id,
    });
  },
  ended(subject: string, id: string, why: SessionEnding, options: SessionCallOptions): void {
    if (!securityEventsWanted()) return;
    publishSecurityEvent(options.request, {
      event: 'session_expired',
      reason: ENDING_REASONS[why],
      description: `A session was ${why}.`,
      outcome: 'success',
      subject,
      sessionId: id,
    });
  },
  usedAfterEnd(subject: string, id: string, options: SessionCallOptions): void {
    if (!securityEventsWanted()) return;
    publishSecurityEvent(options.request, {
      event: 'session_use_after_expire',
      description: 'The cookie of a session that has ended or expired was presented.',
      outcome: 'failure',
      rule: 'unauthenticated',
      subject,
      sessionId: id,
    });
  },
};

/**
 * Sessions in this process: for one instance, and for tests. Every change is
 * synchronous (no `await` between a read and its write), so it is atomic.
 * Records are kept in the order they were opened, which is the order they
 * are forgotten in (all live as long), so each call forgets those past
 * their keeping at no search.
 */
export class MemorySessionStore implements SessionStore {
  readonly ttlSeconds: number;
  readonly #rules: SessionRules;
  /** Cookie digest → record, oldest first. */
  readonly #byCookie = new Map<string, SessionRecord>();
  /** Subject → public id → record. */
  readonly #bySubject = new Map<string, Map<string, SessionRecord>>();
  /** Record → its cookie digest, to forget both ways at once. */
  readonly #digests = new WeakMap<SessionRecord, string>();

  constructor(options: Readonly<SessionStoreOptions> = {}) {
    const given = readOptions<SessionStoreOptions>('MemorySessionStore', options, [...SESSION_STORE_OPTIONS]);
    this.#rules = readSessionRules('MemorySessionStore', given);
    this.ttlSeconds = this.#rules.ttlMs / 1000;
  }

  async create(subject: string, options: SessionCreateOptions = {}): Promise<NewSession> {
    this.#forget(Date.now());
    const { cookie, record } = openSession(subject, options, this.#rules);
    const mine = this.#bySubject.get(subject) ?? new Map<string, SessionRecord>();
    const replaced = this.#makeRoom(mine, record.createdAt);
    mine.set(record.id, record);
    this.#bySubject.set(subject, mine);
    this.#byCookie.set(cookieDigest(cookie), record);
    this.#digests.set(record, cookieDigest(cookie));
    this.#dropOver(subject, record.createdAt);
    for (const id of replaced) sessionEvents.ended(subject, id, 'ended by a new sign-in', options);
    sessionEvents.created(record, options);
    return { cookie, session: liveSessionOf(record) };
  }

  async find(cookie: string, options: SessionCallOptions = {}): Promise<LiveSession | undefined> {
    const now = Date.now();
    this.#forget(now);
    const record = this.#byCookie.get(cookieDigest(cookie));
    if (!record) return undefined;
    if (!isLive(record, now)) {
      sessionEvents.usedAfterEnd(record.subject, record.id, options);
      return undefined;
    }
    if (now - record.lastSeenAt >= LAST_SEEN_INTERVAL_MS) record.lastSeenAt = now;
    return liveSessionOf(record);
  }

  async list(subject: string): Promise<SessionSummary[]> {
    const now = Date.now();
    this.#forget(now);
    return [...(this.#bySubject.get(subject)?.values() ?? [])].filter((record) => isLive(record, now)).map(summaryOf);
  }

  async end(subject: string, id: string, options: SessionCallOptions = {}): Promise<boolean> {
    const now = Date.now();
    const record = this.#bySubject.get(subject)?.get(id);
    if (!record || !isLive(record, now)) return false;
    endRecord(record, now);
    this.#dropOver(subject, now);
    sessionEvents.ended(subject, id, 'ended by its user', options);
    return true;
  }

  async endOthers(subject: string, currentId: string, options: SessionCallOptions = {}): Promise<number> {
    const now = Date.now();
    const others = [...(this.#bySubject.get(subject)?.values() ?? [])].filter(
      (record) => record.id !== currentId && isLive(record, now),
    );
    for (const record of others) endRecord(record, now);
    this.#dropOver(subject, now);
    for (const record of others) sessionEvents.ended(subject, record.id, 'ended by its user', options);
    return others.length;
  }

  async endByCookie(cookie: string, options: SessionCallOptions = {}): Promise<boolean> {
    const now = Date.now();
    const record = this.#byCookie.get(cookieDigest(cookie));
    if (!record || !isLive(record, now)) return false;
    endRecord(record, now);
    this.#dropOver(record.subject, now);
    sessionEvents.ended(record.subject, record.id, 'signed out', options);
    return true;
  }

  /** Ends the least recently used live sessions until one more fits (all of them with oneSessionPerUser); the ids it ended. */
  #makeRoom(records: Map<string, SessionRecord>, now: number): string[] {
    const live = [...records.values()].filter((record) => isLive(record, now)).sort((a, b) => a.lastSeenAt - b.lastSeenAt);
    const over = live.slice(0, Math.max(0, live.length - this.#rules.mostLive + 1));
    for (const record of over) endRecord(record, now);
    return over.map((record) => record.id);
  }

  /** Forgets the user's sessions that are over beyond the KEPT_OVER_SESSIONS most recent. */
  #dropOver(subject: string, now: number): void {
    const mine = this.#bySubject.get(subject);
    if (!mine) return;
    const over = [...mine.values()].filter((record) => !isLive(record, now)).sort((a, b) => overSince(b) - overSince(a));
    for (const record of over.slice(KEPT_OVER_SESSIONS)) {
      mine.delete(record.id);
      this.#byCookie.delete(this.#digests.get(record) as string);
    }
  }

  /** How many sessions (live or kept over) and cookies this store holds: for tests and metrics. */
  size(): { sessions: number; cookies: number } {
    let sessions = 0;
    for (const mine of this.#bySubject.values()) sessions += mine.size;
    return { sessions, cookies: this.#byCookie.size };
  }

  /** Drops the records past their keeping, oldest first. */
  #forget(now: number): void {
    for (const [digest, record] of this.#byCookie) {
      if (record.createdAt + this.#rules.keepMs > now) return;
      this.#byCookie.delete(digest);
      const mine = this.#bySubject.get(record.subject);
      mine?.delete(record.id);
      if (mine?.size === 0) this.#bySubject.delete(record.subject);
    }
  }
}
