import { createHmac, randomBytes } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { ConfigurationError } from '../config/configuration-error.js';
import { checkBoolean, checkFunction, checkInteger, checkString, invalidOption, readOptions } from '../config/options.js';
import { apiError } from '../errors/api-error.js';
import { refuse } from '../errors/refuse.js';
import { type AfterLookup, afterLookup } from '../http/lookup.js';
import { sameText } from '../http/same-text.js';
import { isSafeMethod } from '../http/spec.js';

/**
 * Cross-site request forgery (the conventions' "Cross-site request forgery"):
 * "State-changing requests from forms carry a one-time token, unique at
 * least per session, issued by the service; a request without it is
 * refused." The pattern is the synchronizer token, in its HMAC form (OWASP
 * "Synchronizer Token Pattern", "HMAC based token"): the token is a keyed
 * hash of the session id, so the service issues and checks it without
 * storing it, and a token stolen from one session is useless in another.
 * With `oneTime`, each token also carries a random nonce that is accepted once.
 */

/** The request header that carries the token (the conventions' Path rules 10: no `X-` prefix). */
export const CSRF_HEADER = 'CSRF-Token' as const;
/** The form field that carries the token. */
export const CSRF_FIELD = '_csrf' as const;

/** Issues and checks the CSRF tokens of sessions. */
export interface CsrfTokens {
  /** A token for the session; give it to the page (for example in the sign-in response). */
  issue(sessionId: string): string;
  /** Whether `token` is valid for the session; a one-time token is used up by a successful check. */
  verify(sessionId: string, token: string): boolean;
}

/** Options of csrfTokens(). */
export interface CsrfTokensOptions {
  /**
   * The HMAC key, at least 32 bytes. Give the same secret to every instance
   * that serves the same sessions. Required, unless `randomSecret: true`:
   * a missing secret (`process.env.CSRF_SECRET` unset) is refused at
   * start-up, as missing token keys are, never silently replaced.
   */
  secret?: string | Buffer;
  /**
   * Instead of `secret`: 32 random bytes drawn when csrfTokens() is called,
   * for one process alone (tests, a single instance); tokens then die with
   * the process and no other instance accepts them. Default: `false`.
   */
  randomSecret?: boolean;
  /**
   * Each issued token is accepted once (a fresh one is issued per form).
   * Outstanding tokens are kept in this process's memory. Default: `false`
   * (one token per session, valid as long as the session).
   */
  oneTime?: boolean;
  /** With `oneTime`: how many unused tokens a session keeps; older ones expire. Default: `32`. */
  maxOutstanding?: number;
}

const MAX_SESSIONS_TRACKED = 100_000;

/** csrfTokens()'s options, read once. */
interface CsrfTokensConfiguration {
  readonly secret: string | Buffer;
  readonly oneTime: boolean;
  readonly maxOutstanding: number;
}

function readCsrfTokensOptions(options: Readonly<CsrfTokensOptions> | undefined): CsrfTokensConfiguration {
  const given = readOptions<CsrfTokensOptions>('csrfTokens', options, ['secret', 'randomSecret', 'oneTime', 'maxOutstanding']);
  const randomSecret = checkBoolean('csrfTokens', 'randomSecret', given.randomSecret ?? false);
  if (randomSecret && given.secret !== undefined) {
    throw new ConfigurationError(
      'EAC_OPTIONS_CONFLICT',
      'csrfTokens(options): `secret` and `randomSecret: true` exclude each other; give one.',
    );
  }
  if (!randomSecret && given.secret === undefined) {
    invalidOption(
      'csrfTokens',
      'secret',
      undefined,
      'a string or Buffer of at least 32 bytes, the same on every instance (or `randomSecret: true` for a secret of this process alone)',
    );
  }
  const secret = given.secret ?? randomBytes(32);
  if ((typeof secret !== 'string' && !Buffer.isBuffer(secret)) || Buffer.byteLength(secret) < 32) {
    invalidOption(
      'csrfTokens',
      'secret',
      typeof secret === 'string' ? `${secret.length} characters` : secret,
      'a string or Buffer of at least 32 bytes',
    );
  }
  return {
    secret,
    oneTime: checkBoolean('csrfTokens', 'oneTime', given.oneTime ?? false),
    maxOutstanding: checkInteger('csrfTokens', 'maxOutstanding', given.maxOutstanding ?? 32, { min: 1, max: 1000 }),
  };
}

/** Creates the token issuer and checker that csrfProtection() and the sign-in route share. */
export function csrfTokens(options?: Readonly<CsrfTokensOptions>): CsrfTokens {
  const config = readCsrfTokensOptions(options);
  const mac = (text: string): string => createHmac('sha256', config.secret).update(text).digest('base64url');
  return config.oneTime ? oneTimeTokens(mac, config.maxOutstanding) : sessionTokens(mac);
}

/** One token per session, derived from its id: nothing is stored. */
function sessionTokens(mac: (text: string) => string): CsrfTokens {
  return {
    issue: (sessionId) => mac(`csrf\0${sessionId}`),
    verify: (sessionId, token) => sameText(token, mac(`csrf\0${sessionId}`)),
  };
}

