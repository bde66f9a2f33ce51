import type { RequestHandler } from 'express';
import { type CachingOptions, caching } from './caching/cache-control.js';
import { isProductionEnvironment, readOptions } from './config/options.js';
import { type CorsPolicyOptions, corsPolicy } from './cors/cors-policy.js';
import { type MaintenanceOptions, maintenance } from './errors/maintenance.js';
import { type CommonHeadersOptions, commonHeaders } from './headers/common-headers.js';
import { type JsonResponsesOptions, jsonResponses } from './json/json-responses.js';
import { type ResponseLinterOptions, responseLinter } from './lint/response-linter.js';
import { type BearerAuthOptions, bearerAuth } from './oauth2/bearer-auth.js';
import { type TokenRouterOptions, tokenRouter } from './oauth2/token-router.js';
import type { RateLimitOptions } from './rate-limit/options.js';
import { rateLimit } from './rate-limit/rate-limit.js';
import { type ParseBodiesOptions, parseBodies } from './request/body-parsers.js';
import { type MethodOverrideOptions, methodOverride } from './request/method-override.js';
import { type SecureCookiesOptions, secureCookies } from './security/cookies.js';
import { type CsrfProtectionOptions, csrfProtection } from './security/csrf.js';
import { type SecurityHeadersOptions, securityHeaders } from './security/security-headers.js';

/**
 * Options of conventions(): one key per module, holding that module's
 * options, or `false` to leave the module out.
 */
export interface ConventionsOptions {
  commonHeaders?: CommonHeadersOptions | false;
  /** SPEC.md's security response headers (helmet). On unless `false`. */
  securityHeaders?: SecurityHeadersOptions | false;
  /** Present (not `false`) turns corsPolicy() on; it needs `origins`. */
  cors?: CorsPolicyOptions | false;
  /** `no-store` by default, strong ETags, 304s. On unless `false`. */
  caching?: CachingOptions | false;
  /** `Secure`, `HttpOnly` and `SameSite` on every cookie. On unless `false`. */
  cookies?: SecureCookiesOptions | false;
  json?: JsonResponsesOptions | false;
  /** Present (not `false`) turns maintenance() on; absent or `false` leaves it out. */
  maintenance?: MaintenanceOptions | false;
  /**
   * Present (not `false`) identifies bearer callers before the rate limiter,
   * so that it counts per user and per application (SPEC.md "Limits" rule 4):
   * bearerAuth() with these options in `optional` mode. A valid token sets
   * `req.auth`; a request without bearer credentials goes on anonymous; a
   * bad bearer token is refused with 401 `invalid_token`. Routes that need
   * a user still mount bearerAuth() or requireScope() themselves.
   */
  authentication?: Omit<BearerAuthOptions, 'optional'> | false;
  /**
   * rateLimit(): per user and per application, memory store by default.
   * It runs before the body parsers, so a limited client's body is never
   * parsed; it counts per user only when `req.auth` is set before it runs.
   */
  rateLimit?: RateLimitOptions | false;
  bodies?: ParseBodiesOptions | false;
  methodOverride?: MethodOverrideOptions | false;
  /** Present (not `false`) turns csrfProtection() on; it needs `tokens` and `sessionOf`. */
  csrf?: CsrfProtectionOptions | false;
  /**
   * The development-time response-shape check. Default: on, with its
   * defaults, unless `NODE_ENV` is `production`; in production it is left
   * out (no cost) unless options are given here.
   */
  responseLinter?: ResponseLinterOptions | false;
  /**
   * Present (not `false`) mounts tokenRouter() with these options: the token
   * endpoint, last, after every cross-cutting module. Absent or `false`
   * leaves it out (it needs keys and a user store, so it has no default).
   */
  tokenEndpoint?: TokenRouterOptions | false;
}

const MODULES = [
  'commonHeaders',
  'securityHeaders',
  'cors',
  'caching',
  'cookies',
  'json',
  'maintenance',
  'authentication',
  'rateLimit',
  'bodies',
  'methodOverride',
  'csrf',
  'responseLinter',
  'tokenEndpoint',
] as const;

/** The preset's one middleware; `modules` lists what it runs, in order (for tests and router dumps). */
export type ConventionsMiddleware = RequestHandler & { readonly modules: readonly RequestHandler[] };

/**
 * Runs middlewares one after the other as one middleware, the way Express's
 * router runs its layers: a thrown error or a rejected promise goes to
 * `next`, and so does an error or `'router'` passed to the inner `next`;
 * `'route'` goes on to the next module, as it goes on to the next layer.
 * One router layer instead of one per module: each layer costs its path
 * match and dispatch on every request (docs/performance.md).
 */
function runInOrder(stack: readonly RequestHandler[]): ConventionsMiddleware {
  const count = stack.length;
  const middleware = function conventionsMiddleware(req, res, next) {
    let index = 0;
    const step = (signal?: unknown): void => {
      // As Express's router: 'route' from a middleware means "go on", and
      // anything else that is truthy (an error, 'router') leaves the stack.
      if (signal && signal !== 'route') {
        next(signal);
        return;
      }
      if (index === count) {
        next();
        return;
      }
      const handler = stack[index++] as RequestHandler;
      try {
        const result: unknown = handler(req, res, step);
        if (result instanceof Promise) result.then(undefined, (error: unknown) => step(error || new Error('Rejected promise')));
      } catch (error) {
        step(error);
      }
    };
    step();
  } as ConventionsMiddleware;
  return Object.defineProperty(middleware, 'modules', { value: Object.freeze([...stack]), enumerable: true });
}

/**
 * The whole preset, in the order it must run. Use it as
 * `app.use(conventions())`, then the routes, then
 * `app.use(notFound(), errorHandler())`. It is one middleware (in an array,
 * for `app.use(...conventions())` too) that runs the modules in this order.
 */
export function conventions(options?: Readonly<ConventionsOptions>): ConventionsMiddleware[] {
  const given = readOptions<ConventionsOptions>('conventions', options, MODULES);
  const stack: RequestHandler[] = [];
  if (given.commonHeaders !== false) stack.push(commonHeaders(given.commonHeaders));
  if (given.securityHeaders !== false) stack.push(securityHeaders(given.securityHeaders));
  // Before CORS, whose preflight answer ends the request: it too must carry
  // SPEC.md's default `Cache-Control: no-store, max-age=0`.
  if (given.caching !== false) stack.push(caching(given.caching));
  // Before anything that can fail: an error answer must carry the CORS
  // headers too, or the calling script cannot read it.
  if (given.cors) stack.push(corsPolicy(given.cors));
  if (given.cookies !== false) stack.push(secureCookies(given.cookies));
  if (given.json !== false) stack.push(jsonResponses(given.json));
  if (given.maintenance) stack.push(maintenance(given.maintenance));
  if (given.authentication) stack.push(bearerAuth({ ...given.authentication, optional: true }));
  if (given.rateLimit !== false) stack.push(rateLimit(given.rateLimit));
  if (given.bodies !== false) stack.push(...parseBodies(given.bodies));
  if (given.methodOverride !== false) stack.push(methodOverride(given.methodOverride));
  // After the body parsers (the `_csrf` field) and method override.
  if (given.csrf) stack.push(csrfProtection(given.csrf));
  // Development only by default: in production it is not in the stack at all.
  const linter = given.responseLinter;
  if (linter !== false && (linter !== undefined || !isProductionEnvironment())) stack.push(responseLinter(linter));
  if (given.tokenEndpoint) stack.push(tokenRouter(given.tokenEndpoint));
  return stack.length === 0 ? [] : [runInOrder(stack)];
}
