/**
 * Who a request acts for, once authenticated. The oauth2 module's
 * bearerAuth() fills `req.auth`; other modules only read it (the rate limiter
 * counts per user and per application from it, the conventions' "Limits" rule 4).
 */
export interface AuthContext {
  /** The user: the access token's `sub`. */
  readonly subject: string;
  /** The application: the access token's `client_id`, when a client was authenticated. */
  readonly clientId?: string;
  /** Granted scopes, from the token's space-separated `scope`. */
  readonly scopes: readonly string[];
}

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by bearerAuth() (or a session) when the request is authenticated. */
    auth?: AuthContext;
    /**
     * The application whose client credentials (HTTP Basic) were verified
     * against the client store, when no token named one. An unverified
     * claim is never set here (the rate limiter then counts the address).
     */
    verifiedClient?: { readonly id: string };
  }
}
