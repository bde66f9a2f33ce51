/** The issuer identifier (RFC 8414 §2), as the token router's options and its metadata read it. */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * The issuer as a URL RFC 8414 §2 accepts (`https`, no query, no fragment),
 * or undefined. Plain `http` is accepted on a loopback host only, for a
 * service run on a developer's machine.
 */
export function issuerUrl(issuer: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return undefined;
  }
  if (url.search !== '' || url.hash !== '' || issuer.includes('?') || issuer.includes('#')) return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return url;
  return undefined;
}
