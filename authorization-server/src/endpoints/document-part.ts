import { type DocumentPart, type DocumentTools, registerDocumentPart } from 'express-api-conventions/extend';
import { INTROSPECTION_PATH, metadataPath, REVOCATION_PATH, TOKEN_PATH } from '../protocol/paths.js';

/**
 * The token router's part of withConventions()'s document (the library's
 * registration point, docs/extend.md): the token endpoint (docs/conventions.md
 * section 13), RFC 7009 revocation, RFC 7662 introspection and RFC 8414
 * metadata, and their security schemes. Each is added only where the
 * document has nothing at that path or name. The router carries its part;
 * its options written as data are described by the maker registered below.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** What the router answers where: each path, or undefined when that endpoint is off, and DPoP. */
export interface TokenEndpoints {
  readonly token: string;
  readonly revocation: string | undefined;
  readonly introspection: string | undefined;
  readonly metadata: string | undefined;
  /** Whether the token endpoint binds tokens to a DPoP key (RFC 9449). */
  readonly dpop: boolean;
}

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
function schemes(doc: Json, token: TokenEndpoints, tools: DocumentTools): string {
  const securitySchemes = tools.objectAt(tools.objectAt(doc, 'components'), 'securitySchemes');
  const basic = addScheme(securitySchemes, 'clientBasic', {
    type: 'http',
    scheme: 'basic',
    description: 'Client authentication with the registered `client_id` and `client_secret` (RFC 6749 §2.3.1).',
  });
  addScheme(securitySchemes, 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: tools.jwtPractices,
  });
  if (token.dpop) {
    addScheme(securitySchemes, 'dpop', {
      type: 'http',
      scheme: 'DPoP',
      description: `A DPoP-bound access token and its proof (RFC 9449). ${tools.jwtPractices}`,
    });
  }
  return basic;
}

function grantSchemas(tools: DocumentTools): Json[] {
  const client = {
    client_id: value('Only when the client does not use `Authorization: Basic`.'),
    client_secret: value('With `client_id`.'),
  };
  const password = tools.addComponent('schemas', 'PasswordGrant', {
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
  const refresh = tools.addComponent('schemas', 'RefreshGrant', {
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

function tokenOperation(token: TokenEndpoints, basic: string, tools: DocumentTools): Json {
  const response = tools.addComponent('schemas', 'TokenResponse', {
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
    requestBody: { required: true, content: { [FORM]: { schema: { oneOf: grantSchemas(tools) } } } },
    responses: { '200': { description: 'Tokens issued.', content: { 'application/json': { schema: response } } } },
  };
}

function tokenForm(tools: DocumentTools): Json {
  return tools.addComponent('schemas', 'TokenParameter', {
    type: 'object',
    required: ['token'],
    properties: {
      token: value('The token; an empty one is refused with 400.'),
      token_type_hint: value(TYPE_HINT, 0),
    },
  });
}

function revocationOperation(basic: string, tools: DocumentTools): Json {
  return {
    operationId: 'revokeToken',
    summary: 'Revoke a refresh token or an access token (RFC 7009)',
    description: `200 for an unknown token too (RFC 7009 §2.2). ${REPEATED}`,
    security: [{}, { [basic]: [] }],
    requestBody: { required: true, content: { [FORM]: { schema: tokenForm(tools) } } },
    responses: { '200': { description: 'Revoked, or unknown.' } },
  };
}

function introspectionOperation(basic: string, tools: DocumentTools): Json {
  const answer = tools.addComponent('schemas', 'Introspection', {
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
    requestBody: { required: true, content: { [FORM]: { schema: tokenForm(tools) } } },
    responses: {
      '200': {
        description: '`{ "active": false }`, or the claims of an active token.',
        content: { 'application/json': { schema: answer } },
      },
    },
  };
}

function metadataOperation(token: TokenEndpoints): Json {
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
function describeTokenService(doc: Json, token: TokenEndpoints, tools: DocumentTools): void {
  const basic = schemes(doc, token, tools);
  const paths = tools.objectAt(doc, 'paths');
  const add = (path: string | undefined, method: string, make: () => Json) => {
    if (path === undefined) return;
    const item = tools.objectAt(paths, path);
    if (item[method] === undefined) item[method] = make();
  };
  add(token.token, 'post', () => tokenOperation(token, basic, tools));
  add(token.revocation, 'post', () => revocationOperation(basic, tools));
  add(token.introspection, 'post', () => introspectionOperation(basic, tools));
  add(token.metadata, 'get', () => metadataOperation(token));
}

/** The document part of a token router with these endpoints: its operations, and RFC 6749's error shape on its form endpoints. */
export function tokenServiceDocumentPart(token: TokenEndpoints): DocumentPart {
  const oauthErrorPaths = [token.token, token.revocation, token.introspection].filter((path) => path !== undefined);
  return Object.freeze({
    oauthErrorPaths: Object.freeze(oauthErrorPaths),
    describe: (doc: Json, tools: DocumentTools) => describeTokenService(doc, token, tools),
  });
}

/** The path of an endpoint the token router serves: its option, its default, or undefined when `false`. */
const endpointPath = (value: unknown, fallback: string): string | undefined =>
  value === false ? undefined : typeof value === 'string' ? value : fallback;

/** The metadata path of an issuer (RFC 8414 §3.1), or undefined when no metadata is served. */
function metadataPathOf(options: Readonly<Json>): string | undefined {
  if (options.metadata === false || typeof options.issuer !== 'string') return undefined;
  try {
    return metadataPath(new URL(options.issuer));
  } catch {
    return undefined;
  }
}

/**
 * The endpoints tokenRouter() would serve with these options written as
 * data (a document's options are JSON: examples/server/openapi.options.json),
 * with the router's own defaults.
 */
export function endpointsOfOptions(options: Readonly<Json>): TokenEndpoints {
  return {
    token: typeof options.path === 'string' ? options.path : TOKEN_PATH,
    revocation: endpointPath(options.revocationPath, REVOCATION_PATH),
    introspection: endpointPath(options.introspectionPath, INTROSPECTION_PATH),
    metadata: metadataPathOf(options),
    dpop: options.dpop !== undefined && options.dpop !== false,
  };
}

// withConventions(document, { tokenRouter: { issuer, … } }) describes the router from its options, once this package is loaded.
registerDocumentPart('tokenRouter', (options) => tokenServiceDocumentPart(endpointsOfOptions(options)));
