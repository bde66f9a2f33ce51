import type { Request } from 'express';
import type { Params } from '../protocol/params.js';
import type { ClientType, RegisteredClient } from '../stores/client-registration.js';
import type { TokenRouterConfiguration } from '../token-options.js';
import type { GrantContext, Issued } from './token-response.js';

/**
 * One grant of the token endpoint (RFC 6749 §4): the row of the grant table
 * (grants/index.ts) that declares it. The router reads the row to dispatch,
 * to check the client, to know which form parameters to read, and to list
 * the grant in the metadata (docs/design.md principle 14: one row per fact).
 */
export interface Grant {
  /** Its `grant_type` value: an RFC 6749 name, or an absolute URI for an extension grant (§4.5). */
  readonly type: string;
  /** The form parameters it defines besides grant_type, scope and client authentication: only those are read (RFC 6749 §3.1). */
  readonly parameters: readonly string[];
  /** The client types registered for it that may use it (RFC 6749 §2.1). */
  readonly clientTypes: readonly ClientType[];
  /**
   * Whether a request without client authentication may use it
   * (docs/conventions.md rule 13.5: optional for the password and refresh
   * grants). When false, such a request is `invalid_client` (401).
   */
  readonly clientOptional: boolean;
  /** Whether this router's configuration answers it; absent: always. A grant turned off is `unsupported_grant_type`. */
  enabled?(config: TokenRouterConfiguration): boolean;
  /** Checks the request and issues its tokens; a refusal throws tokenError(). */
  handle(context: GrantContext, request: GrantRequest): Promise<Issued>;
}

/** A token request as a grant's handler sees it: read, its client authenticated, its DPoP proof checked. */
export interface GrantRequest {
  readonly req: Request;
  readonly params: Params;
  /** The authenticated client; undefined when none was presented and the grant allows that. */
  readonly client: RegisteredClient | undefined;
  /** The thumbprint of the proved DPoP key (RFC 9449 §5), when the request carried a proof. */
  readonly jkt: string | undefined;
}
