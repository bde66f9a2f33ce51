import type { CookieOptions, Request, RequestHandler, Response } from 'express';
import { checkOneOf, invalidOption, readOptions } from '../config/options.js';
import { addHeaderRule } from '../http/response-headers.js';
import { type HeaderRule, type HeaderValue, localsOf, ownMethod } from '../http/response-state.js';

declare module 'express-serve-static-core' {
  interface CookieOptions {
    /**
     * Why this cookie goes without `Secure` or `HttpOnly` (or with
     * `SameSite=None`). Required to opt out under secureCookies(); never sent.
     */
    optOutReason?: string;
  }
}

/** docs/conventions.md rule 11.14: cookies are `Secure` and `HttpOnly`. */
export const COOKIE_DEFAULTS = { secure: true, httpOnly: true } as const;

/** Options of secureCookies(). */
export interface SecureCookiesOptions {
  /**
   * `SameSite` of every cookie that states none: `'lax'` keeps cookies off
   * cross-site subrequests and form posts, `'strict'` off cross-site
   * navigations too. Default: `'lax'`.
   */
  sameSite?: 'strict' | 'lax';
  /**
   * Cookies written by another middleware (not `res.cookie()`) that may go
   * without `Secure` or `HttpOnly`, each name with the reason, as
   * `optOutReason` does for `res.cookie()`. Every other `Set-Cookie` that
   * leaves through the response gets the attributes it lacks. Default: none.
   */
  exemptCookies?: Readonly<Record<string, string>>;
}

type CookieSetter = (this: Response, name: string, value: unknown, options: CookieOptions) => Response;

/**
 * Thrown when a route weakens a cookie without saying why: a programming
 * error, so it surfaces as a 500 in development rather than as a cookie
 * that silently leaks.
 */
export class InsecureCookieError extends Error {
  override readonly name = 'InsecureCookieError';
}

/** The checks and defaults of secureCookies(), then the cookie setter they wrap. */
function secureCookie(
  res: Response,
  setCookie: CookieSetter,
  sameSite: 'strict' | 'lax',
  name: string,
  value: unknown,
  options?: CookieOptions,
): Response {
  const { optOutReason, ...given } = options ?? {};
  const weakened = given.secure === false || given.httpOnly === false || given.sameSite === false || given.sameSite === 'none';
  if (weakened && (typeof optOutReason !== 'string' || optOutReason.trim() === '')) {
    throw new InsecureCookieError(
      `Cookie ${JSON.stringify(name)} opts out of Secure, HttpOnly or SameSite without a reason: pass { optOutReason: 'why' } (docs/conventions.md rule 11.14: cookies are Secure and HttpOnly).`,
    );
  }
  // A stated reason holds for this cookie on this response, through every
  // later write of Set-Cookie (res.append and express-session resend it).
  if (weakened) optOutsOf(res, true)?.add(name);
  return setCookie.call(res, name, value, { ...COOKIE_DEFAULTS, sameSite, ...given });
}

/**
 * The setter a response's own res.cookie() stands in front of, and the
 * SameSite default of the first secureCookies() it passed: one object per
 * middleware and setter, shared by the responses (in their locals).
 */
interface CookieChoice {
  readonly setter: CookieSetter;
  readonly sameSite: 'strict' | 'lax';
}

const CHOICE = Symbol('express-api-conventions.cookieChoice');
// The cookies a route opted out of Secure or HttpOnly for, with a reason, per response (in its locals).
const OPTED_OUT = Symbol('express-api-conventions.cookieOptOuts');
type CookieHolder = { [CHOICE]?: CookieChoice; [OPTED_OUT]?: Set<string> };

function optOutsOf(res: Response, create: boolean): Set<string> | undefined {
  const holder = localsOf(res) as CookieHolder;
  if (create) holder[OPTED_OUT] ??= new Set();
  return holder[OPTED_OUT];
}

// An attribute after the name=value pair: `; Secure`, `; HttpOnly` (RFC 6265 §4.1.1), in any case.
const SECURE_ATTRIBUTE = /;\s*secure\s*(?:;|=|$)/i;
const HTTP_ONLY_ATTRIBUTE = /;\s*httponly\s*(?:;|=|$)/i;

/** One Set-Cookie line with `Secure` and `HttpOnly`, unless its cookie is exempt or opted out on this response. */
function secureLine(line: string, exempt: ReadonlySet<string>, optedOut: ReadonlySet<string> | undefined): string {
  const cookieName = line.slice(0, Math.max(0, line.indexOf('='))).trim();
  if (exempt.has(cookieName) || optedOut?.has(cookieName)) return line;
  let secured = line;
  if (!SECURE_ATTRIBUTE.test(line)) secured += '; Secure';
  if (!HTTP_ONLY_ATTRIBUTE.test(line)) secured += '; HttpOnly';
  return secured;
}

