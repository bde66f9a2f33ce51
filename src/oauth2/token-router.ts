import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { checkBoolean, checkInteger, checkString, invalidOption, readOptions } from '../config/options.js';
import { isApiError } from '../errors/api-error.js';
import { JSON_CONTENT_TYPE } from '../json/json-responses.js';
import { stringifyJson } from '../json/serialize.js';
import { AccessTokenSigner } from './access-tokens.js';
import { type BruteForceOptions, LoginGuard } from './brute-force.js';
import { checkAudience, checkRealm } from './checks.js';
import { clientAuthenticator, type Params } from './client-auth.js';
import { type AccessTokenKey, readKeys } from './keys.js';
import { BCRYPT_COST_RANGE, DEFAULT_BCRYPT_COST, defaultPasswordHasher, type PasswordHasher } from './password-hasher.js';
import { checkScopeList, formatScope, parseScope } from './scope.js';
import {
  type ClientRecord,
  type ClientStore,
  GRANT_TYPES,
  type GrantType,
  hashRefreshToken,
  MemoryRefreshTokenStore,
  newRefreshToken,
  normalizeUsername,
  type RefreshTokenStore,
  type UserStore,
} from './stores.js';
import { TOKEN_CACHE_CONTROL, tokenError } from './token-errors.js';

/** SPEC.md "Token endpoint": "POST `{base_url}/v1/oauth2/token`". */
export const TOKEN_PATH = '/v1/oauth2/token';
/** SPEC.md "Token endpoint": "Request content type `application/x-www-form-urlencoded`, UTF-8". */
export const TOKEN_REQUEST_TYPE = 'application/x-www-form-urlencoded';
/** Default access-token lifetime, seconds (the reference server's `ACCESS_TOKEN_TTL`). */
export const DEFAULT_ACCESS_TOKEN_TTL = 3600;
/** Default refresh-token lifetime, seconds: 14 days, renewed by every rotation. */
export const DEFAULT_REFRESH_TOKEN_TTL = 1_209_600;
/** SPEC.md "Token response": `token_type` "Value `bearer`". */
export const TOKEN_TYPE = 'bearer';

/** Longest username and password read; bcrypt itself reads only the first 72 bytes of a password. */
const MAX_USERNAME_LENGTH = 256;
const MAX_PASSWORD_LENGTH = 1024;

export interface TokenRouterOptions {
  /** Access-token keys; the first signs, all verify (rotation by `kid`). Required. */
  keys: readonly AccessTokenKey[];
  /** The `iss` claim. Required. */
  issuer: string;
  /** The `aud` claim: the API(s) the tokens are for. Required. */
  audience: string | readonly string[];
  /** Where users and their bcrypt hashes are found. Required. */
  users: UserStore;
  /** Registered applications. Default: none registered (any client credentials are refused). */
  clients?: ClientStore;
  /** Refresh-token families. Default: a MemoryRefreshTokenStore (one process only). */
  refreshTokens?: RefreshTokenStore;
  /** Path of the endpoint. Default: `'/v1/oauth2/token'`. */
  path?: string;
  /** Access-token lifetime in seconds, the `expires_in` value. Default: 3600. */
  accessTokenTtl?: number;
  /** Refresh-token lifetime in seconds, renewed by every rotation. Default: 1209600 (14 days). */
  refreshTokenTtl?: number;
  /** Every scope the service knows. Default: `[]` (no scopes). */
  scopes?: readonly string[];
  /** Refuse requests without client authentication. Default: `false` (SPEC.md: client authentication is optional). */
  requireClient?: boolean;
  /** The worker pool that verifies passwords. Default: the shared pool of hashPassword(). */
  passwordHasher?: PasswordHasher;
  /**
   * bcrypt cost of the dummy hash an unknown username is checked against, so
   * that it costs as much as a wrong password: use your users' cost. Default: 12.
   */
  passwordCost?: number;
  /** Brute-force guard of the password grant, or `false` to turn it off. Default: on, with its defaults. */
  bruteForce?: BruteForceOptions | false;
  /** Realm of the `WWW-Authenticate: Basic` challenge. Default: `'api'`. */
  realm?: string;
}

