/** The levels of OWASP's Application Logging Vocabulary. */
export type SecurityEventLevel = 'INFO' | 'WARN' | 'CRITICAL';

/** What the table says of one event name. */
export interface SecurityEventSpec {
  /** The level every event of this name is published at. */
  readonly level: SecurityEventLevel;
  /**
   * `true`: the name and its level are OWASP's Application Logging
   * Vocabulary's own. `false`: a name in its style, at the level of the
   * vocabulary's nearest name (docs/observability.md, "The event").
   */
  readonly vocabulary: boolean;
}

/**
 * Every security event name, with its level: the one table every publisher
 * (the library, the authorization server, the sessions) names its events
 * from, and that docs/observability.md's tables are checked against. A new
 * kind of event is one row here, then one row in the docs.
 */
export const SECURITY_EVENTS = {
  // Authentication: sign-in.
  authn_login_success: { level: 'INFO', vocabulary: true },
  authn_login_fail: { level: 'WARN', vocabulary: true },
  authn_login_fail_max: { level: 'WARN', vocabulary: true },
  authn_login_lock: { level: 'WARN', vocabulary: true },
  authn_credentials_missing: { level: 'INFO', vocabulary: false },
  authn_client_fail: { level: 'WARN', vocabulary: false },
  // Authentication: tokens and proofs.
  authn_token_created: { level: 'INFO', vocabulary: true },
  authn_token_grace_reuse: { level: 'WARN', vocabulary: false },
  authn_token_revoked: { level: 'INFO', vocabulary: true },
  authn_token_reuse: { level: 'CRITICAL', vocabulary: true },
  authn_token_invalid: { level: 'WARN', vocabulary: false },
  authn_token_expired: { level: 'INFO', vocabulary: false },
  authn_proof_invalid: { level: 'WARN', vocabulary: false },
  authn_proof_replay: { level: 'WARN', vocabulary: false },
  // Authorization.
  authz_fail: { level: 'CRITICAL', vocabulary: true },
  authz_code_issued: { level: 'INFO', vocabulary: false },
  authz_code_replay: { level: 'CRITICAL', vocabulary: false },
  authz_consent_given: { level: 'INFO', vocabulary: false },
  authz_consent_denied: { level: 'INFO', vocabulary: false },
  authz_consent_withdrawn: { level: 'INFO', vocabulary: false },
  // Excessive use.
  excess_rate_limit_exceeded: { level: 'WARN', vocabulary: true },
  excess_sign_in_busy: { level: 'WARN', vocabulary: false },
  // Input and malicious behaviour.
  input_validation_fail: { level: 'WARN', vocabulary: true },
  malicious_cors: { level: 'CRITICAL', vocabulary: true },
  malicious_cross_site: { level: 'WARN', vocabulary: false },
  malicious_csrf: { level: 'WARN', vocabulary: false },
  malicious_not_script: { level: 'WARN', vocabulary: false },
  // Sessions.
  session_created: { level: 'INFO', vocabulary: true },
  session_expired: { level: 'INFO', vocabulary: true },
  session_use_after_expire: { level: 'CRITICAL', vocabulary: true },
} as const satisfies Record<string, SecurityEventSpec>;

/** The name of a security event: a row of SECURITY_EVENTS. */
export type SecurityEventName = keyof typeof SECURITY_EVENTS;

/**
 * The `reason` of an event, one of a fixed set. A sign-in's allowance
 * (`authn_login_fail_max`, `authn_login_lock`): `username_and_address` (the
 * failures for one username from one address), `address` (from one address),
 * `username_delay` (the username delayed after failures from several
 * addresses), `known_device` (a known device's own allowance), `queue_timeout`
 * (waited too long behind other attempts). How a session ended
 * (`session_expired`, OWASP's reasons): `logout`, `revoked` (by its user),
 * `replaced` (by a new sign-in).
 */
export type SecurityEventReason =
  | 'username_and_address'
  | 'address'
  | 'username_delay'
  | 'known_device'
  | 'queue_timeout'
  | 'logout'
  | 'revoked'
  | 'replaced';
