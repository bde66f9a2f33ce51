/**
 * The sign-in page's way back (RFC 9700 §4.11, open redirectors): the
 * authorization endpoint sends a user who is not signed in to the app's
 * sign-in page with a single `returnTo`, the path and query of the
 * authorization request. After the sign-in the page sends the user there,
 * and only there: any other value (another origin, another path, a
 * scheme-relative `//evil.example`, a backslash some browsers read as a
 * slash) is refused, so the page never redirects anywhere an attacker names.
 */

/** The origin every returnTo is read against: it never escapes it, whatever the value. */
const BASE = 'http://return-to.invalid';

/**
 * `value` when it is a path-and-query of the authorization endpoint at
 * `authorizePath` (as the endpoint wrote it, `/v1/oauth2/authorize?...`),
 * normalized; undefined for anything else.
 */
export function safeReturnTo(value: unknown, authorizePath: string): string | undefined {
  if (typeof value !== 'string' || !value.startsWith(`${authorizePath}?`)) return undefined;
  // Characters a browser or a URL parser may read as another origin's start.
  if (/[\\\s\p{Cc}]/u.test(value) || value.startsWith('//')) return undefined;
  let url: URL;
  try {
    url = new URL(value, BASE);
  } catch {
    return undefined;
  }
  if (url.origin !== BASE || url.pathname !== authorizePath || url.hash !== '') return undefined;
  return `${url.pathname}${url.search}`;
}
