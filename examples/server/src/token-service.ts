import {
  type AuthorizationHelpers,
  type SignInGuard,
  type TokenRouter,
  tokenRouter,
} from 'express-api-conventions-authorization-server';
import { SCOPES, type TokenSettings } from './auth.js';
import { authorizationOptions } from './authorize/options.js';
import type { Services } from './services.js';
import type { Settings } from './settings.js';

/**
 * The OAuth endpoints: POST /v1/oauth2/token (the grants each client is
 * registered for: password, refresh_token, authorization_code with PKCE,
 * client_credentials; rotation, the sign-in guard shared with browser
 * sign-in), GET /v1/oauth2/authorize and its consent decision, POST
 * /v1/oauth2/revocations (RFC 7009), POST /v1/oauth2/introspections
 * (RFC 7662) and GET /.well-known/oauth-authorization-server (RFC 8414).
 */
export function tokenService(
  settings: Settings,
  services: Services,
  tokens: TokenSettings,
  guard: SignInGuard,
): TokenRouter & { readonly authorization: AuthorizationHelpers } {
  return tokenRouter({
    ...tokens,
    users: services.accounts,
    clients: services.clients,
    refreshTokens: services.refreshTokens,
    scopes: SCOPES,
    // RFC 7662: the demo application may introspect the tokens issued to it, and no others'.
    introspectors: { [settings.demoClientId]: 'own-tokens' },
    accessTokenTtlSeconds: settings.accessTokenTtl,
    refreshGraceSeconds: settings.refreshGrace,
    // The contract lists the metadata document: an issuer it cannot describe stops the start.
    metadata: true,
    // DPoP (RFC 9449), on unless DPOP=0: a token request with a proof gets a token bound to the
    // client's key; one without gets a bearer token.
    dpop: settings.dpop ? { replay: services.dpopReplay } : false,
    // Your users' bcrypt cost: what an outdated hash is upgraded to, and unknown usernames' cost until a known one signs in.
    passwordCost: settings.passwordCost,
    signInGuard: guard,
    // The authorization code flow, on the browser sessions of POST /v1/sessions and the sign-in page.
    authorization: authorizationOptions(services),
  });
}
