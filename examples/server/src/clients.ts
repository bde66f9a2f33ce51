import type { ClientRegistration } from 'express-api-conventions-authorization-server';
import { BROWSER_PAGE_CLIENT_ID, SCOPES } from './auth.js';
import type { Settings } from './settings.js';

/**
 * The demo clients of the contract, each registered for what it may do
 * (docs/oauth2-choices.md): the grants it uses, where codes may go, the
 * scopes it may ask for, and whether the user is asked first.
 */
export function demoClients(settings: Settings): ClientRegistration[] {
  return [
    // The password grant stays for this first-party application, as the conventions require (rule 13.2).
    {
      id: settings.demoClientId,
      secret: settings.demoClientSecret,
      name: 'Demo Client',
      firstParty: true,
      grants: ['password', 'refresh_token'],
    },
    // The browser page cannot keep a secret: it signs in as a public client (RFC 6749 §2.1).
    { id: BROWSER_PAGE_CLIENT_ID, name: 'Browser Page', firstParty: true, grants: ['password', 'refresh_token'] },
    // A single-page app: public, first party (no consent step); any port on the loopback IP (RFC 8252 §7.3).
    {
      id: settings.demoSpaClientId,
      name: 'Demo SPA',
      firstParty: true,
      grants: ['authorization_code', 'refresh_token'],
      redirectUris: ['http://localhost:5173/callback', 'http://127.0.0.1/callback'],
    },
    // A partner's server-side app: confidential, third party, so the user consents before any code.
    {
      id: settings.demoPartnerClientId,
      secret: settings.demoPartnerClientSecret,
      name: 'Demo Partner',
      grants: ['authorization_code', 'refresh_token'],
      redirectUris: ['http://127.0.0.1/partner/callback'],
      scopes: [...SCOPES],
    },
    // A partner's machine: no user at all, tokens for itself (RFC 6749 §4.4).
    {
      id: settings.demoServiceClientId,
      secret: settings.demoServiceClientSecret,
      name: 'Demo Service',
      grants: ['client_credentials'],
      scopes: ['exports'],
    },
  ];
}
