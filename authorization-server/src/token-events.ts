import type { Request } from 'express';
import { noteSecurityEvent, publishSecurityEvent, securityEventsWanted } from 'express-api-conventions/extend';
import type { RefreshFamily } from './stores/stores.js';

/**
 * The token service's security events (docs/observability.md), each built
 * only when someone listens. A token is named by its `jti` at most: never
 * an access token, a refresh token or a proof.
 */

/** The `jti` of a JWT the router signed itself: read from its payload, never verified again. */
function jtiOf(accessToken: string): string | undefined {
  const payload = accessToken.split('.')[1];
  if (payload === undefined) return undefined;
  const { jti } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { jti?: unknown };
  return typeof jti === 'string' ? jti : undefined;
}

/**
 * `authn_token_created`: a grant issued an access token and a refresh token.
 * A refresh retried inside the grace issues nothing new (the rotation's
 * tokens, the same `jti`): `authn_token_grace_reuse`, never a creation.
 */
export function publishTokenCreated(
  req: Request,
  issued: {
    readonly subject: string;
    readonly clientId: string | undefined;
    readonly accessToken: string;
    readonly grantType: string;
    readonly graceRetry?: boolean;
  },
): void {
  if (!securityEventsWanted()) return;
  const jti = jtiOf(issued.accessToken);
  publishSecurityEvent(req, {
    ...(issued.graceRetry === true
      ? {
          event: 'authn_token_grace_reuse',
          description: 'A rotated refresh token was presented again inside the grace: its rotation was answered again.',
        }
      : { event: 'authn_token_created', description: `Tokens issued by the ${issued.grantType} grant.` }),
    outcome: 'success',
    subject: issued.subject,
    ...(issued.clientId === undefined ? {} : { clientId: issued.clientId }),
    ...(jti === undefined ? {} : { jti }),
  });
}

/** `authn_token_revoked`: a token family (and its access tokens, with `revokedFamilies`) was revoked. */
export function publishTokenRevoked(
  req: Request,
  family: Pick<RefreshFamily, 'subject' | 'clientId'>,
  description: string,
  jti?: string,
): void {
  if (!securityEventsWanted()) return;
  publishSecurityEvent(req, {
    event: 'authn_token_revoked',
    outcome: 'success',
    description,
    subject: family.subject,
    ...(family.clientId === undefined ? {} : { clientId: family.clientId }),
    ...(jti === undefined ? {} : { jti }),
  });
}

/** What the refusal of a refresh token is published as: `event` names it, the family says whose it was. */
export function noteRefreshRefusal(
  req: Request,
  event: 'authn_token_reuse' | 'authn_token_invalid',
  family: Pick<RefreshFamily, 'subject' | 'clientId'> | undefined,
  description: string,
): void {
  if (!securityEventsWanted()) return;
  noteSecurityEvent(req, {
    event,
    description,
    ...(family === undefined ? {} : { subject: family.subject }),
    ...(family?.clientId === undefined ? {} : { clientId: family.clientId }),
  });
}
