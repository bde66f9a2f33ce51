import { addComponent, child, isObject, type Json } from './document.js';
import type { Plan, TokenServicePlan } from './plan.js';

/**
 * The token service's operations, as tokenRouter() answers them: the token
 * endpoint (docs/conventions.md section 13), RFC 7009 revocation, RFC 7662
 * introspection and RFC 8414 metadata; and its security schemes. Each is
 * added only where the document has nothing at that path or name.
 */

/** Longest form value the schemas allow: a JWT or an opaque token fits well inside it. */
const VALUE_MAX = 4096;
const value = (description: string, minLength = 1): Json => ({ type: 'string', minLength, maxLength: VALUE_MAX, description });
const oneOf = (...values: string[]): Json => ({
  type: 'string',
  enum: values,
  maxLength: Math.max(...values.map((v) => v.length)),
});
/** RFC 7009 §2.1, RFC 7662 §2.1: a hint the server may ignore, so other values are tolerated, not refused. */
const TYPE_HINT =
  "A hint of the token's type: `access_token` or `refresh_token`. The token is found either way, and any other value is tolerated (RFC 7009 §2.1, RFC 7662 §2.1).";
const FORM = 'application/x-www-form-urlencoded';
const REPEATED = 'Each parameter at most once: a repeated one is refused with 400 `invalid_request` (RFC 6749 §3.2).';

/** RFC 8725 (JWT Best Current Practices), as the OWASP ruleset looks for it (`RFC8725`). */
export const JWT_PRACTICES =
  'Access tokens are JWTs (RFC 9068) issued and checked as RFC8725 (JSON Web Token Best Current Practices) says: one algorithm per key, `typ` `at+jwt`, issuer and audience checked, short lifetime.';

/** Adds a security scheme under `name` unless the document has one of the same HTTP scheme already. */
function addScheme(securitySchemes: Json, name: string, scheme: Json): string {
  const same = Object.entries(securitySchemes).find(
    (existing) =>
      isObject(existing) &&
      existing.type === 'http' &&
      String(existing.scheme).toLowerCase() === String(scheme.scheme).toLowerCase(),
  );
  if (same) return same[0];
  securitySchemes[name] ??= scheme;
  return name;
}

/** Adds the schemes the token service uses; returns the name of the client's HTTP Basic scheme. */
function schemes(doc: Json, token: TokenServicePlan): string {
  const securitySchemes = child(child(doc, 'components'), 'securitySchemes');
  const basic = addScheme(securitySchemes, 'clientBasic', {
    type: 'http',
    scheme: 'basic',
    description: 'Client authentication with the registered `client_id` and `client_secret` (RFC 6749 §2.3.1).',
  });
  addScheme(securitySchemes, 'bearerAuth', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: JWT_PRACTICES });
  if (token.dpop) {
    addScheme(securitySchemes, 'dpop', {
      type: 'http',
      scheme: 'DPoP',
      description: `A DPoP-bound access token and its proof (RFC 9449). ${JWT_PRACTICES}`,
    });
  }
  return basic;
}

function grantSchemas(doc: Json): Json[] {
  const client = {
    client_id: value('Only when the client does not use `Authorization: Basic`.'),
    client_secret: value('With `client_id`.'),
  };
  const password = addComponent(doc, 'schemas', 'PasswordGrant', {
    type: 'object',
    required: ['grant_type', 'username', 'password'],
    properties: {
      grant_type: oneOf('password'),
      username: value('The user name.'),
      password: value('The password.'),
      scope: value('Access scope.'),
      ...client,
    },
  });
  const refresh = addComponent(doc, 'schemas', 'RefreshGrant', {
    type: 'object',
    required: ['grant_type', 'refresh_token'],
    properties: {
      grant_type: oneOf('refresh_token'),
      refresh_token: value('The refresh token received earlier.'),
      scope: value('Access scope.'),
      ...client,
    },
  });
  return [password, refresh];
}

