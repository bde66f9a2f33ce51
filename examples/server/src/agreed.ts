import type { SharedState } from './state.js';

/**
 * A value every instance must use alike (a signing secret, the issuer): the
 * environment's when pinned; else the first instance publishes its own
 * (SET NX) and every later one adopts what is there. In memory the
 * instance's own value is what is "published".
 */
export async function agreeOn(
  state: SharedState,
  key: string,
  pinned: string | undefined,
  candidate: () => string,
): Promise<string> {
  if (pinned !== undefined) return pinned;
  await state.setIfAbsent(key, candidate());
  const published = await state.get(key);
  if (!published) throw new Error(`the shared value ${key} could not be read back`);
  return published;
}

/**
 * After Redis comes back (maybe restarted empty): publishes the value in use
 * again, so an instance started later adopts it; answers the value now
 * published, which differs when another instance published first (the
 * caller adopts it, so that the instances converge).
 */
export async function republish(state: SharedState, key: string, pinned: string | undefined, inUse: string): Promise<string> {
  if (pinned !== undefined) return inUse;
  await state.setIfAbsent(key, inUse);
  return (await state.get(key)) ?? inUse;
}
