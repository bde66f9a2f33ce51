import { checkBoolean, checkScopeList, checkString, hashClientSecret, invalidOption } from 'express-api-conventions/extend';
import type { ClientRecord, ClientStore } from 'express-api-conventions/oauth2';

/**
 * A client's registration (RFC 6749 §2): what it is and what it may do. The
 * token endpoint reads the grants, the authorization endpoint the redirect
 * URIs, the consent step the party and the name. Every store checks a
 * registration the same way (registerClient()) and reads records written
 * before these fields existed the same way (registeredClient()).
 */

/** RFC 6749 §2.1: a confidential client can keep a secret, a public one (a browser or mobile app) cannot. */
export const CLIENT_TYPES = ['public', 'confidential'] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

/** A registered client, as the authorization server's endpoints read it. */
export interface RegisteredClient extends ClientRecord {
  readonly type: ClientType;
  /** A first-party client (the service's own application) skips the consent step. Default: `false`. */
  readonly firstParty?: boolean;
  /** The name the consent page shows. */
  readonly name?: string;
  /** The `grant_type` values it may use (RFC 6749 §4; an absolute URI for an extension grant, §4.5). */
  readonly grants: readonly string[];
  /** Where the authorization endpoint may send it back: absolute URIs, matched exactly (RFC 9700 §4.1.3). */
  readonly redirectUris?: readonly string[];
  /** The scopes it may be given; absent: every scope the service knows. */
  readonly scopes?: readonly string[];
}

/** A client store whose records are registrations. Any ClientStore works too: its records are read by registeredClient(). */
export interface RegisteredClientStore extends ClientStore {
  findById(clientId: string): Promise<RegisteredClient | undefined>;
}

/**
 * What `add()` of a client store takes: the registration, with the secret in
 * clear (`secret`, hashed on the way in) or already hashed (`secretHash`).
 * `type` defaults to `confidential` with a secret and `public` without;
 * `grants` defaults to LEGACY_GRANTS.
 */
export type ClientRegistration = Readonly<
  Omit<RegisteredClient, 'type' | 'grants' | 'secretHash'> & {
    type?: ClientType;
    grants?: readonly string[];
    secret?: string;
    secretHash?: string;
  }
>;

/**
 * The grants of a client registered without `grants`: the two the token
 * endpoint answered every client before registrations named their grants, so
 * that existing registrations keep working as they did.
 */
export const LEGACY_GRANTS: readonly string[] = Object.freeze(['password', 'refresh_token']);

/** The grant types RFC 6749 defines at the token endpoint (§4.1.3, §4.3.2, §4.4.2, §6). */
const RFC_6749_GRANT_TYPES = new Set(['authorization_code', 'password', 'client_credentials', 'refresh_token']);
/** Grants only a client that authenticates may use (RFC 6749 §4.4: "MUST only be used by confidential clients"). */
const CONFIDENTIAL_ONLY_GRANTS = new Set(['client_credentials']);
/** Grants that send the user back to the client: they need a registered redirect URI (RFC 6749 §3.1.2.2). */
const REDIRECTING_GRANTS = new Set(['authorization_code']);

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/** RFC 3986 §2: a URI is visible ASCII, with no space (so a stored list can be space-separated). */
const URI_CHARACTERS = /^[!-~]+$/;

function isAbsoluteUri(value: string): URL | undefined {
  if (!URI_CHARACTERS.test(value)) return undefined;
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** An extension grant's type is an absolute URI (RFC 6749 §4.5). */
const isGrantType = (value: unknown): value is string =>
  typeof value === 'string' && (RFC_6749_GRANT_TYPES.has(value) || (value.includes(':') && isAbsoluteUri(value) !== undefined));

/**
 * A redirect URI a registration may hold: absolute, without fragment (RFC
 * 6749 §3.1.2), without user information (a look-alike host), and `http` only
 * on a loopback host (RFC 8252 §7.3; RFC 9700 §2.6 wants TLS elsewhere).
 * A private-use scheme of a native app (RFC 8252 §7.1) is accepted.
 */
function redirectUriProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'a string';
  const url = isAbsoluteUri(value);
  if (url === undefined) return 'an absolute URI (visible ASCII, RFC 3986)';
  if (value.includes('#')) return 'a URI without fragment (RFC 6749 §3.1.2)';
  if (url.username !== '' || url.password !== '' || /^[a-z][a-z0-9+.-]*:\/\/[^/?]*@/i.test(value)) {
    return 'a URI without user information';
  }
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) return 'an https URI (http only on a loopback host)';
  return undefined;
}

