import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { isApiError, storeUnavailable } from 'express-api-conventions/errors';
import { isStoreFailure } from 'express-api-conventions/extend';
import { publishCodeIssued, publishConsentDecision } from '../authorization-events.js';
import type { AuthorizationConfiguration } from '../authorization-options.js';
import type { AuthorizationSession } from '../sessions/authorization-session.js';
import { consentCsrfToken, consentCsrfTokenValid } from '../sessions/consent-csrf.js';
import type { WithdrawConsent } from '../sessions/consent-withdrawal.js';
import { safeReturnTo } from '../sign-in/return-to.js';
import { hashAuthorizationCode, newAuthorizationCode } from '../stores/code-store.js';
import { consentCovers } from '../stores/consent-store.js';
import { answerErrorPage, plainErrorPage, redirect, withParams } from './authorization-answers.js';
import {
  AuthorizationError,
  type AuthorizationRequest,
  type AuthorizationRequestContext,
  readAuthorizationRequest,
} from './authorization-request.js';

/**
 * The authorization endpoint (RFC 6749 §4.1; RFC 9700 §2.1, §4.1, §4.5;
 * RFC 9207) and the consent form's target. The application owns the HTML:
 * the endpoint sends the user to its sign-in page with `returnTo`, and to
 * its consent page with `request`; the page shows consentPrompt() and posts
 * the decision to the decision path.
 */

/** What the consent page shows and posts back. */
export interface ConsentPrompt {
  readonly kind: 'ask';
  /** The client asking, as registered: its id and its name (the id when it has none). */
  readonly client: { readonly id: string; readonly name: string };
  /** The scopes the user is asked to grant. */
  readonly scopes: readonly string[];
  /** Where the form posts (method POST, urlencoded). */
  readonly action: string;
  /** The form's hidden fields, as they are; the buttons add `decision=approve` or `decision=deny`. */
  readonly fields: { readonly request: string; readonly csrf_token: string };
}

/** The consent page cannot ask (no session, or the request is no longer valid): send the user here. */
export interface ConsentRestart {
  readonly kind: 'restart';
  readonly location: string;
}

/** The helpers an application's pages use. */
export interface AuthorizationHelpers {
  /** The endpoint's path. */
  readonly path: string;
  /** Where the consent form posts. */
  readonly decisionPath: string;
  /** The sign-in page's `returnTo`, when it is an authorization request of this server; undefined for anything else. */
  returnTo(value: unknown): string | undefined;
  /** What the consent page shows for its request (`?request=`); undefined when it has no `request` parameter. */
  consentPrompt(req: Request): Promise<ConsentPrompt | ConsentRestart | undefined>;
  /**
   * Withdraws the consent `subject` gave `clientId` and revokes the
   * refresh-token families that client holds for them (with
   * `revokedFamilies`, their access tokens stop at once). Publishes
   * `authz_consent_withdrawn` when there was a consent.
   */
  withdrawConsent: WithdrawConsent;
}

/** What the endpoint reads besides its own options. */
export interface AuthorizationEndpointContext extends AuthorizationRequestContext {
  readonly config: AuthorizationConfiguration;
  readonly issuer: string;
  /** The CSRF tokens' key (sessions/consent-csrf.ts). */
  readonly csrfKey: Buffer;
  /** The consent's withdrawal with the client's tokens (sessions/consent-withdrawal.ts). */
  readonly withdrawConsent: WithdrawConsent;
}

/** The raw query string of a request: parsed by the endpoint itself, each parameter at most once. */
const queryOf = (req: Request): string => {
  const at = req.originalUrl.indexOf('?');
  return at === -1 ? '' : req.originalUrl.slice(at + 1);
};

/** Sends an error: back to the client with `state` and `iss` (RFC 6749 §4.1.2.1, RFC 9207), or to the user. */
function answerError(context: AuthorizationEndpointContext, req: Request, res: Response, error: AuthorizationError): void {
  if (error.redirectUri !== undefined) {
    const params = { error: error.error, error_description: error.message, state: error.state, iss: context.issuer };
    redirect(req, res, withParams(error.redirectUri, params));
    return;
  }
  answerErrorPage(
    req,
    res,
    { status: 400, error: error.error, description: error.message },
    context.config.errorPage ?? plainErrorPage,
  );
}

/** Issues a code for an approved request and sends it to the client (RFC 6749 §4.1.2). */
async function issueCode(
  context: AuthorizationEndpointContext,
  req: Request,
  res: Response,
  request: AuthorizationRequest,
  session: AuthorizationSession,
): Promise<void> {
  const { config } = context;
  const code = newAuthorizationCode();
  const grant = {
    clientId: request.client.id,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    subject: session.subject,
    scopes: request.scopes,
    ...(request.requested === undefined ? {} : { requested: request.requested }),
    authTime: session.authTime,
    familyId: randomUUID(),
    ...(request.jkt === undefined ? {} : { jkt: request.jkt }),
  };
  await config.codes.save(hashAuthorizationCode(code), grant, Date.now() + config.codeTtlMs);
  publishCodeIssued(req, {
    subject: session.subject,
    clientId: request.client.id,
    scopes: request.scopes,
    sessionId: session.sessionId,
  });
  redirect(req, res, withParams(request.redirectUri, { code, state: request.state, iss: context.issuer }));
}

