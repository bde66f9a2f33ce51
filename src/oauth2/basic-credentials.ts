/**
 * The library's one reader of `Authorization: Basic` client credentials
 * (RFC 7617; RFC 6749 §2.3.1), for the token endpoint's client
 * authentication and bearerAuth()'s client check.
 */

/** A client id and secret read from an `Authorization: Basic` header. */
export interface BasicCredentials {
  readonly id: string;
  readonly secret: string;
}

// RFC 7617 §2: credentials = "Basic" 1*SP token68 (the base64 alphabet, padded).
const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/** RFC 6749 §2.3.1: client id and secret are form-urlencoded before the Basic encoding. */
function formDecode(value: string): string | undefined {
  if (!value.includes('%') && !value.includes('+')) return value;
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/**
 * The id and secret of an `Authorization: Basic` header, or undefined when
 * the header is not Basic or is malformed: not base64, no colon, an empty
 * id, or a part that is not valid form encoding.
 */
export function parseBasicCredentials(header: string | undefined): BasicCredentials | undefined {
  if (header === undefined) return undefined;
  const match = BASIC.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  const id = formDecode(decoded.slice(0, colon));
  const secret = formDecode(decoded.slice(colon + 1));
  return id && secret !== undefined ? { id, secret } : undefined;
}
