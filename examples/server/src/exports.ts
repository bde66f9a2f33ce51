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
}

interface StoredExport {
  readonly id: string;
  readonly owner: string;
  readonly createdAt: string;
  readonly readyAt: number;
  readonly users: StoredUser[];
}

/** An export is kept for a day, then forgotten. */
const KEPT_SECONDS = 24 * 60 * 60;

const keyOf = (id: string): string => `exports:${id}`;

/** Whole seconds until `readyAt`, at least 1: a client that waits that long finds it ready. */
const retryAfter = (readyAt: number): string => String(Math.max(1, Math.ceil((readyAt - Date.now()) / 1000)));

/**
 * A download of all users, prepared asynchronously. SPEC.md "Common response
 * behaviour" rule 6: a 202 is used where "a file download being prepared; the
 * latter carries Retry-After".
 */
export function exportsRouter(options: ExportsRouterOptions): Router {
  const { state, users, delaySeconds } = options;
  const router = Router();
  // A bearer token with the `exports` scope, or a browser session.
  const mayExport = requireScope('exports');

  router.post('/v1/exports', mayExport, async (req, res) => {
    const now = Date.now();
    const stored: StoredExport = {
      id: randomUUID(),
      owner: req.auth?.subject ?? '',
      createdAt: new Date(now).toISOString(),
      readyAt: now + delaySeconds * 1000,
      // The snapshot is taken now; it is handed out once the delay has passed.
      users: (await users.all()).map(storedUser),
    };
    await state.set(keyOf(stored.id), JSON.stringify(stored), KEPT_SECONDS);
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
