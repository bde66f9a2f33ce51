import type { Request, RequestHandler, Response } from 'express';
import { checkBoolean, invalidOption, readOptions } from '../config/options.js';
import { warnOnce } from '../config/warnings.js';
import { apiError } from '../errors/api-error.js';
import { refuse } from '../errors/refuse.js';
import { inOriginList, readOriginList } from '../http/origins.js';
import { getResponseHeader } from '../http/response-headers.js';
import { isSafeMethod } from '../http/spec.js';

/** Options of crossSiteProtection(). */
export interface CrossSiteProtectionOptions {
  /**
   * Origins of other sites whose state-changing requests are legitimate:
   * the origins CORS allows with credentials (a page on another site that
   * signs in through the token endpoint). Exact origins
   * (`'https://app.example.com'`) or anchored RegExps. In conventions(), the
   * origins of `corsPolicy` when this is not given. Default: `[]`.
   */
  trustedOrigins?: readonly (string | RegExp)[];
  /**
   * Trust the whole site: accept `Sec-Fetch-Site: same-site` from any page
   * on another subdomain or port of the same registrable domain
   * (`app.example.com` calling `api.example.com`). Off, such a request is
   * treated as cross-site (it passes from a trusted origin only): a sibling
   * subdomain you do not control (user content, an old blog) could
   * otherwise post a sign-in form (login CSRF). Default: `false`.
   */
  allowSameSite?: boolean;
  /**
   * Let through an origin that a CORS middleware in front (the `cors`
   * package, `corsPolicy`, the app's own) allowed for this very request:
   * `Access-Control-Allow-Origin` already names it. `false`: only
   * `trustedOrigins` and this host decide. Default: `true`.
   */
  followCors?: boolean;
}

/** The request header of Fetch Metadata this check reads first (W3C Fetch Metadata Request Headers). */
export const SEC_FETCH_SITE = 'sec-fetch-site' as const;

const FACTORY = 'crossSiteProtection';
/**
 * Whether `origin` is this server's own: its scheme (Express's
 * `req.protocol`, which reads `X-Forwarded-Proto` under `trust proxy`) and
 * its `Host`. The scheme counts: `http://api.example.com` is another
 * origin than `https://api.example.com` (RFC 6454 §4).
 */
function isOwnOrigin(req: Request, origin: string): boolean {
  const host = req.headers.host;
  return host !== undefined && origin.toLowerCase() === `${req.protocol}://${host}`.toLowerCase();
}

/**
 * Refuses state-changing requests (any method but GET, HEAD, OPTIONS, TRACE)
 * that a browser sends on behalf of a page of another site, with 403
 * `crossSiteRequestRefused` (40305): the first CSRF layer OWASP recommends,
 * which also covers doors that have no session yet (a cross-site sign-in
 * form signing the visitor into the attacker's account: login CSRF).
 *
 * - `Sec-Fetch-Site: same-origin` or `none` (typed by the user) passes;
 *   `same-site` and `cross-site` pass only from a trusted origin (`same-site`
 *   from any origin of the site with `allowSameSite: true`).
 * - Without Fetch Metadata (older browsers), `Origin` decides: `null`
 *   (a sandboxed frame, a redirect across sites) is refused, this
 *   server's own origin (scheme and host) or a trusted origin passes, any
 *   other is refused.
 * - Neither header: not a browser (curl, a server, a mobile app), nothing
 *   to forge; it passes. Such clients need to do nothing.
 *
 * It is a first layer, not a replacement: the CSRF token of docs/conventions.md rule 10.1 stays.
 */
export function crossSiteProtection(options?: Readonly<CrossSiteProtectionOptions>): RequestHandler {
  const given = readOptions<CrossSiteProtectionOptions>(FACTORY, options, ['trustedOrigins', 'allowSameSite', 'followCors']);
  const trustedOrigins = given.trustedOrigins ?? [];
  if (!Array.isArray(trustedOrigins)) {
    invalidOption(FACTORY, 'trustedOrigins', trustedOrigins, 'an array of origins or anchored RegExps');
  }
  const trusted = readOriginList(FACTORY, 'trustedOrigins', trustedOrigins);
  const allowSameSite = checkBoolean(FACTORY, 'allowSameSite', given.allowSameSite ?? false);
  const followCors = checkBoolean(FACTORY, 'followCors', given.followCors ?? true);
  const convention = { rule: '10.1', middleware: FACTORY } as const;

  const isTrusted = (origin: string | undefined, res: Response): boolean =>
    origin !== undefined &&
    origin !== 'null' &&
    (inOriginList(trusted, origin) || (followCors && corsAllowedOrigin(res, origin)));

  return function crossSiteProtectionMiddleware(req, res, next) {
    if (isSafeMethod(req.method)) {
      next();
      return;
    }
    const site = req.headers[SEC_FETCH_SITE];
    const origin = req.headers.origin;
    let allowed: boolean;
    if (site !== undefined) {
      allowed = site === 'same-origin' || site === 'none' || (site === 'same-site' && allowSameSite) || isTrusted(origin, res);
    } else {
      allowed = origin === undefined || (origin !== 'null' && (isOwnOrigin(req, origin) || isTrusted(origin, res)));
    }
    if (allowed) {
      next();
      return;
    }
    const fix = crossSiteFix(origin);
    warnOfFirstRefusal(trustedOrigins, origin, fix);
    const detail = { secFetchSite: site ?? null, origin: origin ?? null, fix };
    refuse(req, res, next, apiError('crossSiteRequestRefused', { detail }), { ...convention, fix });
  };
}

// What a CORS middleware in front decided, and what a refusal tells the developer.

/**
 * Whether a CORS middleware that ran before (the `cors` package, corsPolicy(),
 * the app's own) allowed this request's origin: `Access-Control-Allow-Origin`
 * is already on the response and names exactly that origin, as a CORS
 * middleware writes it for an origin on its list. Such a page can read the
 * service's credentialed answers (a CSRF token among them), so refusing its
 * writes would protect nothing. `*` is no such decision: it names no one,
 * every page gets it, and it carries no credentials.
 */
function corsAllowedOrigin(res: Response, origin: string): boolean {
  const allowOrigin = getResponseHeader(res, 'access-control-allow-origin');
  return typeof allowOrigin === 'string' && allowOrigin === origin;
}

/**
 * What to change so that this origin's writes pass, when they are
 * legitimate; short enough for a `detail` string (REFLECTED_INPUT_LIMITS).
 */
function crossSiteFix(origin: string | undefined): string {
  const named = origin === undefined || origin === 'null' ? 'https://app.example.com' : origin;
  return `conventions({ crossSiteProtection: { trustedOrigins: ['${named}'] } }), or corsPolicy's origins`;
}

/** Outside production, once per process: cross-site writes are refused, and which origins are trusted. */
function warnOfFirstRefusal(trusted: readonly (string | RegExp)[], origin: string | undefined, fix: string): void {
  const list = trusted.length === 0 ? 'none' : trusted.map(String).join(', ');
  warnOnce(
    'crossSiteProtection:refused',
    'EAC_CROSS_SITE_REFUSED',
    `crossSiteProtection() refused a state-changing request from ${origin ?? 'another site'} (403, code 40305): ` +
      `writes from other sites are refused unless their origin is trusted or a CORS middleware in front allowed it. Trusted origins: ${list}. ` +
      `If this page's writes are legitimate, trust its origin: ${fix}, or the origins of the CORS middleware in front (\`Origin: null\` is never trusted).`,
  );
}
