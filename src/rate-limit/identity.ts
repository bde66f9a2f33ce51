import type { Request } from 'express';
import '../auth-context.js';

/**
 * Who a request is counted for (SPEC.md Limits rule 4: "Counting is per user
 * and per application"). A missing member falls back to the client address.
 */
export interface RequestIdentity {
  /** The user: the access token's subject. */
  readonly user?: string | undefined;
  /** The application: the client id, from the token or the client's credentials. */
  readonly application?: string | undefined;
}

/** The hook that tells the limiter who a request acts for. */
export type IdentifyRequest = (req: Request) => RequestIdentity;

const BASIC_SCHEME = 'basic ';

// RFC 6749 §2.3.1: the client id in HTTP Basic is form-urlencoded first, so
// `a%20b` there is the `a b` a form body would carry. Both count as one.
const formDecode = (text: string): string => {
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
};

/**
 * The client id a request claims through client authentication (SPEC.md
 * Authentication, "Client authentication"): the user part of
 * `Authorization: Basic`, else `client_id` of a parsed form body. It is a
 * claim, not yet verified: it only picks the application's counter, while an
 * anonymous request stays counted by its address in the user policy too.
 */
export function claimedClientId(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (header !== undefined && header.length > BASIC_SCHEME.length && header.slice(0, 6).toLowerCase() === BASIC_SCHEME) {
    const decoded = Buffer.from(header.slice(BASIC_SCHEME.length).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) return formDecode(decoded.slice(0, colon));
  }
  const body: unknown = req.body;
  if (typeof body === 'object' && body !== null) {
    const clientId = (body as { client_id?: unknown }).client_id;
    if (typeof clientId === 'string' && clientId.length > 0) return clientId;
  }
  return undefined;
}

/**
 * The default identity: the user and application of `req.auth` (set by
 * bearerAuth(), see src/auth-context.ts), the application otherwise from the
 * client's credentials.
 */
export function identifyRequest(req: Request): RequestIdentity {
  const auth = req.auth;
  return { user: auth?.subject, application: auth?.clientId ?? claimedClientId(req) };
}
