import { type ClientRecord, type ClientStore, clientSecretMatches } from './stores.js';
import { tokenError } from './token-errors.js';

/** The token request's form parameters, each present at most once (RFC 6749 §3.2). */
export type Params = Readonly<Record<string, string>>;

// RFC 7617 §2: credentials = "Basic" 1*SP token68.
const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/** RFC 6749 §2.3.1: client id and secret are form-urlencoded before Basic encoding. */
function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** The id and secret of an `Authorization: Basic` header, or undefined when it is malformed. */
function readBasic(header: string): { id: string; secret: string } | undefined {
  const match = BASIC.exec(header);
  const decoded = match ? Buffer.from(match[1] as string, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  const id = formDecode(decoded.slice(0, colon));
  const secret = formDecode(decoded.slice(colon + 1));
  return id && secret !== undefined ? { id, secret } : undefined;
}

/**
 * Client authentication at the token endpoint (SPEC.md "Client
 * authentication"; RFC 6749 §2.3.1): optional; the Basic header or
 * `client_id`/`client_secret` in the body, never both. Resolves to the
 * authenticated client, or undefined when none was presented (and none is
 * required).
 */
export function clientAuthenticator(
  clients: ClientStore | undefined,
  requireClient: boolean,
  realm: string,
): (header: string | undefined, params: Params) => Promise<ClientRecord | undefined> {
  const challenge = { 'WWW-Authenticate': `Basic realm="${realm}", charset="UTF-8"` };

  return async function authenticateClient(header, params) {
    const inBody = params.client_id !== undefined || params.client_secret !== undefined;
    if (header !== undefined && inBody) {
      throw tokenError(
        'invalid_request',
        'Use one client authentication method: the Authorization header or the body, not both.',
      );
    }
    let presented: { id: string; secret: string | undefined } | undefined;
    if (header !== undefined) {
      presented = readBasic(header);
      // RFC 6749 §5.2: a failed or unsupported client authentication is invalid_client.
      if (!presented)
        throw tokenError('invalid_client', 'The Authorization header is not valid Basic client authentication.', challenge);
    } else if (inBody) {
      if (params.client_id === undefined) throw tokenError('invalid_request', 'client_secret was sent without client_id.');
      presented = { id: params.client_id, secret: params.client_secret };
    }
    if (!presented) {
      if (requireClient) throw tokenError('invalid_client', 'Client authentication is required.', challenge);
      return undefined;
    }
    const client = await clients?.findById(presented.id);
    // Compared even when the client is unknown or public, so the time taken says nothing.
    const secretOk = clientSecretMatches(presented.secret ?? '', client?.secretHash);
    // A public client (no secret registered) is identified by its id and sends no secret.
    const authenticated = client !== undefined && (client.secretHash === undefined ? !presented.secret : secretOk);
    if (!authenticated) {
      throw tokenError('invalid_client', 'Client authentication failed.', header !== undefined ? challenge : {});
    }
    if (client.blocked) throw tokenError('unauthorized_client', 'This client is not allowed to use the token endpoint.');
    return client;
  };
}