function checkList(
  factory: string,
  name: string,
  value: unknown,
  expected: string,
  ok: (item: unknown) => boolean,
): readonly string[] {
  if (!Array.isArray(value) || !value.every(ok)) invalidOption(factory, name, value, expected);
  return Object.freeze([...(value as string[])]);
}

function checkRedirectUris(factory: string, value: unknown): readonly string[] {
  if (!Array.isArray(value)) invalidOption(factory, 'redirectUris', value, 'an array of absolute URIs');
  for (const uri of value) {
    const problem = redirectUriProblem(uri);
    if (problem !== undefined) invalidOption(factory, 'redirectUris', uri, problem);
  }
  return Object.freeze([...(value as string[])]);
}

function readType(factory: string, value: unknown, secretHash: string | undefined): ClientType {
  if (value === undefined) return secretHash === undefined ? 'public' : 'confidential';
  if (!(CLIENT_TYPES as readonly unknown[]).includes(value)) invalidOption(factory, 'type', value, "'public' or 'confidential'");
  const type = value as ClientType;
  if (type === 'confidential' && secretHash === undefined) {
    invalidOption(factory, 'secret', undefined, 'given for a confidential client (it authenticates with it, RFC 6749 §2.3.1)');
  }
  if (type === 'public' && secretHash !== undefined) {
    invalidOption(factory, 'secret', '[hidden]', 'absent for a public client (it cannot keep a secret, RFC 6749 §2.1)');
  }
  return type;
}

function checkGrantsFor(factory: string, client: RegisteredClient): void {
  for (const grant of client.grants) {
    if (CONFIDENTIAL_ONLY_GRANTS.has(grant) && client.type !== 'confidential') {
      invalidOption(factory, 'grants', client.grants, `without '${grant}' for a public client (RFC 6749 §4.4)`);
    }
    if (REDIRECTING_GRANTS.has(grant) && (client.redirectUris === undefined || client.redirectUris.length === 0)) {
      invalidOption(factory, 'redirectUris', client.redirectUris, `at least one URI for a client registered for '${grant}'`);
    }
  }
}

/**
 * Checks a registration and turns it into the stored record: a wrong one
 * throws ConfigurationError (`EAC_OPTION_INVALID`) naming the field. The
 * secret is hashed here and never kept.
 */
export function registerClient(factory: string, registration: ClientRegistration): RegisteredClient {
  if (typeof registration !== 'object' || registration === null)
    invalidOption(factory, 'client', registration, 'a registration object');
  const { secret, secretHash: givenHash, type, grants, redirectUris, scopes, firstParty, name, blocked } = registration;
  const id = checkString(factory, 'id', registration.id);
  if (id.length === 0) invalidOption(factory, 'id', id, 'a non-empty string');
  if (secret !== undefined && givenHash !== undefined)
    invalidOption(factory, 'secret', '[hidden]', 'absent when `secretHash` is given');
  if (secret !== undefined && (typeof secret !== 'string' || secret.length === 0)) {
    invalidOption(factory, 'secret', '[hidden]', 'a non-empty string');
  }
  const secretHash = secret === undefined ? givenHash : hashClientSecret(secret);
  if (secretHash !== undefined) checkString(factory, 'secretHash', secretHash);
  const client: RegisteredClient = {
    id,
    type: readType(factory, type, secretHash),
    blocked: blocked === undefined ? false : checkBoolean(factory, 'blocked', blocked),
    grants:
      grants === undefined
        ? LEGACY_GRANTS
        : checkList(factory, 'grants', grants, 'an array of grant types (RFC 6749 names, or absolute URIs)', isGrantType),
    ...(secretHash === undefined ? {} : { secretHash }),
    ...(redirectUris === undefined ? {} : { redirectUris: checkRedirectUris(factory, redirectUris) }),
    ...(scopes === undefined ? {} : { scopes: Object.freeze([...checkScopeList(factory, 'scopes', scopes)]) }),
    ...(firstParty === undefined ? {} : { firstParty: checkBoolean(factory, 'firstParty', firstParty) }),
    ...(name === undefined ? {} : { name: checkString(factory, 'name', name) }),
  };
  checkGrantsFor(factory, client);
  return Object.freeze(client);
}

/**
 * Any store's record as a registration: a record written before registrations
 * named their type and grants (or by a ClientStore of the application's own)
 * is `confidential` when it has a secret hash, else `public`, and may use
 * LEGACY_GRANTS.
 */
export function registeredClient(record: ClientRecord): RegisteredClient {
  const partial = record as Partial<RegisteredClient> & ClientRecord;
  if (partial.type !== undefined && partial.grants !== undefined) return partial as RegisteredClient;
  return {
    ...partial,
    type: partial.type ?? (record.secretHash === undefined ? 'public' : 'confidential'),
    grants: partial.grants ?? LEGACY_GRANTS,
  };
}