const OPTION_NAMES = [
  'keys',
  'issuer',
  'audience',
  'users',
  'clients',
  'refreshTokens',
  'path',
  'accessTokenTtl',
  'refreshTokenTtl',
  'scopes',
  'requireClient',
  'passwordHasher',
  'passwordCost',
  'bruteForce',
  'realm',
] as const;

const FACTORY = 'tokenRouter';

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

const hasMethods = (value: unknown, methods: readonly string[]): boolean =>
  typeof value === 'object' &&
  value !== null &&
  methods.every((name) => typeof (value as Record<string, unknown>)[name] === 'function');

/**
 * The token endpoint (SPEC.md "Token endpoint" and "Authentication"; RFC
 * 6749 §4.3 and §6; RFC 9700): `app.use(tokenRouter({ keys, issuer,
 * audience, users, clients }))`. Answers the password and refresh_token
 * grants with JWT access tokens and rotating opaque refresh tokens. Every
 * error is an RFC 6749 §5.2 body rendered by errorHandler().
 */
export function tokenRouter(options: Readonly<TokenRouterOptions>): Router {
  const given = readOptions<TokenRouterOptions>(FACTORY, options, OPTION_NAMES);
  const keys = readKeys(FACTORY, given.keys, true);
  const issuer = checkString(FACTORY, 'issuer', given.issuer);
  const audience = checkAudience(FACTORY, given.audience);
  if (!hasMethods(given.users, ['findByUsername'])) invalidOption(FACTORY, 'users', given.users, 'a UserStore (findByUsername)');
  const users = given.users as UserStore;
  if (given.clients !== undefined && !hasMethods(given.clients, ['findById'])) {
    invalidOption(FACTORY, 'clients', given.clients, 'a ClientStore (findById)');
  }
  const clients = given.clients;
  const refreshMethods = ['create', 'find', 'rotate', 'revokeByTokenHash', 'revokeFamily'];
  if (given.refreshTokens !== undefined && !hasMethods(given.refreshTokens, refreshMethods)) {
    invalidOption(FACTORY, 'refreshTokens', given.refreshTokens, `a RefreshTokenStore (${refreshMethods.join(', ')})`);
  }
  const refreshTokens = given.refreshTokens ?? new MemoryRefreshTokenStore();
  const path = given.path === undefined ? TOKEN_PATH : checkString(FACTORY, 'path', given.path);
  if (!path.startsWith('/')) invalidOption(FACTORY, 'path', path, "a path starting with '/'");
  const accessTokenTtl =
    given.accessTokenTtl === undefined
      ? DEFAULT_ACCESS_TOKEN_TTL
      : checkInteger(FACTORY, 'accessTokenTtl', given.accessTokenTtl, { min: 1, max: 86_400 });
  const refreshTtlMs =
    (given.refreshTokenTtl === undefined
      ? DEFAULT_REFRESH_TOKEN_TTL
      : checkInteger(FACTORY, 'refreshTokenTtl', given.refreshTokenTtl, { min: 60, max: 31_536_000 })) * 1000;
  const knownScopes = new Set(given.scopes === undefined ? [] : checkScopeList(FACTORY, 'scopes', given.scopes));
  const requireClient = given.requireClient === undefined ? false : checkBoolean(FACTORY, 'requireClient', given.requireClient);
  if (given.passwordHasher !== undefined && !hasMethods(given.passwordHasher, ['hash', 'verify'])) {
    invalidOption(FACTORY, 'passwordHasher', given.passwordHasher, 'a PasswordHasher');
  }
  const hasher = given.passwordHasher;
  const passwordCost =
    given.passwordCost === undefined
      ? DEFAULT_BCRYPT_COST
      : checkInteger(FACTORY, 'passwordCost', given.passwordCost, BCRYPT_COST_RANGE);
  const guard = given.bruteForce === false ? undefined : new LoginGuard(given.bruteForce);
  const realm = given.realm === undefined ? 'api' : checkRealm(FACTORY, given.realm);

  const signer = new AccessTokenSigner(keys[0] as (typeof keys)[number], issuer, audience, accessTokenTtl);
  const authenticateClient = clientAuthenticator(clients, requireClient, realm);
  const parseForm = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 16, type: () => true });
  const pool = (): PasswordHasher => hasher ?? defaultPasswordHasher();

  // The dummy hash an unknown username is compared against: made once, at
  // the users' cost, so "no such user" takes as long as "wrong password".
  // Started now, so that not even the first unknown username is slower.
  let dummyHash: Promise<string> | undefined;
  const dummy = (): Promise<string> => {
    if (!dummyHash) {
      dummyHash = pool().hash(newRefreshToken(), passwordCost);
      dummyHash.catch(() => {
        dummyHash = undefined;
      });
    }
    return dummyHash;
  };
  dummy();

  const readParams = (body: unknown): Params => {
    if (typeof body !== 'object' || body === null) return {};
    const params: Record<string, string> = {};
    for (const [name, value] of Object.entries(body)) {
      // RFC 6749 §3.2: "Request and response parameters MUST NOT be included more than once."
      if (typeof value !== 'string') throw tokenError('invalid_request', `The parameter ${name} is repeated or malformed.`);
      // RFC 6749 §3.1: parameters sent without a value are treated as omitted.
      if (value !== '') params[name] = value;
    }
    return params;
  };

  /** The scopes a client may have: the known ones, narrowed by the client's own list. */
  const allowedFor = (client: ClientRecord | undefined): ReadonlySet<string> =>
    client?.scopes === undefined ? knownScopes : new Set(client.scopes.filter((scope) => knownScopes.has(scope)));

  function requestedScopes(params: Params): readonly string[] | undefined {
    if (params.scope === undefined) return undefined;
    const scopes = parseScope(params.scope);
    if (!scopes) throw tokenError('invalid_scope', 'The scope parameter is malformed.');
    return scopes;
  }

  function issue(
    res: Response,
    subject: string,
    clientId: string | undefined,
    scopes: readonly string[],
    requested: readonly string[] | undefined,
    refreshToken: string,
  ): void {
    const body: Record<string, unknown> = {
      access_token: signer.sign({ subject, clientId, scopes }),
      token_type: TOKEN_TYPE,
      expires_in: accessTokenTtl,
      refresh_token: refreshToken,
    };
    // RFC 6749 §5.1: `scope` is required when it differs from the requested one.
    if (requested === undefined ? scopes.length > 0 : formatScope(requested) !== formatScope(scopes))
      body.scope = scopes.join(' ');
    const text = stringifyJson(body);
    res.statusCode = 200;
    res.setHeader('Content-Type', JSON_CONTENT_TYPE);
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(text);
  }

  async function passwordGrant(req: Request, res: Response, params: Params, client: ClientRecord | undefined): Promise<void> {
    const { username, password } = params;
    if (username === undefined || password === undefined) {
      throw tokenError('invalid_request', 'The password grant needs username and password.');
    }
    if (username.length > MAX_USERNAME_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
      throw tokenError('invalid_request', 'The username or password is too long.');
    }
    const requested = requestedScopes(params);
    const allowed = allowedFor(client);
    if (requested?.some((scope) => !allowed.has(scope))) throw tokenError('invalid_scope', 'The requested scope is not allowed.');
    const canonical = normalizeUsername(username);
    await guard?.admit(canonical, req.ip ?? req.socket.remoteAddress);
    const user = await users.findByUsername(canonical);
    // An unknown user is checked against the dummy hash: same cost, same answer.
    const matches = await pool().verify(password, user?.passwordHash ?? (await dummy()));
    if (!user || !matches) throw tokenError('invalid_grant', 'The username or password is not correct.');
    await guard?.succeeded(canonical);
    const userScopes = user.scopes === undefined ? undefined : new Set(user.scopes);
    if (requested && userScopes && requested.some((scope) => !userScopes.has(scope))) {
      throw tokenError('invalid_scope', 'The requested scope is not allowed for this user.');
    }
    const granted = requested ?? [...allowed].filter((scope) => userScopes === undefined || userScopes.has(scope));
    const refreshToken = newRefreshToken();
    await refreshTokens.create(
      { familyId: randomUUID(), subject: user.subject, clientId: client?.id, scopes: granted },
      hashRefreshToken(refreshToken),
      Date.now() + refreshTtlMs,
    );
    issue(res, user.subject, client?.id, granted, requested, refreshToken);
  }

  async function refreshGrant(res: Response, params: Params, client: ClientRecord | undefined): Promise<void> {
    const presented = params.refresh_token;
    if (presented === undefined) throw tokenError('invalid_request', 'The refresh_token grant needs refresh_token.');
    const requested = requestedScopes(params);
    const tokenHash = hashRefreshToken(presented);
    const family = await refreshTokens.find(tokenHash);
    if (!family) throw tokenError('invalid_grant', 'The refresh token is not valid.');
    // RFC 6749 §6: a token issued to a client is only refreshed by that client.
    if (family.clientId !== client?.id) throw tokenError('invalid_grant', 'The refresh token was issued to another client.');
    // RFC 6749 §6: the scope may narrow, never widen.
    if (requested?.some((scope) => !family.scopes.includes(scope))) {
      throw tokenError('invalid_scope', 'The requested scope exceeds the scope originally granted.');
    }
    const refreshToken = newRefreshToken();
    const outcome = await refreshTokens.rotate(tokenHash, hashRefreshToken(refreshToken), Date.now() + refreshTtlMs);
    if (outcome.status === 'reused') {
      throw tokenError('invalid_grant', 'The refresh token was already used; its token family is revoked.');
    }
    if (outcome.status !== 'rotated') throw tokenError('invalid_grant', 'The refresh token is not valid.');
    issue(res, outcome.family.subject, outcome.family.clientId, requested ?? outcome.family.scopes, requested, refreshToken);
  }

  async function handle(req: Request, res: Response): Promise<void> {
    const contentType = req.headers['content-type'];
    if (contentType === undefined || !req.is(TOKEN_REQUEST_TYPE)) {
      throw tokenError('invalid_request', `The request body must be ${TOKEN_REQUEST_TYPE}.`);
    }
    const charset = CHARSET.exec(contentType)?.[1];
    if (charset !== undefined && charset.toLowerCase() !== 'utf-8') {
      throw tokenError('invalid_request', 'The request body must be encoded in UTF-8.');
    }
    const params = readParams(await formBody(req, res));
    const client = await authenticateClient(req.headers.authorization, params);
    const grantType = params.grant_type;
    if (grantType === undefined) throw tokenError('invalid_request', 'The grant_type parameter is missing.');
    if (!(GRANT_TYPES as readonly string[]).includes(grantType)) {
      throw tokenError('unsupported_grant_type', `The grant type ${JSON.stringify(grantType.slice(0, 64))} is not supported.`);
    }
    if (client?.grants !== undefined && !client.grants.includes(grantType as GrantType)) {
      throw tokenError('unauthorized_client', `This client may not use the ${grantType} grant.`);
    }
    if (grantType === 'password') await passwordGrant(req, res, params, client);
    else await refreshGrant(res, params, client);
  }

  function formBody(req: Request, res: Response): Promise<unknown> {
    // A body parsed earlier (conventions()'s parsers) is reused; body-parser
    // marks it with `_body`. Otherwise the router's own bounded parser runs.
    if ((req as Request & { _body?: boolean })._body) return Promise.resolve(req.body);
    return new Promise((resolve, reject) => {
      parseForm(req, res, (error?: unknown) => {
        if (error) reject(tokenError('invalid_request', 'The request body could not be read as a form.', {}, error));
        else resolve(req.body);
      });
    });
  }

  const router = express.Router();
  router.post(path, function tokenEndpointMiddleware(req: Request, res: Response, next: NextFunction) {
    // SPEC.md "Prevent cache exposure": on every token-endpoint response, success or error.
    res.setHeader('Cache-Control', TOKEN_CACHE_CONTROL);
    handle(req, res).catch((error: unknown) => {
      next(isApiError(error) ? error : tokenError('server_error', 'The token endpoint failed; try again later.', {}, error));
    });
  });
  return router;
}

/**
 * Logout: revokes the whole family of a refresh token (RFC 7009's effect),
 * so neither it nor any token rotated from it works again.
 */
export function revokeRefreshToken(store: RefreshTokenStore, refreshToken: string): Promise<boolean> {
  return store.revokeByTokenHash(hashRefreshToken(refreshToken));
}
