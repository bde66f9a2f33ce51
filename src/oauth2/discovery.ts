import { type FetchLimits, fetchFailure, fetchJson, isFetchableUrl, noDocument } from './bounded-fetch.js';

/**
 * Finds an issuer's key set from its metadata: RFC 8414 §3 first
 * (`/.well-known/oauth-authorization-server`, inserted before the issuer's
 * path), then OpenID Connect Discovery 1.0 §4 (`/.well-known/openid-configuration`,
 * appended to it). A document counts only when its `issuer` is exactly the
 * configured one (RFC 8414 §3.3; OpenID Connect Discovery §4.3): another
 * issuer's document, served where this one's should be, is never used.
 */

/** The two places an issuer's metadata may be, in the order they are tried. */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`,
  ];
}

/** The `jwks_uri` of `issuer`'s metadata; throws a StoreUnavailableError when no document names one for this issuer. */
export async function discoverJwksUri(issuer: string, limits: FetchLimits): Promise<string> {
  let reason = `${issuer} publishes no metadata.`;
  for (const url of metadataUrls(issuer)) {
    const { status, body } = await fetchJson(url, limits);
    if (body === undefined) {
      reason = noDocument(url, status);
      continue;
    }
    if (typeof body !== 'object' || body === null) continue;
    const document = body as { issuer?: unknown; jwks_uri?: unknown };
    if (document.issuer !== issuer) {
      reason = `${url} names another issuer (${JSON.stringify(document.issuer)}), not ${issuer}.`;
      continue;
    }
    if (typeof document.jwks_uri !== 'string' || !isFetchableUrl(document.jwks_uri)) {
      reason = `${url} names no https jwks_uri.`;
      continue;
    }
    return document.jwks_uri;
  }
  throw fetchFailure(reason);
}
