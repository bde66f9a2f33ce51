import type { Request, Response } from 'express';
import { checkInteger, checkString, invalidOption, readOptions } from 'express-api-conventions/extend';
import type { FindSession } from './sessions/authorization-session.js';
import { type AuthorizationCodeStore, MAX_CODE_TTL_SECONDS, MemoryCodeStore } from './stores/code-store.js';
import { type ConsentStore, MemoryConsentStore } from './stores/consent-store.js';

/** Default path of the authorization endpoint (RFC 6749 §3.1). */
export const AUTHORIZATION_PATH = '/v1/oauth2/authorize';
/** Where the consent page's form posts the user's decision: a collection of decisions (docs/conventions.md §3: plural nouns). */
export const DECISION_PATH = '/v1/oauth2/decisions';

/** An error of the authorization endpoint that cannot go back to the client (RFC 6749 §4.1.2.1). */
export interface AuthorizationErrorPage {
  /** 400, or 403 for a consent form that failed its CSRF check. */
  readonly status: number;
  /** RFC 6749 §4.1.2.1's code: `invalid_request`, `invalid_client`, `unauthorized_client`, `access_denied`. */
  readonly error: string;
  /** One line for the user; never holds a value of the request. */
  readonly description: string;
}

/** Renders the page of an error that is not sent to the client; the status and `Cache-Control: no-store` are set. */
export type ErrorPageRenderer = (req: Request, res: Response, page: AuthorizationErrorPage) => void;

/**
 * The authorization endpoint (RFC 6749 §4.1) and its user's part: the
 * application gives its sessions, its sign-in page and its consent page.
 */
export interface AuthorizationOptions {
  /** Finds the signed-in user of a request; `sessionFromCookie(sessions, cookieName)` builds it from a SessionStore. Required. */
  findSession: FindSession;
  /**
   * The application's sign-in page, a path (`/sign-in`) or an absolute URL.
   * A request with no session is redirected there with `returnTo`, the
   * authorization request to come back to (check it with
   * `router.authorization.returnTo()`). Required.
   */
  signInUrl: string;
  /**
   * The application's consent page, a path or an absolute URL. A
   * third-party client's request that the user has not yet approved is
   * redirected there with `request`; the page shows
   * `router.authorization.consentPrompt(req)`. Required.
   */
  consentUrl: string;
  /** Path of the endpoint. Default: `'/v1/oauth2/authorize'`. */
  path?: string;
  /** Path the consent page's form posts the decision to. Default: `/v1/oauth2/decisions` (a plural noun, docs/conventions.md §3). */
  decisionPath?: string;
  /** Where codes live. Default: a MemoryCodeStore (one process only). */
  codes?: AuthorizationCodeStore;
  /** Where consents live. Default: a MemoryConsentStore (one process only). */
  consents?: ConsentStore;
  /** A code's lifetime, seconds (1 to 60). Default: 60. */
  codeTtlSeconds?: number;
  /** Renders an error that cannot go back to the client, for a browser (Accept prefers text/html). Default: a plain page. */
  errorPage?: ErrorPageRenderer;
}

/** The checked options of the authorization endpoint. */
export interface AuthorizationConfiguration {
  readonly path: string;
  readonly decisionPath: string;
  readonly findSession: FindSession;
  readonly signInUrl: string;
  readonly consentUrl: string;
  readonly codes: AuthorizationCodeStore;
  readonly consents: ConsentStore;
  readonly codeTtlMs: number;
  readonly errorPage: ErrorPageRenderer | undefined;
}

const OPTION_NAMES = [
  'findSession',
  'signInUrl',
  'consentUrl',
  'path',
  'decisionPath',
  'codes',
  'consents',
  'codeTtlSeconds',
  'errorPage',
] as const;

const F = 'tokenRouter';

const hasMethods = (value: unknown, methods: readonly string[]): boolean =>
  typeof value === 'object' &&
  value !== null &&
  methods.every((name) => typeof (value as Record<string, unknown>)[name] === 'function');

function readPath(name: string, value: unknown, fallback: string): string {
  const path = value === undefined ? fallback : checkString(F, `authorization.${name}`, value);
  if (!path.startsWith('/') || path.includes('?') || path.includes('#')) {
    invalidOption(F, `authorization.${name}`, path, "a path starting with '/', without query or fragment");
  }
  return path;
}

/** A page of the application: a path of this origin, or an absolute http(s) URL. */
function readPage(name: string, value: unknown): string {
  const page = checkString(F, `authorization.${name}`, value);
  if (page.startsWith('/') && !page.startsWith('//')) return page;
  if (/^https?:\/\//.test(page) && URL.canParse(page)) return page;
  return invalidOption(F, `authorization.${name}`, page, "a path starting with '/' or an absolute http(s) URL");
}

/** Checks the `authorization` option of tokenRouter(); undefined when it is absent or false. */
export function readAuthorizationOptions(value: unknown): AuthorizationConfiguration | undefined {
  if (value === undefined || value === false) return undefined;
  const given = readOptions<AuthorizationOptions>(F, value, OPTION_NAMES);
  if (typeof given.findSession !== 'function') {
    invalidOption(
      F,
      'authorization.findSession',
      given.findSession,
      'a function (req) => session, e.g. sessionFromCookie(sessions, cookieName)',
    );
  }
  if (given.codes !== undefined && !hasMethods(given.codes, ['save', 'redeem', 'wasReplayed'])) {
    invalidOption(F, 'authorization.codes', given.codes, 'an AuthorizationCodeStore (save, redeem, wasReplayed)');
  }
  if (given.consents !== undefined && !hasMethods(given.consents, ['find', 'grant', 'list', 'withdraw'])) {
    invalidOption(F, 'authorization.consents', given.consents, 'a ConsentStore (find, grant, list, withdraw)');
  }
  if (given.errorPage !== undefined && typeof given.errorPage !== 'function') {
    invalidOption(F, 'authorization.errorPage', given.errorPage, 'a function (req, res, page) => void');
  }
  const path = readPath('path', given.path, AUTHORIZATION_PATH);
  const decisionPath = readPath('decisionPath', given.decisionPath, DECISION_PATH);
  if (decisionPath === path) invalidOption(F, 'authorization.decisionPath', decisionPath, 'a path other than the endpoint');
  return {
    path,
    decisionPath,
    findSession: given.findSession,
    signInUrl: readPage('signInUrl', given.signInUrl),
    consentUrl: readPage('consentUrl', given.consentUrl),
    codes: given.codes ?? new MemoryCodeStore(),
    consents: given.consents ?? new MemoryConsentStore(),
    codeTtlMs:
      checkInteger(F, 'authorization.codeTtlSeconds', given.codeTtlSeconds ?? MAX_CODE_TTL_SECONDS, {
        min: 1,
        max: MAX_CODE_TTL_SECONDS,
      }) * 1000,
    errorPage: given.errorPage,
  };
}
