/**
 * The token service's paths: its endpoints' defaults and the metadata's
 * well-known path. They belong to this package alone: the library knows a
 * token router's paths only from the router (its document part), never by
 * name (docs/extend.md).
 */

/** The conventions' "Token endpoint": "POST `{base_url}/v1/oauth2/token`". */
export const TOKEN_PATH = '/v1/oauth2/token';
/** The RFC 7009 revocation endpoint: a plural noun beside the token endpoint (the conventions' path rule 3). */
export const REVOCATION_PATH = '/v1/oauth2/revocations';
/** The RFC 7662 introspection endpoint: a plural noun beside the token endpoint (the conventions' path rule 3). */
export const INTROSPECTION_PATH = '/v1/oauth2/introspections';

/** The token service's public keys (RFC 7517 JWK Set), the metadata's `jwks_uri`: a plural noun beside the token endpoint. */
export const JWKS_PATH = '/v1/oauth2/keys';

/** RFC 8414 §3: the well-known URI suffix registered for OAuth 2.0 authorization servers. */
export const METADATA_WELL_KNOWN = '/.well-known/oauth-authorization-server';

/**
 * RFC 8414 §3.1: the well-known suffix goes between the host and the
 * issuer's path: `https://a.example/tenant` is described at
 * `/.well-known/oauth-authorization-server/tenant`.
 */
export function metadataPath(issuer: URL): string {
  const path = issuer.pathname === '/' ? '' : issuer.pathname.replace(/\/$/, '');
  return `${METADATA_WELL_KNOWN}${path}`;
}
