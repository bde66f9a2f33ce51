import type { Request } from 'express';
import { publishSecurityEvent, refusalPublishedFor, type SecurityEventFields, type SecurityEventName } from '../events/index.js';
import type { ApiError } from './api-error.js';
import { ERROR_CATALOGUE, type ErrorName } from './catalogue.js';
import { registeredEntryOfCode } from './registered-entries.js';
import { toApiError } from './to-api-error.js';

// Every refusal the library answers is a security event (docs/observability.md):
// published where every refusal passes (refuse(), else errorHandler() for an
// error handed to it directly, answerParserErrors() for the parser's), named
// by its catalogue entry. A middleware that knows more (the subject, the
// policy, a more precise event) notes it on the request before it refuses.

/** An event's name (its level is the names table's, src/events/names.ts). */
export interface RefusalEvent {
  readonly event: SecurityEventName;
}

const input: RefusalEvent = { event: 'input_validation_fail' };
const authzFail: RefusalEvent = { event: 'authz_fail' };
const proofInvalid: RefusalEvent = { event: 'authn_proof_invalid' };
const rateLimited: RefusalEvent = { event: 'excess_rate_limit_exceeded' };

/** The events of a refused access token, by why it was refused (resource-token.ts). */
export const TOKEN_EVENTS = {
  expired: { event: 'authn_token_expired' },
  invalid: { event: 'authn_token_invalid' },
  // OWASP's authn_token_reuse: a token of a revoked family, presented again.
  revoked: { event: 'authn_token_reuse' },
} as const satisfies Record<string, RefusalEvent>;

/** A DPoP proof presented a second time: a captured request sent again, or a retry that reused the proof. */
export const PROOF_REPLAY_EVENT: RefusalEvent = { event: 'authn_proof_replay' };

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
  unauthenticated: { event: 'authn_credentials_missing' },
  invalidToken: TOKEN_EVENTS.invalid,
  invalidDpopProof: proofInvalid,
  forbidden: authzFail,
  insufficientScope: authzFail,
  xhrRequired: { event: 'malicious_not_script' },
  csrfTokenInvalid: { event: 'malicious_csrf' },
  corsOriginRefused: { event: 'malicious_cors' },
  crossSiteRequestRefused: { event: 'malicious_cross_site' },
  tooManyRequests: rateLimited,
};

const NAME_OF_CODE = new Map<number, ErrorName>(
  Object.entries(ERROR_CATALOGUE).map(([name, entry]) => [entry.code, name as ErrorName]),
);

// What a middleware knows of a refusal before it refuses, per request.
const NOTES = new WeakMap<object, Partial<SecurityEventFields>>();

// The refusal published for each request, so that errorHandler() does not publish it again.
const PUBLISHED = new WeakMap<object, unknown>();

/**
 * Adds what a middleware knows of the refusal it is about to make (the
 * subject, the client, the policy, a more precise event name) to the event
 * refuse() publishes. Only when someone listens: callers test
 * securityEventsWanted() first.
 */
export function noteSecurityEvent(req: Request, fields: Partial<SecurityEventFields>): void {
  NOTES.set(req, { ...NOTES.get(req), ...fields });
}

/** Takes the note of the refusal being made away from the request (a held refusal keeps it for later). */
export function takeSecurityNote(req: Request): Partial<SecurityEventFields> | undefined {
  const note = NOTES.get(req);
  NOTES.delete(req);
  return note;
}

/**
 * The event fields of a refusal that is a security decision, else undefined:
 * `rule` is always the catalogue entry's name.
 */
export function refusalEventOf(answer: ApiError): SecurityEventFields | undefined {
  const entry = entryOfCode(answer.code);
  if (entry?.event === undefined) return undefined;
  // A refused input's own message quotes the input (docs/errors.md); its event names the refusal only.
  const description = entry.event.event === input.event ? entry.message : answer.message;
  return { ...entry.event, description, outcome: 'failure', rule: entry.name, status: answer.status };
}

/** The entry of a code, the library's or one a package registered (registered-entries.ts), with its event. */
function entryOfCode(code: number): { name: string; message: string; event: RefusalEvent | undefined } | undefined {
  const name = NAME_OF_CODE.get(code);
  if (name !== undefined) return { name, message: ERROR_CATALOGUE[name].message, event: EVENT_OF[name] };
  const registered = registeredEntryOfCode(code);
  return registered && { name: registered.name, message: registered.entry.message, event: registered.entry.event };
}

/** Who a request acted for, as a verified token or verified client credentials named them. */
function actorOf(req: Request): Partial<SecurityEventFields> | undefined {
  const auth = req.auth;
  const clientId = auth?.clientId ?? req.verifiedClient?.id;
  const jti = req.accessToken?.jti;
  if (auth === undefined && clientId === undefined) return undefined;
  return { subject: auth?.subject, clientId, jti };
}

/**
 * Publishes the event of one refusal, if it is a security decision (or a
 * middleware noted one). `reportOnly`: the refusal was only reported and the
 * request went on (reportOnly()), so the outcome is a success and nothing
 * was answered.
 */
export function publishRefusal(req: Request, error: unknown, reportOnly?: string): void {
  const answer = toApiError(error);
  const note = takeSecurityNote(req);
  const fields = refusalEventOf(answer) ?? (note?.event === undefined ? undefined : { ...input, ...fieldsOf(answer) });
  if (fields === undefined) return;
  // One event per decision: the one that decided published it already, with what it knew.
  if (note?.event === undefined && fields.rule !== undefined && refusalPublishedFor(req, fields.rule)) return;
  const event = { ...fields, ...actorOf(req), ...note };
  if (reportOnly === undefined) {
    PUBLISHED.set(req, error);
    publishSecurityEvent(req, event);
  } else {
    publishSecurityEvent(req, {
      ...event,
      outcome: 'success',
      status: undefined,
      description: `Report-only, would have ${reportOnly}: ${event.description}`,
    });
  }
}

/** What any refusal says of itself, when the catalogue names no event for it. */
function fieldsOf(answer: ApiError) {
  return {
    description: answer.message,
    outcome: 'failure',
    rule: entryOfCode(answer.code)?.name,
    status: answer.status,
  } as const;
}

/**
 * errorHandler()'s part: publishes a refusal handed to it directly (by
 * Express's own parsers, by the app's code), unless refuse() published it
 * for this request already.
 */
export function publishUnlessPublished(req: Request, thrown: unknown): void {
  if (PUBLISHED.get(req) !== thrown) publishRefusal(req, thrown);
}
