import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';

/**
 * The authorization code flow's client side, shared by the reference server's
 * tests: the demo clients of the contract, PKCE, the authorization request,
 * the consent decision and the code exchange, over real HTTP.
 */

/** demo-spa: public, first party (no consent step), a loopback redirect URI on any port. */
export const SPA = { clientId: 'demo-spa', redirectUri: 'http://127.0.0.1:53682/callback' } as const;

/** demo-partner: confidential, third party (the consent page first). */
export const PARTNER = {
  clientId: 'demo-partner',
  clientSecret: 'partner-secret',
  redirectUri: 'http://127.0.0.1:53683/partner/callback',
} as const;

/** A fresh PKCE verifier and its S256 challenge (RFC 7636 §4.1, §4.2). */
export const verifierAndChallenge = (): { verifier: string; challenge: string } => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** An authorization request's query, with PKCE S256 unless `overrides` change it (undefined drops a parameter). */
export function authorizeQuery(
  client: { clientId: string; redirectUri: string },
  overrides: Record<string, string | undefined> = {},
): string {
  const { challenge } = verifierAndChallenge();
  const params: Record<string, string | undefined> = {
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    response_type: 'code',
    scope: 'users:write',
    state: 'state-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.append(name, value);
  return query.toString();
}

/** The authorization request of `client` with a fresh PKCE pair, by the browser with `cookie`: the answer and the verifier. */
export async function startAuthorization(url: string, cookie: string, client: { clientId: string; redirectUri: string }) {
  const { verifier, challenge } = verifierAndChallenge();
  const res = await request(url)
    .get(`/v1/oauth2/authorize?${authorizeQuery(client, { code_challenge: challenge })}`)
    .set('Cookie', cookie);
  return { res, verifier };
}

/** The `code` of a redirect back to the client, or an error naming where it went instead. */
export function codeOf(location: string | undefined): string {
  const code = /^https?:\/\//.test(location ?? '') ? new URL(location ?? '').searchParams.get('code') : null;
  if (!code) throw new Error(`no code: ${location}`);
  return code;
}

/** The consent page the browser with `cookie` was sent to (`location`), and its form's hidden fields. */
export async function consentPage(url: string, cookie: string, location: string) {
  const page = await request(url).get(location).set('Cookie', cookie);
  const field = (name: string) =>
    (new RegExp(`name="${name}" value="([^"]*)"`).exec(page.text)?.[1] ?? '').replaceAll('&amp;', '&');
  return { page, fields: { request: field('request'), csrf_token: field('csrf_token'), _csrf: field('_csrf') } };
}

/** The user's decision on the consent page, posted as its form. */
export const decide = (url: string, cookie: string, form: Record<string, string>) =>
  request(url).post('/v1/oauth2/decisions').set('Cookie', cookie).type('form').send(form);

/** A token request of the authorization code grant, with HTTP Basic when `basic` is given. */
export const exchange = (url: string, form: Record<string, string>, basic?: readonly [string, string]) => {
  const call = request(url).post('/v1/oauth2/token').type('form');
  return (basic ? call.auth(basic[0], basic[1]) : call).send({ grant_type: 'authorization_code', ...form });
};
