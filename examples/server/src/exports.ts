import { randomUUID } from 'node:crypto';
import { type Response, Router } from 'express';
import { apiError } from 'express-api-conventions';
import { requireScope } from 'express-api-conventions/oauth2';
import type { SharedState } from './state.js';
import { type StoredUser, storedUser, type UserRepository, userFrom } from './users/repository.js';
import { representUser } from './users/routes.js';

export interface ExportsRouterOptions {
  readonly state: SharedState;
  readonly users: UserRepository;
  /** Seconds an export takes to prepare. */
  readonly delaySeconds: number;
  /** Seconds an export is kept once asked for. Default: KEPT_SECONDS. */
  readonly keptSeconds?: number;
  /** Exports being prepared or kept at once, for the whole service. Default: EXPORT_LIMIT. */
  readonly limit?: number;
  /** Exports being prepared or kept at once for one caller (a user), under `limit`. Default: EXPORT_CALLER_LIMIT. */
  readonly callerLimit?: number;
  /** Users one export holds at most; with more, POST /v1/exports answers 503. Default: EXPORT_MAX_USERS. */
  readonly maxUsers?: number;
}

interface StoredExport {
  readonly id: string;
  readonly owner: string;
  readonly createdAt: string;
  readonly readyAt: number;
  readonly users: StoredUser[];
}

/** An export is kept for an hour, then forgotten: time enough to download it. */
export const KEPT_SECONDS = 60 * 60;
/** Exports being prepared or kept at once, at most: each holds a snapshot of every user. */
export const EXPORT_LIMIT = 1000;
/** Exports one caller may have prepared or kept at once: no caller can take the whole service's room. */
export const EXPORT_CALLER_LIMIT = 10;
/** Users one export holds at most (docs/openapi.yaml `Export.users`): with more, POST /v1/exports answers 503. */
export const EXPORT_MAX_USERS = 10_000;

// Three key spaces that client input cannot reach across: an export's record
// is `exports:record:<uuid>` (only ever a UUID, checked before any lookup);
// the bounds are `exports:bound:…`, which no record key can spell.
const SERVICE_BOUND = 'exports:bound:service';
const callerBound = (subject: string): string => `exports:bound:caller:${subject}`;
const recordKey = (id: string): string => `exports:record:${id}`;
const EXPORT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whole seconds until `readyAt`, at least 1: a client that waits that long finds it ready. */
const retryAfter = (readyAt: number): string => String(Math.max(1, Math.ceil((readyAt - Date.now()) / 1000)));

/**
 * A download of all users, prepared asynchronously. docs/conventions.md
 * rule 6.6: a 202 means accepted, not finished, and a download being
 * prepared also carries Retry-After.
 */
export function exportsRouter(options: ExportsRouterOptions): Router {
  const {
    state,
    users,
    delaySeconds,
    keptSeconds = KEPT_SECONDS,
    limit = EXPORT_LIMIT,
    callerLimit = EXPORT_CALLER_LIMIT,
    maxUsers = EXPORT_MAX_USERS,
  } = options;
  const router = Router();
  // A bearer token with the `exports` scope, or a browser session.
  const mayExport = requireScope('exports');

  router.post('/v1/exports', mayExport, async (req, res) => {
    // The snapshot is bounded as docs/openapi.yaml says (`Export.users`, `maxItems`): past it, the
    // service cannot prepare one download of every user, whoever asks.
    const everyone = await users.all();
    if (everyone.length > maxUsers) {
      throw apiError('serviceUnavailable', {
        message: `An export holds at most ${maxUsers} users; this service has more.`,
        headers: { 'Retry-After': String(keptSeconds) },
      });
    }
    const now = Date.now();
    const id = randomUUID();
    const owner = req.auth?.subject ?? '';
    await admitExport(state, res, { owner, id, expiresAt: now + keptSeconds * 1000, callerLimit, limit });
    const stored: StoredExport = {
      id,
      owner,
      createdAt: new Date(now).toISOString(),
      readyAt: now + delaySeconds * 1000,
      // The snapshot is taken now; it is handed out once the delay has passed.
      users: everyone.map(storedUser),
    };
    await state.set(recordKey(stored.id), JSON.stringify(stored), keptSeconds);
    res
      .status(202)
      .location(`/v1/exports/${stored.id}`)
      .setHeader('Retry-After', retryAfter(stored.readyAt))
      .json({ id: stored.id, createdAt: stored.createdAt, ready: false });
  });

  router.get('/v1/exports/:id', mayExport, async (req, res) => {
    const id = String(req.params.id);
    // Only an id this router made can name a record: anything else is missing, without a lookup.
    const text = EXPORT_ID.test(id) ? await state.get(recordKey(id)) : undefined;
    const stored = text === undefined ? undefined : (JSON.parse(text) as StoredExport);
    // Another user's export is as missing as one that never was.
    if (!stored || stored.owner !== req.auth?.subject) {
      throw apiError('resourceNotFound', { message: 'No export has this id.' });
    }
    if (Date.now() < stored.readyAt) {
      res
        .status(202)
        .setHeader('Retry-After', retryAfter(stored.readyAt))
        .json({ id: stored.id, createdAt: stored.createdAt, ready: false });
      return;
    }
    res.json({ id: stored.id, createdAt: stored.createdAt, users: stored.users.map((user) => representUser(userFrom(user))) });
  });

  return router;
}

/**
 * Admits one more export for its owner within the caller's bound and the
 * service's, or throws the caller's 429 or the service's 503.
 */
async function admitExport(
  state: ExportsRouterOptions['state'],
  res: Response,
  bounds: { owner: string; id: string; expiresAt: number; callerLimit: number; limit: number },
): Promise<void> {
  const { owner, id, expiresAt, callerLimit, limit } = bounds;
  // Each export holds a snapshot of all users: past the limit, memory (or Redis)
  // would grow with every request. The caller's own bound is checked with the
  // service's, in one step: one caller cannot take the whole service's room.
  const refusal = await state.admitAll(
    [
      { key: callerBound(owner), limit: callerLimit },
      { key: SERVICE_BOUND, limit },
    ],
    id,
    expiresAt,
  );
  if (refusal?.refusedBy === 0) {
    // The caller's own excess: 429 with Retry-After. Its instant is not the
    // rate limiter's: errorHandler() leaves the RateLimit state off this
    // answer (docs/conventions.md rule 12.4), and the policy goes with it here.
    res.removeHeader('RateLimit-Policy');
    throw apiError('tooManyRequests', {
      message: 'You have too many exports being prepared or kept; retry after the time in Retry-After.',
      headers: { 'Retry-After': retryAfter(refusal.freeAt) },
    });
  }
  if (refusal !== undefined) {
    // Full is the service's own capacity, not the caller's rate: 503 with Retry-After.
    throw apiError('serviceUnavailable', {
      message: 'Too many exports are being prepared or kept; retry after the time in Retry-After.',
      headers: { 'Retry-After': retryAfter(refusal.freeAt) },
    });
  }
}
