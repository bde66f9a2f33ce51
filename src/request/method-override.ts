import type { Request, RequestHandler } from 'express';
import { invalidOption, readOptions } from '../config/options.js';
import { apiError } from '../errors/api-error.js';
import { refuse as refuseRequest } from '../errors/refuse.js';

/** Options of methodOverride(). */
export interface MethodOverrideOptions {
  /** Methods a POST may be turned into. Default: `['PUT', 'PATCH', 'DELETE']`. */
  methods?: readonly string[];
}

/** The conventions' "Methods": the header a client sends when it can only send GET or POST. */
export const METHOD_OVERRIDE_HEADER = 'x-http-method-override';
/** The conventions' "Methods": the form parameter of an `application/x-www-form-urlencoded` body. */
export const METHOD_OVERRIDE_FIELD = '_method';

const DEFAULT_METHODS = ['PUT', 'PATCH', 'DELETE'] as const;
const TOKEN = /^[A-Z]+$/;

declare module 'express-serve-static-core' {
  interface Request {
    /** The method the client sent, when methodOverride() changed `req.method`. */
    originalMethod?: string;
  }
}

const formOverride = (req: Request): unknown => {
  const body = req.body as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object' || !req.is('application/x-www-form-urlencoded')) return undefined;
  if (!Object.hasOwn(body, METHOD_OVERRIDE_FIELD)) return undefined;
  const value = body[METHOD_OVERRIDE_FIELD];
  delete body[METHOD_OVERRIDE_FIELD];
  return value;
};

const OVERRIDE_CONVENTION = { rule: '4.7', middleware: 'methodOverride' } as const;

/**
 * Routes a POST as the method named in `X-HTTP-Method-Override` or in the
 * `_method` field of a form body (the conventions' "Methods"). Only from POST, only to
 * the configured methods; anything else is refused with 400. `_method` in a
 * JSON body is not honoured.
 *
 * Order: after parseBodies() (the form field must be parsed), before the
 * routes and before anything that decides by method (CSRF, caching).
 */
export function methodOverride(options?: Readonly<MethodOverrideOptions>): RequestHandler {
  const given = readOptions<MethodOverrideOptions>('methodOverride', options, ['methods']);
  const methods = given.methods ?? DEFAULT_METHODS;
  if (!Array.isArray(methods) || methods.some((m) => typeof m !== 'string' || !TOKEN.test(m))) {
    invalidOption('methodOverride', 'methods', methods, "an array of upper-case method names such as ['PUT', 'PATCH', 'DELETE']");
  }
  const allowed = new Set<string>(methods);
  const allowedList = [...allowed].join(', ');

  return function methodOverrideMiddleware(req, res, next) {
    const header = req.headers[METHOD_OVERRIDE_HEADER];
    const field = formOverride(req);
    if (header === undefined && field === undefined) {
      next();
      return;
    }
    const refuse = (why: string): void =>
      refuseRequest(
        req,
        res,
        next,
        apiError('methodOverrideRefused', {
          message: `The method override is not allowed: ${why} Send the method itself, or POST with X-HTTP-Method-Override (methodOverride({ methods }) lists the ones allowed).`,
        }),
        OVERRIDE_CONVENTION,
      );
    if (req.method !== 'POST') return refuse(`only a POST can be overridden, this request is a ${req.method}.`);
    if (typeof header !== 'undefined' && typeof header !== 'string') return refuse('the header is sent more than once.');
    if (field !== undefined && typeof field !== 'string') return refuse('the _method field is sent more than once.');
    const wanted = (header ?? (field as string | undefined) ?? '').trim().toUpperCase();
    if (header !== undefined && field !== undefined && wanted !== (field as string).trim().toUpperCase()) {
      return refuse('the header and the _method field name different methods.');
    }
    if (!allowed.has(wanted)) return refuse(`${JSON.stringify(wanted)} is not one of ${allowedList}.`);
    req.originalMethod = req.method;
    req.method = wanted;
    next();
  };
}
