import { channel } from 'node:diagnostics_channel';
import type { Request } from 'express';
import { boundEvent } from './bounded.js';
import { SECURITY_EVENTS, type SecurityEventLevel, type SecurityEventName, type SecurityEventReason } from './names.js';
import { requestIdOf, traceOf } from './request-context.js';

/**
 * The `node:diagnostics_channel` channel every security decision is
 * published on (docs/observability.md). Its name is part of the public
 * contract: OpenTelemetry, a logger or an alerting hook subscribes to it
 * without any option of the library.
 */
export const SECURITY_EVENTS_CHANNEL = 'express-api-conventions:security';

const securityChannel = channel(SECURITY_EVENTS_CHANNEL);

/**
 * The policy that decided, where one did: a limit and its window, a delay,
 * the `Retry-After` the client was given. Seconds throughout.
 */
export interface SecurityPolicy {
  /** The limiter policy's name (rateLimit()'s `policies`). */
  readonly name?: string;
  /** What the caller was counted by: its user, its application, or its address when neither is known. */
  readonly identity?: 'user' | 'application' | 'address';
  readonly limit?: number;
  readonly windowSeconds?: number;
  readonly delaySeconds?: number;
  readonly retryAfterSeconds?: number;
  /** The scopes a route requires and the caller's token lacks (requireScope()), space-separated. */
  readonly scope?: string;
}

/**
 * One security decision, as published on the channel. Never a password,
 * token, cookie, proof or secret: a token appears at most as its `jti`
 * (docs/observability.md lists each event and its fields).
 */
export interface SecurityEvent {
  /** RFC 3339 UTC time of the decision. */
  readonly datetime: string;
  /** OWASP's vocabulary name (`authn_login_fail`, ...), or one in its style: a row of SECURITY_EVENTS. */
  readonly event: SecurityEventName;
  /** The name's level, from SECURITY_EVENTS. */
  readonly level: SecurityEventLevel;
  /** One line a person reads. */
  readonly description: string;
  /** Whether the decision let the request through. */
  readonly outcome: 'success' | 'failure';
  /**
   * The code of the rule that decided: for a refusal, the name of its entry
   * in the one error model (`csrfTokenInvalid`, `tooManyRequests`: each with
   * its `code` and rule in docs/errors.md), the same whether or not the
   * middleware enforces a docs/conventions.md rule.
   */
  readonly rule?: string;
  /** The HTTP status answered, when the decision answered. */
  readonly status?: number;
  readonly method?: string;
  /** The route template (`/v1/users/:id`) when Express has matched one, else the path. */
  readonly route?: string;
  /** The client's address as `trust proxy` resolves it (`req.ip`). */
  readonly sourceIp?: string;
  /** The request's id: the app's `req.id`, a trusted proxy's `Request-Id` or `X-Request-Id`, or one made (and answered in `Request-Id`). */
  readonly requestId?: string;
  /** The W3C trace id: the active OpenTelemetry span's, or a trusted proxy's `traceparent`. */
  readonly traceId?: string;
  /** The active span's id (or, from `traceparent`, the caller's span). */
  readonly spanId?: string;
  /** The request's `User-Agent`, bounded. */
  readonly userAgent?: string;
  /** The request's `Origin`, bounded: on CORS and cross-site refusals. */
  readonly origin?: string;
  /** The user the decision is about: always a user id (a token's `sub`, a session's or a signed-in user's). */
  readonly subject?: string;
  /** The username tried at sign-in, normalized: where only it is known, and beside `subject` on a success. */
  readonly username?: string;
  /** A verified client: a token's `client_id`, or a client whose credentials were verified. */
  readonly clientId?: string;
  /** The OAuth scopes the decision is about, space-separated (RFC 6749 §3.3): a consent, a code. */
  readonly scope?: string;
  /** A client id presented but not verified: never presented as `clientId`. */
  readonly claimedClientId?: string;
  /** Why, as one of a fixed set: the allowance a sign-in used up or was refused by, how a session ended. */
  readonly reason?: SecurityEventReason;
  /** A short, non-secret name of a known device (never its cookie). */
  readonly device?: string;
  /** A session's public id (never its cookie). */
  readonly sessionId?: string;
  /** A token's or a proof's `jti` (a proof's for a proof's event), the only way a token is named. */
  readonly jti?: string;
  readonly policy?: SecurityPolicy;
  /** A sign-in's duration, milliseconds (the OpenTelemetry bridge's histogram). */
  readonly durationMs?: number;
  /** The time a password check waited for the hashing pool, milliseconds. */
  readonly poolWaitMs?: number;
}

/** What a decision says; the time, the name's level and the request's own facts are added on publishing. */
export type SecurityEventFields = Omit<SecurityEvent, 'datetime' | 'level'>;

/**
 * Whether anyone listens. Publishers test it before they build an event, so
 * that nothing is built when nobody listens (docs/observability.md, "Cost").
 */
export const securityEventsWanted = (): boolean => securityChannel.hasSubscribers;

/** The route template Express matched, else the path asked for. */
function routeOf(req: Request): string | undefined {
  const template = req.route?.path;
  if (typeof template === 'string') return `${req.baseUrl ?? ''}${template}`;
  return typeof req.path === 'string' ? req.path : undefined;
}

// The rule of a refusal already published for a request by the one that decided it (the sessions'
// session_use_after_expire), so that the answer's refusal does not publish it twice.
const DECIDED = new WeakMap<object, string>();

/** Whether an event of `rule`'s refusal was published for this request already. */
export const refusalPublishedFor = (req: Request, rule: string): boolean => DECIDED.get(req) === rule;

// The refusals whose `Origin` is the fact an operator counts by (docs/observability.md).
const ORIGIN_EVENTS: ReadonlySet<SecurityEventName> = new Set(['malicious_cors', 'malicious_cross_site']);

/** The request's own facts: method, route, address, ids, user agent. */
function requestFacts(req: Request, name: SecurityEventName): Record<string, unknown> {
  return {
    method: req.method,
    route: routeOf(req),
    sourceIp: req.ip ?? req.socket?.remoteAddress,
    requestId: requestIdOf(req),
    ...traceOf(req),
    userAgent: req.headers?.['user-agent'],
    origin: ORIGIN_EVENTS.has(name) ? req.headers?.origin : undefined,
  };
}

/**
 * Publishes one decision, with the request's own facts when a request is
 * given, every string bounded (src/events/bounded.ts). Call it only after
 * securityEventsWanted() said yes.
 */
export function publishSecurityEvent(req: Request | undefined, fields: SecurityEventFields): void {
  const event: Record<string, unknown> = { datetime: new Date().toISOString() };
  Object.assign(event, req === undefined ? traceOf(undefined) : requestFacts(req, fields.event), fields);
  event.level = SECURITY_EVENTS[fields.event].level;
  boundEvent(event);
  if (req !== undefined && fields.outcome === 'failure' && fields.rule !== undefined) DECIDED.set(req, fields.rule);
  // A subscriber sees only the fields the decision knows: none holds `undefined`.
  for (const key in event) if (event[key] === undefined) delete event[key];
  securityChannel.publish(event);
}
