import { SECURITY_EVENTS, type SecurityEventLevel, type SecurityEventName } from '../events/index.js';

/** The attributes of one series of the events counter, as recordSecurityMetrics() records them. */
export interface SecuritySeries {
  readonly event: string;
  readonly outcome: 'success' | 'failure';
  readonly level: SecurityEventLevel;
  readonly rule?: string;
}

interface KnownEvent {
  readonly outcome: 'success' | 'failure';
  /** The rules (error names) the event is published under; none for a decision that answers nothing. */
  readonly rules: readonly string[];
}

const refused = (...rules: string[]): KnownEvent => ({ outcome: 'failure', rules });
const succeeded: KnownEvent = { outcome: 'success', rules: [] };
/** A decision against the request that is not a refusal answered through the catalogue (a consent denied). */
const declined: KnownEvent = { outcome: 'failure', rules: [] };

// Every event name of SECURITY_EVENTS (a new one is a type error here until it
// has its row) with the outcome and the rules the library and the
// authorization server publish it under (the error catalogue's names).
// A counter series is born at its first event unless it was created before:
// created at 0 here, the first incident after a start is an increase that
// rate() and increase() see (docs/observability.md, "Metrics from the first
// incident"). An app's own door may refuse under a rule of its own: that
// series is born at its first event.
const KNOWN_EVENTS: Readonly<Record<SecurityEventName, KnownEvent>> = {
  input_validation_fail: refused(
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
  authn_credentials_missing: refused('unauthenticated'),
  authn_token_invalid: refused('invalidToken', 'oauthInvalidGrant'),
  authn_token_expired: refused('invalidToken'),
  authn_token_reuse: refused('invalidToken', 'oauthInvalidGrant'),
  authn_proof_invalid: refused('invalidDpopProof', 'oauthInvalidDpopProof'),
  authn_proof_replay: refused('invalidDpopProof', 'oauthInvalidDpopProof'),
  authz_fail: refused('forbidden', 'insufficientScope', 'oauthUnauthorizedClient', 'oauthInvalidScope'),
  malicious_cors: refused('corsOriginRefused'),
  malicious_cross_site: refused('crossSiteRequestRefused'),
  malicious_csrf: refused('csrfTokenInvalid'),
  malicious_not_script: refused('xhrRequired'),
  excess_rate_limit_exceeded: refused('tooManyRequests', 'signInQueueFull'),
  // The token endpoint's invalid_grant, or a browser door's 401 (the reference server's).
  authn_login_fail: refused('oauthInvalidGrant', 'unauthenticated'),
  authn_login_fail_max: refused('oauthInvalidGrant', 'unauthenticated'),
  authn_login_lock: refused('tooManyLoginFailures'),
  excess_sign_in_busy: refused('signInBusy'),
  authn_client_fail: refused('oauthInvalidClient', 'oauthInvalidClientRequest'),
  authn_login_success: succeeded,
  authn_token_created: succeeded,
  // A refresh inside the grace: answered with the tokens already issued.
  authn_token_grace_reuse: succeeded,
  authn_token_revoked: succeeded,
  // The authorization endpoint: a code replayed is the token endpoint's invalid_grant.
  authz_code_issued: succeeded,
  authz_code_replay: refused('oauthInvalidGrant'),
  authz_consent_given: succeeded,
  authz_consent_denied: declined,
  authz_consent_withdrawn: succeeded,
  session_created: succeeded,
  session_expired: succeeded,
  session_use_after_expire: refused('unauthenticated'),
};

/** Every series of the events counter that the library's and the authorization server's events make. */
export function knownSecuritySeries(): SecuritySeries[] {
  return (Object.entries(KNOWN_EVENTS) as [SecurityEventName, KnownEvent][]).flatMap(([event, { outcome, rules }]) => {
    const { level } = SECURITY_EVENTS[event];
    return rules.length === 0 ? [{ event, outcome, level }] : rules.map((rule) => ({ event, outcome, level, rule }));
  });
}