/** A token per form, each good once: a nonce the session holds, signed with its id. */
function oneTimeTokens(mac: (text: string) => string, maxOutstanding: number): CsrfTokens {
  // sessionId -> unused nonces, oldest first. A Map keeps insertion order, so
  // the oldest session is dropped first when too many are tracked.
  const outstanding = new Map<string, string[]>();
  return {
    issue(sessionId) {
      const nonce = randomBytes(16).toString('base64url');
      const nonces = outstanding.get(sessionId) ?? [];
      nonces.push(nonce);
      if (nonces.length > maxOutstanding) nonces.shift();
      outstanding.delete(sessionId);
      outstanding.set(sessionId, nonces);
      if (outstanding.size > MAX_SESSIONS_TRACKED) outstanding.delete(outstanding.keys().next().value as string);
      return `${nonce}.${mac(`csrf\0${sessionId}\0${nonce}`)}`;
    },
    verify(sessionId, token) {
      const dot = token.indexOf('.');
      if (dot <= 0) return false;
      const nonce = token.slice(0, dot);
      if (!sameText(token.slice(dot + 1), mac(`csrf\0${sessionId}\0${nonce}`))) return false;
      const nonces = outstanding.get(sessionId);
      const index = nonces ? nonces.indexOf(nonce) : -1;
      if (!nonces || index === -1) return false;
      nonces.splice(index, 1);
      return true;
    },
  };
}

/** Options of csrfProtection(). */
export interface CsrfProtectionOptions {
  /** The issuer and checker made by csrfTokens(). Required. */
  tokens: CsrfTokens;
  /**
   * The session a request is authenticated by through an ambient credential
   * (a cookie), or `undefined` when it has none. Only such requests are
   * checked: a request that authenticates with a bearer token and carries no
   * session cookie cannot be forged by another site. Required.
   */
  sessionOf: (req: Request) => string | undefined | Promise<string | undefined>;
  /** The request header carrying the token. Default: `'CSRF-Token'`. */
  header?: string;
  /** The form field carrying the token (in an `application/x-www-form-urlencoded` body). Default: `'_csrf'`. */
  field?: string;
}

const FACTORY = 'csrfProtection';

const CSRF_CONVENTION = {
  rule: '10.1',
  middleware: 'csrfProtection',
  fix: "Send the token csrfTokens() issued for this session: in the request header (`header`, default 'CSRF-Token') or the form field (`field`, default '_csrf').",
} as const;

/** csrfProtection()'s options, read once. */
interface CsrfProtectionConfiguration {
  readonly tokens: CsrfTokens;
  readonly sessionOf: CsrfProtectionOptions['sessionOf'];
  /** The header's name in lower case, as Node keys `req.headers`. */
  readonly header: string;
  readonly field: string;
}

function readCsrfProtectionOptions(options: Readonly<CsrfProtectionOptions>): CsrfProtectionConfiguration {
  const given = readOptions<CsrfProtectionOptions>(FACTORY, options, ['tokens', 'sessionOf', 'header', 'field']);
  const tokens = given.tokens;
  if (
    typeof tokens !== 'object' ||
    tokens === null ||
    typeof tokens.issue !== 'function' ||
    typeof tokens.verify !== 'function'
  ) {
    invalidOption(FACTORY, 'tokens', tokens, 'the object returned by csrfTokens()');
  }
  return {
    tokens,
    sessionOf: checkFunction<CsrfProtectionOptions['sessionOf']>(FACTORY, 'sessionOf', given.sessionOf),
    header: checkString(FACTORY, 'header', given.header ?? CSRF_HEADER).toLowerCase(),
    field: checkString(FACTORY, 'field', given.field ?? CSRF_FIELD),
  };
}

/** The token a request carries, in the header or else the form field (taken out of the body). */
function tokenOf(config: CsrfProtectionConfiguration, req: Request): string | undefined {
  const fromHeader = req.headers[config.header];
  if (typeof fromHeader === 'string' && fromHeader !== '') return fromHeader;
  const body = req.body as Record<string, unknown> | undefined;
  const field = config.field;
  if (!body || typeof body !== 'object' || !Object.hasOwn(body, field) || !req.is('application/x-www-form-urlencoded')) {
    return undefined;
  }
  const value = body[field];
  // The field is ours, not the resource's: the route never sees it.
  delete body[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The refusal of a request made with session `sessionId`, or undefined when it may pass. */
function judge(config: CsrfProtectionConfiguration, req: Request, sessionId: string | undefined): Error | undefined {
  if (sessionId === undefined) return undefined;
  const token = tokenOf(config, req);
  if (token === undefined)
    return apiError('csrfTokenInvalid', { detail: 'no CSRF token in the CSRF-Token header or the _csrf field' });
  if (!config.tokens.verify(sessionId, token)) {
    return apiError('csrfTokenInvalid', { detail: 'the CSRF token does not belong to this session' });
  }
  return undefined;
}

/**
 * Refuses (403 JSON, code 40302) a state-changing request made with a
 * session cookie unless it carries the session's CSRF token in the
 * `CSRF-Token` header or the `_csrf` form field. Mount it after
 * parseBodies() and methodOverride(), so the field is parsed and an
 * overridden POST is judged by its real method (every POST is checked anyway).
 */
export function csrfProtection(options: Readonly<CsrfProtectionOptions>): RequestHandler {
  const config = readCsrfProtectionOptions(options);
  // Made once: the request passes, or is refused in JSON (refuse()).
  const decide: AfterLookup<string | undefined> = (req, res, next, sessionId) => {
    const refusal = judge(config, req, sessionId);
    if (refusal === undefined) next();
    else refuse(req, res, next, refusal, CSRF_CONVENTION);
  };
  return function csrfProtectionMiddleware(req, res, next) {
    if (isSafeMethod(req.method)) {
      next();
      return;
    }
    afterLookup(config.sessionOf, decide, req, res, next);
  };
}