/**
 * The rule on `Set-Cookie` (src/http/response-headers.ts): whoever writes the
 * header (express-session, a route's `res.setHeader`, `res.append`), every
 * cookie leaves with `Secure` and `HttpOnly`.
 */
function setCookieRule(exempt: ReadonlySet<string>): HeaderRule {
  return {
    name: 'set-cookie',
    field: 'Set-Cookie',
    apply(res: Response, value: HeaderValue): HeaderValue {
      const optedOut = optOutsOf(res, false);
      if (typeof value === 'string') return secureLine(value, exempt, optedOut);
      if (!Array.isArray(value)) return value;
      const lines = value.map((line) => (typeof line === 'string' ? secureLine(line, exempt, optedOut) : line));
      // The same array when nothing changed: the head then writes nothing again.
      return lines.every((line, i) => line === value[i]) ? value : lines;
    },
  };
}

// The response's own res.cookie() while it passes secureCookies(): one
// shared function, `this` is the response.
function secureCookieMethod(this: Response, name: string, value: unknown, options?: CookieOptions): Response {
  const choice = (localsOf(this) as CookieHolder)[CHOICE] as CookieChoice;
  return secureCookie(this, choice.setter, choice.sameSite, name, value, options);
}

/** The names of `exemptCookies`, each with a stated reason. */
function exemptNames(exempt: unknown): ReadonlySet<string> {
  if (exempt === undefined) return new Set();
  if (typeof exempt !== 'object' || exempt === null || Array.isArray(exempt)) {
    return invalidOption(
      'secureCookies',
      'exemptCookies',
      exempt,
      "an object of cookie names and reasons, e.g. { 'XSRF-TOKEN': 'read by the page script' }",
    );
  }
  for (const [name, reason] of Object.entries(exempt)) {
    if (typeof reason !== 'string' || reason.trim() === '') {
      invalidOption('secureCookies', `exemptCookies.${name}`, reason, 'the reason this cookie goes without Secure or HttpOnly');
    }
  }
  return new Set(Object.keys(exempt));
}

/**
 * Every cookie that leaves through the response carries `Secure` and
 * `HttpOnly`, whoever wrote it: `res.cookie()` (and `res.clearCookie()`),
 * and any other writer of `Set-Cookie` (express-session, cookie-session, a
 * route's `res.setHeader`), whose lines get the attributes they lack when
 * they are written; `exemptCookies` names the exceptions. Cookies set
 * through `res.cookie()` also get a `SameSite` default.
 * A route may turn one off only by naming its reason in `optOutReason`.
 * `res.cookie()` is the response's own (one shared function, set per
 * response), so the app's `app.response` and every other response keep
 * Express's.
 */
export function secureCookies(options?: Readonly<SecureCookiesOptions>): RequestHandler {
  const given = readOptions<SecureCookiesOptions>('secureCookies', options, ['sameSite', 'exemptCookies']);
  const sameSite = checkOneOf('secureCookies', 'sameSite', given.sameSite ?? 'lax', ['strict', 'lax'] as const);
  const rule = setCookieRule(exemptNames(given.exemptCookies));
  // One choice per setter found (Express's, for every response of an app): none made per request.
  const choices = new WeakMap<CookieSetter, CookieChoice>();
  return function secureCookiesMiddleware(_req, res, next) {
    addHeaderRule(res, rule);
    const holder = localsOf(res) as CookieHolder;
    // The first secureCookies() a response passes sets its default.
    if (holder[CHOICE] === undefined) {
      const setter = res.cookie as unknown as CookieSetter;
      let choice = choices.get(setter);
      if (choice === undefined) {
        choice = Object.freeze({ setter, sameSite });
        choices.set(setter, choice);
      }
      holder[CHOICE] = choice;
      ownMethod(res, 'cookie', secureCookieMethod);
    }
    next();
  };
}

/**
 * The value of one request cookie, or `undefined`: enough to find a session
 * for csrfProtection({ sessionOf }) without a cookie-parsing middleware.
 * Percent-encoded values (as `res.cookie()` writes them) are decoded.
 */
export function cookieValue(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return undefined;
  let start = 0;
  while (start < header.length) {
    let end = header.indexOf(';', start);
    if (end === -1) end = header.length;
    const eq = header.indexOf('=', start);
    if (eq !== -1 && eq < end && header.slice(start, eq).trim() === name) {
      let value = header.slice(eq + 1, end).trim();
      if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
      try {
        return decodeURIComponent(value);
      } catch {
        return value;
      }
    }
    start = end + 1;
  }
  return undefined;
}
