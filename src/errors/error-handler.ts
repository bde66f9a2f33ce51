import type { ErrorRequestHandler, Request, Response } from 'express';
import { checkBoolean, checkLog, checkString, isProductionEnvironment, readOptions } from '../config/options.js';
import { warnOnce } from '../config/warnings.js';
import { securityEventsWanted } from '../events/index.js';
import { stringifyJson } from '../http/json-output/serialize.js';
import { writeJsonAnswer } from '../http/json-output/writer.js';
import { pathWithoutQuery } from '../http/paths.js';
import { getResponseHeader, removeResponseHeader, setResponseHeader } from '../http/response-headers.js';
import { isErrorLayer, isRootMount, mountOf, type RouterLayer, routerStackOf } from '../http/router-stack.js';
import { CACHE_CONTROL_SENSITIVE } from '../http/spec.js';
import type { ApiError } from './api-error.js';
import { ERROR_CATALOGUE } from './catalogue.js';
import { shapeError } from './error-shape.js';
import { boundedDetail, boundedItem, REFLECTED_INPUT_LIMITS } from './reflected-input.js';
import { publishUnlessPublished } from './refusal-events.js';
import { toApiError } from './to-api-error.js';

/** What the error handler reports to the log hook. */
export interface ErrorLogEntry {
  readonly status: number;
  readonly code: number;
  readonly method: string;
  readonly path: string;
  /** The original error, with its stack: for logs, never for the client. */
  readonly error: unknown;
}

export interface ErrorHandlerOptions {
  /**
   * Less precise error detail, as the conventions' Errors rule 5 allows: no `detail`,
   * and a generic message for unexpected errors. Never a stack trace.
   * Default: whether `NODE_ENV` is `production` when the handler is made.
   */
  production?: boolean;
  /**
   * Called for every 5xx answer, with the original error.
   * Default: one JSON line on stderr. `false` turns logging off.
   */
  log?: ((entry: ErrorLogEntry) => void) | false;
  /**
   * The `WWW-Authenticate` challenge of a 401 that brings none of its own
   * (RFC 9110 §15.5.2: every 401 carries one), for example a failed sign-in
   * form. Default: `'Bearer'`, the scheme of the conventions' tokens.
   */
  challenge?: string;
}

const OPTION_NAMES = ['production', 'log', 'challenge'] as const;

/** The challenge of a 401 that brings none: the conventions' bearer tokens (RFC 6750 §3). */
export const DEFAULT_CHALLENGE = 'Bearer';

// Headers that describe a representation the failed handler may have begun;
// they must not describe the error body.
const REPRESENTATION_HEADERS = [
  'Content-Disposition',
  'Content-Encoding',
  'Content-Language',
  'ETag',
  'Expires',
  'Last-Modified',
];

const logToStderr = (entry: ErrorLogEntry): void => {
  const { error, ...fields } = entry;
  const stack = error instanceof Error ? error.stack : String(error);
  process.stderr.write(`${JSON.stringify({ level: 'error', ...fields, stack })}\n`);
};

/**
 * The JSON body of an error, in the conventions' shape unless the error brings its
 * own. What client input can add to it is bounded (REFLECTED_INPUT_LIMITS):
 * messages, the number of items, and `detail`.
 */
export function errorBody(error: ApiError, production: boolean): Record<string, unknown> {
  if (error.body) return { ...error.body };
  if (production && error.status === 500) {
    // A 500 is a fault of the service; in production its cause stays in the
    // log and the client reads only the generic message (docs/conventions.md rule 14.5).
    return { errors: [{ message: ERROR_CATALOGUE.internal.message, code: error.code }] };
  }
  const max = REFLECTED_INPUT_LIMITS.items;
  const errors: Record<string, unknown>[] = error.items.slice(0, max).map((item) => ({ ...boundedItem(item) }));
  if (error.items.length > max) {
    errors.push({ message: `${error.items.length - max} more problems of the same request are not listed.`, code: error.code });
  }
  if (!production && error.detail !== undefined && errors[0]) errors[0].detail = boundedDetail(error.detail);
  return { errors };
}

