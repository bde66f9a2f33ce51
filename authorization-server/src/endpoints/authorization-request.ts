import { parseScope } from 'express-api-conventions/extend';
import type { ClientStore } from 'express-api-conventions/oauth2';
import { isCodeChallenge, PKCE_METHOD } from '../grants/pkce.js';
import { allowedFor } from '../grants/token-response.js';
import { type RegisteredClient, registeredClient } from '../stores/client-registration.js';
import { chooseRedirectUri } from './redirect-uris.js';

/**
 * The authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3, RFC 9449 §10),
 * checked in the order RFC 6749 §4.1.2.1 sets: while the client or its
 * redirect URI is in doubt, an error is the user's to read and nothing goes
 * to the redirect URI; once both are sure, every other error goes back to
 * the client there.
 */

/** A registered client as the authorization endpoint reads it. */
export type AuthorizationClient = RegisteredClient;

/** A request that passed every check. */
export interface AuthorizationRequest {
  readonly client: AuthorizationClient;
  readonly redirectUri: string;
  readonly state: string | undefined;
  readonly scopes: readonly string[];
  /** The scopes as the request named them; undefined when it named none. */
  readonly requested: readonly string[] | undefined;
  readonly codeChallenge: string;
  /** `dpop_jkt` (RFC 9449 §10): the key the tokens will be bound to. */
  readonly jkt: string | undefined;
}

/** A refused request: to the client's redirect URI when `redirectUri` is set, else to the user. */
export class AuthorizationError extends Error {
  readonly error: string;
  readonly redirectUri: string | undefined;
  readonly state: string | undefined;

  constructor(error: string, description: string, to?: { redirectUri: string; state: string | undefined }) {
    super(description);
    this.name = 'AuthorizationError';
    this.error = error;
    this.redirectUri = to?.redirectUri;
    this.state = to?.state;
  }
}

/** What checking a request reads besides the request. */
export interface AuthorizationRequestContext {
  readonly clients: ClientStore | undefined;
  readonly scopes: ReadonlySet<string>;
  readonly dpop: boolean;
}

const JKT = /^[A-Za-z0-9_-]{43}$/;

/** The query's parameters, each once; the names that came more than once. */
function readQuery(query: string): { params: Map<string, string>; repeated: Set<string> } {
  const params = new Map<string, string>();
  const repeated = new Set<string>();
  for (const [name, value] of new URLSearchParams(query)) {
    if (params.has(name)) repeated.add(name);
    // RFC 6749 §3.1: a parameter sent without a value is treated as omitted.
    else if (value !== '') params.set(name, value);
  }
  return { params, repeated };
}

/** The client and its redirect URI, or an error for the user (never a redirect). */
async function clientAndRedirect(
  context: AuthorizationRequestContext,
  params: Map<string, string>,
  repeated: Set<string>,
): Promise<{ client: AuthorizationClient; redirectUri: string }> {
  const clientId = params.get('client_id');
  if (clientId === undefined || repeated.has('client_id')) {
    throw new AuthorizationError('invalid_request', 'The request names no client (client_id), or names it twice.');
  }
  const record = await context.clients?.findById(clientId);
  if (record === undefined) throw new AuthorizationError('invalid_client', 'The client is not registered.');
  const client = registeredClient(record);
  if (client.blocked) throw new AuthorizationError('unauthorized_client', 'This client may not ask for authorization.');
  const redirectUri = repeated.has('redirect_uri')
    ? undefined
    : chooseRedirectUri(client.redirectUris ?? [], params.get('redirect_uri'));
  if (redirectUri === undefined) {
    throw new AuthorizationError('invalid_request', 'The redirect URI is missing or is not one registered for this client.');
  }
  return { client, redirectUri };
}

/** Checks an authorization request, given as its query string; throws AuthorizationError. */
export async function readAuthorizationRequest(
  context: AuthorizationRequestContext,
  query: string,
): Promise<AuthorizationRequest> {
  const { params, repeated } = readQuery(query);
  const { client, redirectUri } = await clientAndRedirect(context, params, repeated);
  const state = repeated.has('state') ? undefined : params.get('state');
  const refuse = (error: string, description: string) => new AuthorizationError(error, description, { redirectUri, state });
  if (repeated.size > 0) throw refuse('invalid_request', 'A parameter of the request is repeated.');
  const responseType = params.get('response_type');
  if (responseType === undefined) throw refuse('invalid_request', 'The request has no response_type.');
  // RFC 9700 §2.1.2: the implicit grant (`token`) and hybrid types are not offered.
  if (responseType !== 'code') throw refuse('unsupported_response_type', 'The only response_type supported is code.');
  if (!client.grants.includes('authorization_code')) {
    throw refuse('unauthorized_client', 'This client may not use the authorization code grant.');
  }
  const codeChallenge = params.get('code_challenge');
  if (codeChallenge === undefined)
    throw refuse('invalid_request', 'PKCE is required: send code_challenge and code_challenge_method S256.');
  // RFC 7636 §4.3: an absent method means plain, which is refused like any other.
  if (params.get('code_challenge_method') !== PKCE_METHOD) {
    throw refuse('invalid_request', 'code_challenge_method must be S256; plain is not accepted.');
  }
  if (!isCodeChallenge(codeChallenge)) throw refuse('invalid_request', 'code_challenge must be 43 base64url characters.');
  const scope = params.get('scope');
  const requested = scope === undefined ? undefined : parseScope(scope);
  if (requested === undefined && scope !== undefined) throw refuse('invalid_scope', 'The scope parameter is malformed.');
  const allowed = allowedFor(context.scopes, client);
  if (requested?.some((name) => !allowed.has(name))) throw refuse('invalid_scope', 'The requested scope is not allowed.');
  const jkt = params.get('dpop_jkt');
  if (jkt !== undefined && (!context.dpop || !JKT.test(jkt))) {
    throw refuse('invalid_request', context.dpop ? 'dpop_jkt must be a JWK SHA-256 thumbprint.' : 'DPoP is not supported.');
  }
  return { client, redirectUri, state, scopes: requested ?? [...allowed], requested: requested ?? undefined, codeChallenge, jkt };
}
