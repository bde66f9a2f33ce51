import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { apiError, requireScope } from 'express-api-conventions';
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
const EXPORTS_INDEX = 'exports:index';

const keyOf = (id: string): string => `exports:${id}`;

/** Whole seconds until `readyAt`, at least 1: a client that waits that long finds it ready. */
const retryAfter = (readyAt: number): string => String(Math.max(1, Math.ceil((readyAt - Date.now()) / 1000)));

/**
 * A download of all users, prepared asynchronously. SPEC.md "Common response
 * behaviour" rule 6: a 202 is used where "a file download being prepared; the
 * latter carries Retry-After".
 */
export function exportsRouter(options: ExportsRouterOptions): Router {
  const { state, users, delaySeconds, keptSeconds = KEPT_SECONDS, limit = EXPORT_LIMIT } = options;
  const router = Router();
  // A bearer token with the `exports` scope, or a browser session.
  const mayExport = requireScope('exports');

  router.post('/v1/exports', mayExport, async (req, res) => {
    const now = Date.now();
    const id = randomUUID();
    // Each export holds a snapshot of all users: past the limit, memory (or Redis)
    // would grow with every request. Full is the service's own capacity, not the
    // caller's rate: 503 with Retry-After (SPEC.md keeps 429 for the rate limit,
    // whose RateLimit headers must agree with its Retry-After; Limits rule 2).
    const freeAt = await state.admit(EXPORTS_INDEX, id, now + keptSeconds * 1000, limit);
    if (freeAt !== undefined) {
      throw apiError('serviceUnavailable', {
        message: 'Too many exports are being prepared or kept; retry after the time in Retry-After.',
        headers: { 'Retry-After': retryAfter(freeAt) },
      });
    }
    const stored: StoredExport = {
      id,
      owner: req.auth?.subject ?? '',
      createdAt: new Date(now).toISOString(),
      readyAt: now + delaySeconds * 1000,
      // The snapshot is taken now; it is handed out once the delay has passed.
      users: (await users.all()).map(storedUser),
    };
    await state.set(keyOf(stored.id), JSON.stringify(stored), keptSeconds);
    res
      .status(202)
      .location(`/v1/exports/${stored.id}`)
      .setHeader('Retry-After', retryAfter(stored.readyAt))
      .json({ id: stored.id, createdAt: stored.createdAt, ready: false });
  });

  router.get('/v1/exports/:id', mayExport, async (req, res) => {
    const text = await state.get(keyOf(String(req.params.id)));
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
