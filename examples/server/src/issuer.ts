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
 * (SET NX) and every later one adopts it.
 */
export async function agreeOnIssuer(state: SharedState, settings: Settings, shared: boolean): Promise<string> {
  if (settings.issuer !== undefined) return settings.issuer;
  if (!shared) return ownAddress(settings);
  await state.setIfAbsent(KEY, ownAddress(settings));
  const published = await state.get(KEY);
  if (!published) throw new Error(`the shared issuer ${KEY} could not be read back`);
  return published;
}

/**
 * After Redis comes back empty: publishes the issuer in use again, so that an
 * instance started later adopts it; answers the issuer now published, which
 * differs when another instance published first (the caller adopts it).
 */
export async function republishIssuer(state: SharedState, settings: Settings, inUse: string): Promise<string> {
  if (settings.issuer !== undefined) return inUse;
  await state.setIfAbsent(KEY, inUse);
  return (await state.get(KEY)) ?? inUse;
}
