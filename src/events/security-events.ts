import { channel } from 'node:diagnostics_channel';
import type { Request } from 'express';
import { SECURITY_EVENTS, type SecurityEventLevel, type SecurityEventName } from './names.js';

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
  /** The user the decision is about (a token's `sub`, or the username tried at sign-in). */
  readonly subject?: string;
  readonly clientId?: string;
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

/**
 * Publishes one decision, with the request's method, route and address when
 * a request is given. Call it only after securityEventsWanted() said yes.
 */
export function publishSecurityEvent(req: Request | undefined, fields: SecurityEventFields): void {
  const event: Record<string, unknown> = { datetime: new Date().toISOString() };
  if (req !== undefined) {
    event.method = req.method;
    event.route = routeOf(req);
    event.sourceIp = req.ip ?? req.socket?.remoteAddress;
  }
  Object.assign(event, fields);
  event.level = SECURITY_EVENTS[fields.event].level;
  // A subscriber sees only the fields the decision knows: none holds `undefined`.
  for (const key in event) if (event[key] === undefined) delete event[key];
  securityChannel.publish(event);
}