// Refusals of the rate limiter (tooManyRequests()), whose Retry-After is the
// instant the RateLimit header names.
const LIMITER_REFUSALS = new WeakSet<ApiError>();

/** Marks a refusal whose `Retry-After` is the rate limiter's own instant (tooManyRequests() does). */
export function markLimiterRefusal(error: ApiError): ApiError {
  LIMITER_REFUSALS.add(error);
  return error;
}

/** Writes an ApiError as the response: status, its headers, JSON body. */
export function renderError(res: Response, raised: ApiError, production: boolean, challenge = DEFAULT_CHALLENGE): void {
  const error = shapeError(res, raised);
  for (const name of REPRESENTATION_HEADERS) removeResponseHeader(res, name);
  // docs/conventions.md rule 12.4: Retry-After and RateLimit point to the same
  // instant. Another wait (a sign-in lock-out, a full queue, maintenance)
  // leaves the limiter's state out; RateLimit-Policy names no instant and stays.
  if (error.headers['Retry-After'] !== undefined && !LIMITER_REFUSALS.has(raised)) removeResponseHeader(res, 'RateLimit');
  // An error is never stored (docs/conventions.md rule 11.8), unless the
  // error itself brings a Cache-Control value.
  setResponseHeader(res, 'Cache-Control', CACHE_CONTROL_SENSITIVE);
  for (const [name, value] of Object.entries(error.headers)) setResponseHeader(res, name, value);
  // RFC 9110 §15.5.2: a 401 always says how to authenticate.
  if (error.status === 401 && getResponseHeader(res, 'WWW-Authenticate') === undefined) {
    setResponseHeader(res, 'WWW-Authenticate', challenge);
  }
  // Through the one JSON writer, as an answer rather than a representation:
  // an error body gets no ETag and no freshness check.
  writeJsonAnswer(res, error.status, stringifyJson(errorBody(error, production)));
}

/**
 * The error middlewares of the app that can never run because `handler`
 * answers every error before them: mounted after it, and at its own mount
 * path or under a handler mounted at the root. (A page handler after
 * `app.use('/api', errorHandler())` still runs for the pages: not listed.)
 */
function errorMiddlewaresAfter(app: unknown, handler: unknown): unknown[] {
  const stack = routerStackOf(app) ?? [];
  const at = stack.findIndex((layer) => layer.handle === handler);
  if (at < 0) return [];
  const own = stack[at] as RouterLayer;
  return stack
    .slice(at + 1)
    .filter(isErrorLayer)
    .filter((layer) => isRootMount(own) || mountOf(layer) === mountOf(own))
    .map((layer) => layer.handle);
}

const nameOf = (handle: unknown): string => (handle as { name?: string }).name || 'an anonymous (err, req, res, next) function';

/**
 * Whether an error middleware is NestJS's exception layer, which `app.init()`
 * mounts after every route (@nestjs/core's RouterProxy.createExceptionLayerProxy()):
 * an anonymous function that hands the error to Nest's exception filters.
 * Read only to say the right warning.
 */
export const isNestExceptionLayer = (handle: unknown): boolean =>
  typeof handle === 'function' && handle.name === '' && /\bExecutionContextHost\b/.test(Function.prototype.toString.call(handle));

/** errorHandler()'s options, read once. */
interface ErrorHandlerConfiguration {
  readonly production: boolean;
  readonly log: ((entry: ErrorLogEntry) => void) | undefined;
  readonly challenge: string;
}

