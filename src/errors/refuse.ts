import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { isProductionEnvironment } from '../config/options.js';
import { securityEventsWanted } from '../events/index.js';
import { routerStackOf } from '../http/router-stack.js';
import { reportInstead } from './adoption.js';
import { isLibraryErrorHandler, renderError } from './error-handler.js';
import { noteSecurityEvent, publishRefusal, takeSecurityNote } from './refusal-events.js';
import { toApiError } from './to-api-error.js';

type AppLike = { readonly parent?: unknown };

/**
 * Whether an error passed to `next()` reaches an errorHandler() of the app or
 * of an app it is mounted in, which renders it with its options. When none,
 * another layer would answer it: Express's final handler in HTML, NestJS's
 * exception layer or a team's handler that ignores `err.status` with a 500.
 * A team's own error middleware before errorHandler() still sees it
 * (docs/errors.md#your-own-error-middleware). Read on a refusal only, never
 * on a request that passes.
 */
export function reachesErrorHandler(req: Request): boolean {
  const seen = new Set<unknown>();
  for (let app: unknown = req.app; app && !seen.has(app); app = (app as AppLike).parent) {
    seen.add(app);
    if ((routerStackOf(app) ?? []).some((layer) => isLibraryErrorHandler(layer.handle))) return true;
  }
  return false;
}

/** The rule a refusal enforces (docs/conventions.md) and the middleware that enforces it. */
export interface BrokenConvention {
  readonly rule: string;
  readonly middleware: string;
  /** What to change so that enforcing lets such a request through, when the middleware knows it. */
  readonly fix?: string;
}

/** What enforcing would have answered, as a report-only report says it: `answered 403 (code 40302)`. */
export const enforcedAnswer = (answer: { readonly status: number; readonly code: number }): string =>
  `answered ${answer.status} (code ${answer.code})`;

/**
 * In report-only mode, reports what the refusal would have been and returns
 * true (the request then goes on as if it had passed).
 */
function reportRefusal(req: Request, res: Response, error: unknown, convention: BrokenConvention): boolean {
  const answer = toApiError(error);
  const enforced = enforcedAnswer(answer);
  const reported = reportInstead(req, res, {
    ...convention,
    enforced,
    message: answer.message,
    status: answer.status,
    code: answer.code,
  });
  // Published too, as a decision that let the request through: what enforcing would refuse shows before it is enforced.
  if (reported && securityEventsWanted()) publishRefusal(req, answer, enforced);
  return reported;
}

/**
 * How a middleware of the library refuses a request (docs/design.md principle 4: every
 * middleware answers its own refusals, so it works alone): the error goes to
 * `next()` when errorHandler() will render it (with its options: one look
 * for every error), else it is rendered here, never left to a layer that
 * would make a 500 of it, in
 * the same JSON shape through the same writer, with `detail` outside
 * production, rather than left to Express's HTML page. A refusal that
 * enforces a convention names it: in report-only mode (reportOnly()) it is
 * then reported, and the request goes on.
 */
export function refuse(req: Request, res: Response, next: NextFunction, error: unknown, convention?: BrokenConvention): void {
  if (convention !== undefined && reportRefusal(req, res, error, convention)) {
    next();
    return;
  }
  if (HOLDING.has(req)) {
    // The first refusal is the one answered, once the request is counted; its event's note waits with it.
    const note = takeSecurityNote(req);
    if (!HELD.has(req)) HELD.set(req, { error, note });
    next();
    return;
  }
  if (securityEventsWanted()) publishRefusal(req, error);
  if (reachesErrorHandler(req)) {
    next(error);
    return;
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  renderError(res, toApiError(error), isProductionEnvironment());
}

// Requests whose refusals are held while a wrapped middleware runs, and the refusal held for each.
const HOLDING = new WeakSet<object>();
const HELD = new WeakMap<object, { readonly error: unknown; readonly note: ReturnType<typeof takeSecurityNote> }>();

/** What a middleware run by holdRefusals() passes on when it held a refusal: the preset skips to its counting stage. */
export const REFUSAL_HELD: unique symbol = Symbol('refusal held');

/**
 * Runs `handler` with its refusals (refuse()) held instead of answered; when
 * one was held, the handler's `next()` becomes `next(REFUSAL_HELD)`.
 * Internal to conventions(), which wraps the stages before its rate limiter
 * with it (a refused preflight, a bad bearer token), skips from there to the
 * limiter, and answers the refusal right after it (answerHeldRefusal()):
 * a refused request is counted against its caller's address like any other,
 * or an attacker could make the service verify tokens without limit. Not
 * exported: mounted anywhere else, nothing would answer what it holds.
 */
export function holdRefusals(handler: RequestHandler): RequestHandler {
  const held = function heldRefusalsMiddleware(req: Request, res: Response, next: NextFunction) {
    HOLDING.add(req);
    const done: NextFunction = (signal?: unknown) => {
      HOLDING.delete(req);
      next(!signal && HELD.has(req) ? REFUSAL_HELD : signal);
    };
    try {
      const result: unknown = handler(req, res, done);
      if (result instanceof Promise) result.then(undefined, (error: unknown) => done(error || new Error('Rejected promise')));
    } catch (error) {
      done(error);
    }
  };
  // Keeps the stage's own name in router dumps and stack traces.
  return Object.defineProperty(held, 'name', { value: handler.name || held.name });
}

/** Answers the refusal holdRefusals() held for this request, if any (it is handed out once); else the request goes on. */
export function answerHeldRefusal(req: Request, res: Response, next: NextFunction): void {
  const held = HELD.get(req);
  if (held === undefined) {
    next();
    return;
  }
  HELD.delete(req);
  if (held.note !== undefined) noteSecurityEvent(req, held.note);
  refuse(req, res, next, held.error);
}
