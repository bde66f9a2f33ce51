import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import type { ApiError } from 'express-api-conventions/errors';
import { packageError } from '../error-entries.js';

/**
 * A sign-in's deadline, carried from its request's arrival through every
 * step that may wait (the sign-in guard's queue, the stores, the password
 * pool): the conventions answer a sign-in, or refuse it with `Retry-After`,
 * within the deadline (5 s by default) counted from when the request
 * arrived, not from when each step began to wait.
 *
 * Times are performance.now() milliseconds, kept per request in a WeakMap
 * (nothing is added to the request object).
 */

/** Default sign-in deadline: 5 s from the request's arrival. */
export const DEFAULT_SIGN_IN_DEADLINE_MS = 5000;

/** The range of a sign-in deadline option, in milliseconds. */
export const SIGN_IN_DEADLINE_RANGE = { min: 100, max: 60_000 } as const;

const arrivals = new WeakMap<object, number>();
const deadlines = new WeakMap<object, number>();

/** Records `req`'s arrival now, unless an earlier step did. */
export function markArrival(req: object): number {
  const known = arrivals.get(req);
  if (known !== undefined) return known;
  const now = performance.now();
  arrivals.set(req, now);
  return now;
}

/** Middleware: the request's arrival, as early as a router of this library sees it. */
export function arrivalMarker(req: Request, _res: Response, next: NextFunction): void {
  markArrival(req);
  next();
}

/** Sets `req`'s sign-in deadline, `budgetMs` after its arrival (the earliest one set wins); answers it. */
export function setSignInDeadline(req: object, budgetMs: number): number {
  const deadline = markArrival(req) + budgetMs;
  const known = deadlines.get(req);
  if (known !== undefined && known <= deadline) return known;
  deadlines.set(req, deadline);
  return deadline;
}

/** `req`'s sign-in deadline, when one is set. */
export function signInDeadline(req: object): number | undefined {
  return deadlines.get(req);
}

/** Milliseconds left before `deadline` (negative when past). */
export function remainingMs(deadline: number): number {
  return deadline - performance.now();
}

/** The 503 of a sign-in whose deadline has come: busy, retry in a second or two. */
export function deadlineReached(retryAfterSeconds = 1): ApiError {
  return packageError('signInBusy', { headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) } });
}
