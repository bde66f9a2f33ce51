import type { SecurityEventLevel } from '../events/index.js';

/** The attributes of one series of the events counter, as recordSecurityMetrics() records them. */
export interface SecuritySeries {
  readonly event: string;
  readonly outcome: 'success' | 'failure';
  readonly level: SecurityEventLevel;
  readonly rule?: string;
}

interface KnownEvent {
  readonly level: SecurityEventLevel;
  readonly outcome: 'success' | 'failure';
  /** The rules (error names) the event is published under; none for a decision that answers nothing. */
  readonly rules: readonly string[];
}

const refused = (level: SecurityEventLevel, ...rules: string[]): KnownEvent => ({ level, outcome: 'failure', rules });
const succeeded: KnownEvent = { level: 'INFO', outcome: 'success', rules: [] };

// Every event of docs/observability.md's tables with the rules the library and
// the authorization server publish it under (the error catalogue's names).
// A counter series is born at its first event unless it was created before:
// created at 0 here, the first incident after a start is an increase that
// rate() and increase() see (docs/observability.md, "Metrics from the first
// incident"). An app's own door may refuse under a rule of its own: that
// series is born at its first event.
const KNOWN_EVENTS: Readonly<Record<string, KnownEvent>> = {
  input_validation_fail: refused(
    'WARN',
    'badRequest',
    'malformedBody',
    'methodOverrideRefused',
    'invalidQueryParameter',
    'unknownField',
    'validationFailed',
    'malformedUri',
    'invalidUtf8Body',
    'malformedRequest',
    'payloadTooLarge',
    'unsupportedMediaType',
    'unsupportedCharset',
    'unsupportedEncoding',
    'headerFieldsTooLarge',
    'oauthInvalidRequest',
    'oauthUnsupportedGrantType',
    'oauthUnsupportedTokenType',
  ),
  authn_credentials_missing: refused('INFO', 'unauthenticated'),
  authn_token_invalid: refused('WARN', 'invalidToken', 'oauthInvalidGrant'),
  authn_token_expired: refused('INFO', 'invalidToken'),
  authn_token_reuse: refused('CRITICAL', 'invalidToken', 'oauthInvalidGrant'),
  authn_proof_invalid: refused('WARN', 'invalidDpopProof', 'oauthInvalidDpopProof'),
  authn_proof_replay: refused('WARN', 'invalidDpopProof', 'oauthInvalidDpopProof'),
  authz_fail: refused('CRITICAL', 'forbidden', 'insufficientScope', 'oauthUnauthorizedClient', 'oauthInvalidScope'),
  malicious_cors: refused('CRITICAL', 'corsOriginRefused'),
  malicious_cross_site: refused('WARN', 'crossSiteRequestRefused'),
  malicious_csrf: refused('WARN', 'csrfTokenInvalid'),
  malicious_not_script: refused('WARN', 'xhrRequired'),
  excess_rate_limit_exceeded: refused('WARN', 'tooManyRequests', 'signInQueueFull'),
  // The token endpoint's invalid_grant, or a browser door's 401 (the reference server's).
  authn_login_fail: refused('WARN', 'oauthInvalidGrant', 'unauthenticated'),
  authn_login_fail_max: refused('WARN', 'oauthInvalidGrant', 'unauthenticated'),
  authn_login_lock: refused('WARN', 'tooManyLoginFailures'),
  excess_sign_in_busy: refused('WARN', 'signInBusy'),
  authn_client_fail: refused('WARN', 'oauthInvalidClient', 'oauthInvalidClientRequest'),
  authn_login_success: succeeded,
  authn_token_created: succeeded,
  authn_token_revoked: succeeded,
  session_created: succeeded,
  session_ended: succeeded,
  session_use_after_expire: refused('WARN', 'unauthenticated'),
};

/** Every series of the events counter that the library's and the authorization server's events make. */
export function knownSecuritySeries(): SecuritySeries[] {
  return Object.entries(KNOWN_EVENTS).flatMap(([event, { level, outcome, rules }]) =>
    rules.length === 0 ? [{ event, outcome, level }] : rules.map((rule) => ({ event, outcome, level, rule })),
  );
}
