import type { Response } from 'express';
import { DPOP_TOKEN_TYPE, formatScope, parseScope, writeJsonAnswer } from 'express-api-conventions/extend';
import { stringifyJson } from 'express-api-conventions/json';
import type { ClientRecord } from 'express-api-conventions/oauth2';
import type { Params } from '../protocol/params.js';
import { tokenError } from '../protocol/token-errors.js';
import type { TokenRouterConfiguration } from '../token-options.js';
import type { AccessTokenSigner } from './access-token-signer.js';

/** The conventions' "Token response": `token_type` "Value `bearer`". */
export const TOKEN_TYPE = 'bearer';

/** What a grant needs besides the request: the configuration and the signer built from it. */
export interface GrantContext {
  readonly config: TokenRouterConfiguration;
  readonly signer: AccessTokenSigner;
  /** The key successors of refresh tokens are derived under, when there is a refresh grace (refresh-grace.ts). */
  readonly refreshKey?: Buffer;
}

/** What a grant answers with: an access token for one subject, and a refresh token when the grant gives one. */
export interface Issued {
  readonly subject: string;
  readonly clientId: string | undefined;
  /** The refresh-token family the access token belongs to (its `sid`); absent when no refresh token is issued. */
  readonly familyId?: string;
  readonly scopes: readonly string[];
  /** The scope the request asked for, if any: `scope` is in the answer when the grant differs (RFC 6749 §5.1). */
  readonly requested: readonly string[] | undefined;
  /** Absent for a grant that issues no refresh token (RFC 6749 §4.4.3: client credentials). */
  readonly refreshToken?: string;
  /** The DPoP key the access token is bound to (RFC 9449 §5); absent for a bearer token. */
  readonly jkt?: string;
  /** The access token's `iat` and `jti` when its rotation fixed them (a refresh grace); absent: new ones. */
  readonly identity?: { readonly iat: number; readonly jti: string };
  /** A refresh retried inside the grace: the rotation's answer again, published as authn_token_grace_reuse. */
  readonly graceRetry?: boolean;
}

/** The `scope` parameter as a list, undefined when absent; invalid_scope when malformed. */
export function requestedScopes(params: Params): readonly string[] | undefined {
  if (params.scope === undefined) return undefined;
  const scopes = parseScope(params.scope);
  if (!scopes) throw tokenError('invalid_scope', 'The scope parameter is malformed.');
  return scopes;
}

/** The scopes a client may have: the known ones, narrowed by the client's own list. */
export function allowedFor(known: ReadonlySet<string>, client: ClientRecord | undefined): ReadonlySet<string> {
  return client?.scopes === undefined ? known : new Set(client.scopes.filter((scope) => known.has(scope)));
}

/**
 * Writes the RFC 6749 §5.1 token response (the conventions' "Token response"),
 * after `signed` is told the access token (for its event): a decision is
 * published before its answer leaves, so a client never sees an answer whose
 * event is not out yet.
 */
export function sendTokens(res: Response, context: GrantContext, issued: Issued, signed: (accessToken: string) => void): void {
  const { subject, clientId, familyId, scopes, requested, refreshToken, jkt, identity } = issued;
  const ttl = context.config.accessTokenTtlSeconds;
  const accessToken = context.signer.sign({
    subject,
    clientId,
    scopes,
    ...(familyId === undefined ? {} : { familyId }),
    ...(jkt === undefined ? {} : { jkt }),
    ...(identity === undefined ? {} : { identity }),
  });
  const body: Record<string, unknown> = {
    access_token: accessToken,
    // rule 13.4's `bearer` (docs/conventions.md), unless the client proved a key (RFC 9449 §5).
    token_type: jkt === undefined ? TOKEN_TYPE : DPOP_TOKEN_TYPE,
    // A retry answers the rotation's token: what is left of its lifetime.
    expires_in: identity === undefined ? ttl : Math.max(1, identity.iat + ttl - Math.floor(Date.now() / 1000)),
  };
  if (refreshToken !== undefined) body.refresh_token = refreshToken;
  // RFC 6749 §5.1: `scope` is required when it differs from the requested one.
  if (requested === undefined ? scopes.length > 0 : formatScope(requested) !== formatScope(scopes)) {
    body.scope = scopes.join(' ');
  }
  signed(accessToken);
  // Through the one writer of protocol answers: no entity tag, no 304.
  writeJsonAnswer(res, 200, stringifyJson(body));
}
