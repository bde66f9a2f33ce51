import { agreeOn, republish } from './agreed.js';
import type { Settings } from './settings.js';
import type { SharedState } from './state.js';

const KEY = 'service:issuer';

// A wildcard HOST listens on every address, loopback included: the issuer then names loopback.
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '']);

/** `http://HOST:PORT`, the address this instance listens on (an IPv6 host in brackets; `localhost` for a wildcard HOST). */
export const ownAddress = (settings: Settings): string => {
  const host = WILDCARD_HOSTS.has(settings.host) ? 'localhost' : settings.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${settings.port}`;
};

/**
 * The issuer every instance signs into `iss` and describes in its metadata:
 * ISSUER when set (what a deployment behind one address should do), else
 * this instance's own address. With Redis, instances must agree, or a token
 * one issues would be refused by the others: the first publishes its issuer
 * and every later one adopts it (agreed.ts).
 */
export const agreeOnIssuer = (state: SharedState, settings: Settings): Promise<string> =>
  agreeOn(state, KEY, settings.issuer, () => ownAddress(settings));

/** After Redis comes back empty: the issuer published again, or the one another instance published first. */
export const republishIssuer = (state: SharedState, settings: Settings, inUse: string): Promise<string> =>
  republish(state, KEY, settings.issuer, inUse);
