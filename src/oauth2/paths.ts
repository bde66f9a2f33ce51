/**
 * The token service's default paths: a leaf that loads nothing, so that
 * express-api-conventions/openapi states them without loading the token
 * service (jsonwebtoken, bcryptjs), and the token router and the token-path
 * error shape read the same values.
 */

/** The conventions' "Token endpoint": "POST `{base_url}/v1/oauth2/token`". */
export const TOKEN_PATH = '/v1/oauth2/token';
/** The RFC 7009 revocation endpoint: a plural noun beside the token endpoint (the conventions' path rule 3). */
export const REVOCATION_PATH = '/v1/oauth2/revocations';
/** The RFC 7662 introspection endpoint: a plural noun beside the token endpoint (the conventions' path rule 3). */
export const INTROSPECTION_PATH = '/v1/oauth2/introspections';