function readErrorHandlerOptions(options: Readonly<ErrorHandlerOptions> | undefined): ErrorHandlerConfiguration {
  const given = readOptions<ErrorHandlerOptions>('errorHandler', options, OPTION_NAMES);
  return {
    production:
      given.production === undefined ? isProductionEnvironment() : checkBoolean('errorHandler', 'production', given.production),
    log: checkLog<(entry: ErrorLogEntry) => void>('errorHandler', given.log, logToStderr),
    challenge: given.challenge === undefined ? DEFAULT_CHALLENGE : checkString('errorHandler', 'challenge', given.challenge),
  };
}

/** Warns when error middleware is mounted after `handler` in `app`, where it can never run. */
function warnOfUnreachableErrorMiddleware(app: unknown, handler: unknown): void {
  const unreachable = errorMiddlewaresAfter(app, handler);
  if (unreachable.length === 0) return;
  // The handler decided with its own `production` option whether to look.
  const always = { evenInProduction: true };
  if (unreachable.some(isNestExceptionLayer)) {
    // Under NestJS the order is Nest's own: its routes and exception layer come in app.init().
    warnOnce(
      handler as object,
      'EAC_NESTJS_EXCEPTION_LAYER',
      "errorHandler() is mounted in a NestJS app, whose exception layer answers its routes' errors after it: " +
        'errorHandler() and notFound() never see them. Remove both and register the exception filter instead: ' +
        "app.useGlobalFilters(new ConventionsExceptionFilter()) from 'express-api-conventions/nestjs' (docs/guides/nestjs.md).",
      always,
    );
    return;
  }
  warnOnce(
    handler as object,
    'EAC_ERROR_HANDLER_NOT_LAST',
    `errorHandler() answers every error, so the error middleware mounted after it never runs: ${unreachable.map(nameOf).join(', ')}. ` +
      'Mount your own error middleware before errorHandler() and end it with next(error), so errors keep one JSON shape ' +
      '(docs/errors.md#your-own-error-middleware).',
    always,
  );
}

/** Hands a server error to the log hook, with what caused it. */
function logServerError(config: ErrorHandlerConfiguration, error: ApiError, thrown: unknown, req: Request): void {
  if (!config.log || error.status < 500) return;
  const original = error === thrown ? (error.cause ?? error) : thrown;
  config.log({ status: error.status, code: error.code, method: req.method, path: pathWithoutQuery(req), error: original });
}

// The error middlewares errorHandler() made: a refusal goes to next() only
// when one of them will render it (refuse()).
const LIBRARY_ERROR_HANDLERS = new WeakSet<object>();

/** Whether `handle` is an error middleware made by errorHandler(). */
export const isLibraryErrorHandler = (handle: unknown): boolean =>
  typeof handle === 'function' && LIBRARY_ERROR_HANDLERS.has(handle);

/**
 * The last middleware of an app: renders every error as JSON with the status
 * that fits (the conventions' "Errors"), whatever raised it: a route, a body parser,
 * the router, a validator, the rate limiter or notFound(). Never HTML, never
 * 200, never a stack trace in production.
 */
export function errorHandler(options?: Readonly<ErrorHandlerOptions>): ErrorRequestHandler {
  const config = readErrorHandlerOptions(options);
  // Outside production, the first error it renders looks at the app once
  // for error middleware mounted after it, which would never run.
  let orderChecked = config.production;
  const middleware: ErrorRequestHandler = function errorHandlerMiddleware(thrown, req, res, _next) {
    if (!orderChecked) {
      orderChecked = true;
      warnOfUnreachableErrorMiddleware(req.app, middleware);
    }
    const error = toApiError(thrown);
    // An error handed here directly (Express's parsers, the app's code) is published here; refuse() published its own.
    if (securityEventsWanted()) publishUnlessPublished(req, thrown);
    logServerError(config, error, thrown, req);
    if (res.headersSent) {
      // Part of a response is already on the wire: no error can be sent any
      // more, and ending it normally would pass the truncated body as whole.
      res.destroy();
      return;
    }
    renderError(res, error, config.production, config.challenge);
  };
  LIBRARY_ERROR_HANDLERS.add(middleware);
  return middleware;
}
