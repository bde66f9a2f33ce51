/**
 * Authorization server metadata (RFC 8414): the document a client fetches
 * to learn the token, revocation and introspection endpoints and what they
 * accept, instead of being configured by hand. It is built once, from the
 * token router's checked configuration, so it lists only what is enabled.
 */

import { issuerUrl } from '../protocol/issuer.js';

/** RFC 6749 §2.3.1 and RFC 7591 §2: how a client authenticates at the token and revocation endpoints. */
export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;
/** Introspection answers confidential clients only (RFC 7662 §2.1: the caller must be authorized). */
export const INTROSPECTION_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'] as const;

/** What the metadata document says; each endpoint path is absent when that endpoint is off. */
export interface MetadataInput {
  readonly issuer: string;
  readonly tokenPath: string;
  readonly revocationPath: string | undefined;
  readonly introspectionPath: string | undefined;
  readonly grantTypes: readonly string[];
  /** Whether registered clients can authenticate with a secret (a client store is given). */
  readonly confidentialClients: boolean;
  readonly scopes: ReadonlySet<string>;
  /** Where the public keys are served, when a key is asymmetric. */
  readonly jwksPath?: string;
  /** JWS algorithms of DPoP proofs, when DPoP is on. */
  readonly dpopAlgorithms?: readonly string[];
  /** Where the authorization endpoint is, when it is on. */
  readonly authorizationPath?: string;
}

/** The RFC 8414 §2 document, as a plain object ready to serialize. */
export function authorizationServerMetadata(input: MetadataInput): Record<string, unknown> {
  const issuer = issuerUrl(input.issuer) as URL;
  // Endpoints live on the issuer's origin, where the token router is mounted.
  const at = (path: string) => new URL(path, issuer.origin).href;
  const clientAuth = input.confidentialClients ? [...CLIENT_AUTH_METHODS] : ['none'];
  const document: Record<string, unknown> = {
    issuer: input.issuer,
    token_endpoint: at(input.tokenPath),
    token_endpoint_auth_methods_supported: clientAuth,
    grant_types_supported: [...input.grantTypes],
    // RFC 8414 §2 makes this member required; with no authorization endpoint no response type is supported.
    response_types_supported: [],
  };
  if (input.authorizationPath !== undefined) {
    document.authorization_endpoint = at(input.authorizationPath);
    // RFC 9700 §2.1.2: the code flow only; RFC 7636 §4.2 and RFC 9700 §2.1.1: S256 only; RFC 9207 §3: `iss` in every answer.
    document.response_types_supported = ['code'];
    document.code_challenge_methods_supported = ['S256'];
    document.authorization_response_iss_parameter_supported = true;
  }
  if (input.scopes.size > 0) document.scopes_supported = [...input.scopes];
  // RFC 8414 §2: where a resource server finds the keys that verify this issuer's tokens.
  if (input.jwksPath !== undefined) document.jwks_uri = at(input.jwksPath);
  if (input.revocationPath !== undefined) {
    document.revocation_endpoint = at(input.revocationPath);
    document.revocation_endpoint_auth_methods_supported = clientAuth;
  }
  if (input.introspectionPath !== undefined && input.confidentialClients) {
    document.introspection_endpoint = at(input.introspectionPath);
    document.introspection_endpoint_auth_methods_supported = [...INTROSPECTION_AUTH_METHODS];
  }
  if (input.dpopAlgorithms !== undefined && input.dpopAlgorithms.length > 0) {
    document.dpop_signing_alg_values_supported = [...input.dpopAlgorithms];
  }
  return document;
}
