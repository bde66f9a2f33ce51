/**
 * Which redirect URI an authorization request may name (RFC 6749 §3.1.2;
 * RFC 9700 §2.1, §4.1): one of the client's registered URIs, compared as
 * strings, never as a pattern or a prefix. The one exception is RFC 8252
 * §7.3: a native app listens on a loopback IP address at a port the system
 * hands it, so for `http://127.0.0.1` and `http://[::1]` every part but the
 * port must be equal. `localhost` is a name, not a loopback IP (RFC 8252
 * §8.3): it is matched exactly.
 */

// The whole URI: scheme, a loopback IP literal, an optional port, then nothing but a path or query.
// Anything else in the authority (userinfo, a longer host name) makes it no loopback URI at all.
const LOOPBACK_URI = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?][^#]*)?$/;

interface LoopbackParts {
  readonly host: string;
  readonly rest: string;
}

function loopbackParts(uri: string): LoopbackParts | undefined {
  const match = LOOPBACK_URI.exec(uri);
  if (!match) return undefined;
  const [, host, port, rest] = match;
  if (port !== undefined && Number(port) > 65_535) return undefined;
  return { host: host as string, rest: rest ?? '' };
}

/** Whether `requested` names the registered URI `registered` (exactly, or a loopback IP URI on another port). */
export function redirectUriMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true;
  const want = loopbackParts(registered);
  if (want === undefined) return false;
  const got = loopbackParts(requested);
  return got !== undefined && got.host === want.host && got.rest === want.rest;
}

/**
 * The redirect URI of an authorization request: the one `requested`, when it
 * matches a registered one; the single registered URI when none is named
 * (RFC 6749 §3.1.2.3); undefined otherwise. A URI with a fragment never
 * matches (RFC 6749 §3.1.2).
 */
export function chooseRedirectUri(registered: readonly string[], requested: string | undefined): string | undefined {
  if (requested === undefined) return registered.length === 1 ? registered[0] : undefined;
  if (requested.includes('#')) return undefined;
  return registered.some((uri) => redirectUriMatches(uri, requested)) ? requested : undefined;
}