/** Whether the user must be asked: a third-party client whose asked scopes they have not all granted. */
async function needsConsent(
  config: AuthorizationConfiguration,
  request: AuthorizationRequest,
  subject: string,
): Promise<boolean> {
  if (request.client.firstParty === true) return false;
  return !consentCovers(await config.consents.find(subject, request.client.id), request.scopes);
}

/** GET of the endpoint: check, then sign-in, then consent, then the code. */
function authorize(context: AuthorizationEndpointContext) {
  const { config } = context;
  return async function authorizationEndpoint(req: Request, res: Response): Promise<void> {
    const query = queryOf(req);
    const request = await readAuthorizationRequest(context, query);
    const session = await config.findSession(req);
    if (session === undefined) {
      redirect(req, res, withParams(config.signInUrl, { returnTo: `${config.path}?${query}` }));
      return;
    }
    if (await needsConsent(config, request, session.subject)) {
      redirect(req, res, withParams(config.consentUrl, { request: query }));
      return;
    }
    await issueCode(context, req, res, request, session);
  };
}

const readForm = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 8 });

/** A form field given once, as text; undefined otherwise. */
const field = (body: unknown, name: string): string | undefined => {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : undefined;
};

/** POST of the consent form: the session's CSRF token for this request, then the user's decision. */
function decide(context: AuthorizationEndpointContext) {
  const { config } = context;
  const refusePage = (req: Request, res: Response, description: string) =>
    answerErrorPage(req, res, { status: 403, error: 'access_denied', description }, config.errorPage ?? plainErrorPage);
  return async function consentDecisionEndpoint(req: Request, res: Response): Promise<void> {
    await new Promise<void>((resolve, reject) => readForm(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
    const query = field(req.body, 'request') ?? '';
    const session = await config.findSession(req);
    if (session === undefined)
      return refusePage(req, res, 'You are not signed in: sign in and start again from the application.');
    if (!consentCsrfTokenValid(context.csrfKey, session.sessionId, query, field(req.body, 'csrf_token'))) {
      return refusePage(req, res, 'The consent form is not valid: go back to the application and start again.');
    }
    const request = await readAuthorizationRequest(context, query);
    const decision = field(req.body, 'decision');
    if (decision !== 'approve' && decision !== 'deny') {
      throw new AuthorizationError('invalid_request', 'The consent form sent no decision.');
    }
    const facts = { subject: session.subject, clientId: request.client.id, scopes: request.scopes, sessionId: session.sessionId };
    publishConsentDecision(req, decision === 'approve', facts);
    if (decision === 'deny') {
      const to = { redirectUri: request.redirectUri, state: request.state };
      throw new AuthorizationError('access_denied', 'The user denied the request.', to);
    }
    await config.consents.grant(session.subject, request.client.id, request.scopes);
    await issueCode(context, req, res, request, session);
  };
}

/** Runs a handler: its AuthorizationError answered, a store that is down 503, anything else to the error handler. */
function endpoint(context: AuthorizationEndpointContext, handle: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return function authorizationMiddleware(req: Request, res: Response, next: NextFunction) {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof AuthorizationError) answerError(context, req, res, error);
      else if (isStoreFailure(error) && !isApiError(error)) next(storeUnavailable(error));
      else next(error);
    });
  };
}

/** The consent page's prompt for `request` (see AuthorizationHelpers.consentPrompt). */
function prompt(context: AuthorizationEndpointContext) {
  const { config } = context;
  return async function consentPrompt(req: Request): Promise<ConsentPrompt | ConsentRestart | undefined> {
    const query = typeof req.query.request === 'string' ? req.query.request : undefined;
    if (query === undefined) return undefined;
    const restart: ConsentRestart = { kind: 'restart', location: `${config.path}?${query}` };
    const session = await config.findSession(req);
    if (session === undefined) return restart;
    let request: AuthorizationRequest;
    try {
      request = await readAuthorizationRequest(context, query);
    } catch (error) {
      if (error instanceof AuthorizationError) return restart;
      throw error;
    }
    return {
      kind: 'ask',
      client: { id: request.client.id, name: request.client.name ?? request.client.id },
      scopes: request.scopes,
      action: config.decisionPath,
      fields: { request: query, csrf_token: consentCsrfToken(context.csrfKey, session.sessionId, query) },
    };
  };
}

/** Mounts the endpoint and the decision path on `router`; answers the helpers for the application's pages. */
export function mountAuthorization(router: express.Router, context: AuthorizationEndpointContext): AuthorizationHelpers {
  const { config } = context;
  router.get(config.path, endpoint(context, authorize(context)));
  router.post(config.decisionPath, endpoint(context, decide(context)));
  return Object.freeze({
    path: config.path,
    decisionPath: config.decisionPath,
    returnTo: (value: unknown) => safeReturnTo(value, config.path),
    consentPrompt: prompt(context),
    withdrawConsent: context.withdrawConsent,
  });
}