function tokenOperation(doc: Json, token: TokenServicePlan, basic: string): Json {
  const response = addComponent(doc, 'schemas', 'TokenResponse', {
    type: 'object',
    required: ['access_token', 'token_type', 'expires_in', 'refresh_token'],
    properties: {
      access_token: value('The access token (a JWT).'),
      token_type: oneOf(...(token.dpop ? ['bearer', 'DPoP'] : ['bearer'])),
      expires_in: {
        type: 'integer',
        format: 'int32',
        minimum: 1,
        maximum: 86400,
        description: 'Lifetime of the access token, seconds.',
      },
      refresh_token: value('Used to obtain a new access token.'),
      scope: value('The granted scope.', 0),
    },
  });
  return {
    operationId: 'issueToken',
    summary: 'Issue an access token and a refresh token',
    description: `Password and refresh_token grants. The client authenticates optionally, with \`Authorization: Basic\` (RFC 6749 §2.3.1) or in the body, never both. ${REPEATED}${token.dpop ? ' A request with a `DPoP` proof gets a token bound to its key (`token_type` `DPoP`); one without gets a bearer token.' : ''}`,
    security: [{}, { [basic]: [] }],
    ...(token.dpop
      ? {
          parameters: [
            {
              name: 'DPoP',
              in: 'header',
              required: false,
              description: 'A DPoP proof JWT (RFC 9449 §4).',
              schema: value('The proof.'),
            },
          ],
        }
      : {}),
    requestBody: { required: true, content: { [FORM]: { schema: { oneOf: grantSchemas(doc) } } } },
    responses: { '200': { description: 'Tokens issued.', content: { 'application/json': { schema: response } } } },
  };
}

function tokenForm(doc: Json): Json {
  return addComponent(doc, 'schemas', 'TokenParameter', {
    type: 'object',
    required: ['token'],
    properties: {
      token: value('The token; an empty one is refused with 400.'),
      token_type_hint: value(TYPE_HINT, 0),
    },
  });
}

function revocationOperation(doc: Json, basic: string): Json {
  return {
    operationId: 'revokeToken',
    summary: 'Revoke a refresh token or an access token (RFC 7009)',
    description: `200 for an unknown token too (RFC 7009 §2.2). ${REPEATED}`,
    security: [{}, { [basic]: [] }],
    requestBody: { required: true, content: { [FORM]: { schema: tokenForm(doc) } } },
    responses: { '200': { description: 'Revoked, or unknown.' } },
  };
}

function introspectionOperation(doc: Json, basic: string): Json {
  const answer = addComponent(doc, 'schemas', 'Introspection', {
    type: 'object',
    required: ['active'],
    properties: {
      active: { type: 'boolean' },
      scope: value('Scopes of the token.', 0),
      client_id: value('The client the token was issued to.'),
      token_type: oneOf('bearer', 'DPoP'),
      sub: value('The subject.'),
      exp: { type: 'integer', format: 'int64', minimum: 0, maximum: 253402300799 },
      iat: { type: 'integer', format: 'int64', minimum: 0, maximum: 253402300799 },
    },
  });
  return {
    operationId: 'introspectToken',
    summary: 'Introspect a token (RFC 7662)',
    description: `Confidential clients only. ${REPEATED}`,
    security: [{ [basic]: [] }],
    requestBody: { required: true, content: { [FORM]: { schema: tokenForm(doc) } } },
    responses: {
      '200': {
        description: '`{ "active": false }`, or the claims of an active token.',
        content: { 'application/json': { schema: answer } },
      },
    },
  };
}

function metadataOperation(token: TokenServicePlan): Json {
  return {
    operationId: 'authorizationServerMetadata',
    summary: 'Authorization server metadata (RFC 8414)',
    description: `The token, revocation and introspection endpoints and what they accept${token.dpop ? ', and the DPoP proof algorithms (`dpop_signing_alg_values_supported`)' : ''}.`,
    security: [],
    responses: {
      '200': {
        description: 'The metadata document.',
        content: {
          'application/json': { schema: { type: 'object', required: ['issuer', 'token_endpoint'], maxProperties: 32 } },
        },
      },
    },
  };
}

/** Adds the token service's paths and schemes the document does not have yet. */
export function addTokenService(doc: Json, _plan: Plan, token: TokenServicePlan): void {
  const basic = schemes(doc, token);
  const paths = child(doc, 'paths');
  const add = (path: string | undefined, method: string, make: () => Json) => {
    if (path === undefined) return;
    const item = child(paths, path);
    if (item[method] === undefined) item[method] = make();
  };
  add(token.token, 'post', () => tokenOperation(doc, token, basic));
  add(token.revocation, 'post', () => revocationOperation(doc, basic));
  add(token.introspection, 'post', () => introspectionOperation(doc, basic));
  add(token.metadata, 'get', () => metadataOperation(token));
}

/** States RFC 8725 on every JWT bearer scheme that does not yet (OWASP API2: JWT best practices). */
export function stateJwtPractices(doc: Json): void {
  const securitySchemes = isObject(doc.components) ? doc.components.securitySchemes : undefined;
  if (!isObject(securitySchemes)) return;
  for (const scheme of Object.values(securitySchemes)) {
    if (!isObject(scheme) || scheme.type !== 'http' || String(scheme.bearerFormat).toLowerCase() !== 'jwt') continue;
    const said = typeof scheme.description === 'string' ? scheme.description : '';
    if (!said.includes('RFC8725')) scheme.description = said === '' ? JWT_PRACTICES : `${said}\n\n${JWT_PRACTICES}`;
  }
}
