import type { Request } from 'express';
import '../auth-context.js';

/**
 * Who a request is counted for (the conventions' Limits rule 4: "Counting is per user
 * and per application"). A missing member falls back to the client address.
 */
export interface RequestIdentity {
  /** The user: the access token's subject. */
  readonly user?: string | undefined;
  /** The application: the client id, from the token or the client's credentials. */
  readonly application?: string | undefined;
}

/**
 * The hook that tells the limiter who a request acts for. It may return a
 * promise, so that a session store lookup can feed the limiter.
 */
export type IdentifyRequest = (req: Request) => RequestIdentity | PromiseLike<RequestIdentity>;

/**
 * The default identity (identities cannot be forged): the
 * user of `req.auth` (a verified access token, set by bearerAuth(), see
 * src/auth-context.ts); the application of a verified token
 * (`req.auth.clientId`), else of verified client credentials
 * (`req.verifiedClient.id`). Nothing a client merely claims (the id of an
 * unchecked `Authorization: Basic`, a body's `client_id`) picks a counter:
 * such a request is counted by its address.
 */
export function identifyRequest(req: Request): RequestIdentity {
  const auth = req.auth;
  return { user: auth?.subject, application: auth?.clientId ?? req.verifiedClient?.id };
}
