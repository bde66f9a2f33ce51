import type { Request } from 'express';
import { noteSecurityEvent, publishSecurityEvent, securityEventsWanted } from 'express-api-conventions/extend';

/**
 * The authorization code flow's security events (docs/observability.md),
 * in OWASP's vocabulary style, each built only when someone listens. They
 * name the user, the registered client, the scopes and the session's public
 * id: never a code, a verifier, a state or a CSRF token.
 */

/** Who and what a code or a consent is about. */
export interface AuthorizationFacts {
  readonly subject: string;
  /** A registered client's id (never a claimed one). */
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly sessionId?: string;
}

const factsOf = (facts: AuthorizationFacts) => ({
  subject: facts.subject,
  clientId: facts.clientId,
  scope: facts.scopes.join(' '),
  ...(facts.sessionId === undefined ? {} : { sessionId: facts.sessionId }),
});

/** `authz_code_issued`: a signed-in user's authorization request got a code. */
export function publishCodeIssued(req: Request, facts: AuthorizationFacts): void {
  if (!securityEventsWanted()) return;
  publishSecurityEvent(req, {
    event: 'authz_code_issued',
    outcome: 'success',
    description: 'An authorization code was issued.',
    ...factsOf(facts),
  });
}

/**
 * `authz_code_replay` (CRITICAL): a code was presented a second time, by an
 * attacker who intercepted it or a broken client; what the first
 * presentation issued is revoked. Noted on the refusal the token endpoint answers.
 */
export function noteCodeReplay(req: Request, facts: AuthorizationFacts): void {
  if (!securityEventsWanted()) return;
  noteSecurityEvent(req, {
    event: 'authz_code_replay',
    description: 'An authorization code was presented again; the tokens it issued are revoked.',
    ...factsOf(facts),
  });
}

/** `authz_consent_given` and `authz_consent_denied`: the user's decision on the consent page. */
export function publishConsentDecision(req: Request, approved: boolean, facts: AuthorizationFacts): void {
  if (!securityEventsWanted()) return;
  publishSecurityEvent(req, {
    event: approved ? 'authz_consent_given' : 'authz_consent_denied',
    outcome: approved ? 'success' : 'failure',
    description: approved ? 'The user approved the client and scopes.' : 'The user denied the client.',
    ...factsOf(facts),
  });
}

/** `authz_consent_withdrawn`: the user withdrew what they had granted a client. */
export function publishConsentWithdrawn(req: Request | undefined, facts: AuthorizationFacts): void {
  if (!securityEventsWanted()) return;
  publishSecurityEvent(req, {
    event: 'authz_consent_withdrawn',
    outcome: 'success',
    description: 'The user withdrew their consent to a client.',
    ...factsOf(facts),
  });
}
