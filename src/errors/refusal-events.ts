import type { Request } from 'express';
import { publishSecurityEvent, type SecurityEventFields, type SecurityEventLevel } from '../events/index.js';
import type { ApiError } from './api-error.js';
import { ERROR_CATALOGUE, type ErrorName } from './catalogue.js';

// Every refusal the library answers is a security event (docs/observability.md):
// published here, where every refusal passes (refuse()), named by its
// catalogue entry. A middleware that knows more (the subject, the policy, a
// more precise event) notes it on the request before it refuses.

interface RefusalEvent {
  readonly event: string;
  readonly level: SecurityEventLevel;
}

const input: RefusalEvent = { event: 'input_validation_fail', level: 'WARN' };

/** The event of each refusal that is a security decision; a refusal not named here (a 404, a 503) publishes nothing. */
const EVENT_OF: Partial<Record<ErrorName, RefusalEvent>> = {
  badRequest: input,
  malformedBody: input,
  methodOverrideRefused: input,
  invalidQueryParameter: input,
  unknownField: input,
  validationFailed: input,
  malformedUri: input,
  invalidUtf8Body: input,
  malformedRequest: input,
  payloadTooLarge: input,
  unsupportedMediaType: input,
  unsupportedCharset: input,
  unsupportedEncoding: input,
  headerFieldsTooLarge: input,
  oauthInvalidRequest: input,
  oauthInvalidGrant: { event: 'authn_login_fail', level: 'WARN' },
  oauthUnauthorizedClient: { event: 'authz_fail', level: 'WARN' },
  oauthUnsupportedGrantType: input,
  oauthInvalidScope: { event: 'authz_fail', level: 'WARN' },
  oauthInvalidClientRequest: { event: 'authn_client_fail', level: 'WARN' },
  oauthInvalidClient: { event: 'authn_client_fail', level: 'WARN' },
  oauthUnsupportedTokenType: input,
  oauthInvalidDpopProof: { event: 'authn_proof_invalid', level: 'WARN' },
  unauthenticated: { event: 'authn_fail', level: 'WARN' },
  invalidToken: { event: 'authn_token_invalid', level: 'WARN' },
  invalidDpopProof: { event: 'authn_proof_invalid', level: 'WARN' },
  forbidden: { event: 'authz_fail', level: 'WARN' },
  insufficientScope: { event: 'authz_fail', level: 'WARN' },
  xhrRequired: { event: 'malicious_not_script', level: 'WARN' },
  csrfTokenInvalid: { event: 'malicious_csrf', level: 'WARN' },
  corsOriginRefused: { event: 'malicious_cors', level: 'WARN' },
  crossSiteRequestRefused: { event: 'malicious_cross_site', level: 'WARN' },
  tooManyRequests: { event: 'excess_rate_limit_exceeded', level: 'WARN' },
  tooManyLoginFailures: { event: 'authn_login_lock', level: 'WARN' },
  signInQueueFull: { event: 'excess_rate_limit_exceeded', level: 'WARN' },
  signInBusy: { event: 'excess_sign_in_busy', level: 'WARN' },
};

const NAME_OF_CODE = new Map<number, ErrorName>(
  Object.entries(ERROR_CATALOGUE).map(([name, entry]) => [entry.code, name as ErrorName]),
);

// What a middleware knows of a refusal before it refuses, per request.
const NOTES = new WeakMap<object, Partial<SecurityEventFields>>();

/**
 * Adds what a middleware knows of the refusal it is about to make (the
 * subject, the client, the policy, a more precise event name) to the event
 * refuse() publishes. Only when someone listens: callers test
 * securityEventsWanted() first.
 */
export function noteSecurityEvent(req: Request, fields: Partial<SecurityEventFields>): void {
  NOTES.set(req, { ...NOTES.get(req), ...fields });
}

/** Publishes the event of one refusal, if it is a security decision. */
export function publishRefusal(req: Request, answer: ApiError, rule?: string): void {
  const name = NAME_OF_CODE.get(answer.code);
  const known = name === undefined ? undefined : EVENT_OF[name];
  const note = NOTES.get(req);
  if (known === undefined && note?.event === undefined) return;
  NOTES.delete(req);
  publishSecurityEvent(req, {
    event: known?.event ?? 'input_validation_fail',
    level: known?.level ?? 'WARN',
    description: answer.message,
    outcome: 'failure',
    rule: rule ?? name,
    status: answer.status,
    ...note,
  });
}
