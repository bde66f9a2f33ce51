import { randomBytes } from 'node:crypto';
import { agreeOn, republish } from './agreed.js';
import type { SharedState } from './state.js';

/** The secrets every instance of the service must share. */
export interface Secrets {
  /** Signs and verifies access tokens (TOKEN_SECRET). */
  readonly token: string;
  /** Keys the CSRF tokens (CSRF_SECRET). */
  readonly csrf: string;
  /** Keys the rate-limit partition keys, `pk` (RATE_LIMIT_PARTITION_SECRET). */
  readonly partition: string;
}

/** The secrets pinned in the environment; the others are drawn and shared. */
export type PinnedSecrets = { readonly [name in keyof Secrets]: string | undefined };

const KEYS: { readonly [name in keyof Secrets]: string } = {
  token: 'secrets:access-token',
  csrf: 'secrets:csrf',
  partition: 'secrets:rate-limit-partition',
};

const NAMES = Object.keys(KEYS) as (keyof Secrets)[];

const draw = (): string => randomBytes(32).toString('base64url');

/**
 * The secrets an instance starts with. A pinned one is used as given. An
 * unpinned one is drawn at random; with Redis, the first instance publishes
 * what it drew (SET NX) and every later one adopts what is there, so a token
 * issued by one instance is accepted by all.
 *
 * Whoever can read that Redis can read the secrets: in production, keep
 * Redis private (rediss://, AUTH) or pin all three in the environment.
 */
export async function agreeOnSecrets(state: SharedState, pinned: PinnedSecrets): Promise<Secrets> {
  const agreed: Partial<Record<keyof Secrets, string>> = {};
  for (const name of NAMES) agreed[name] = await agreeOn(state, KEYS[name], pinned[name], draw);
  return agreed as Secrets;
}

/**
 * Run when the connection to Redis comes back. Redis may have restarted
 * empty: the instance publishes again the secrets it uses (SET NX), so that
 * an instance started afterwards adopts them instead of drawing new ones,
 * and tokens issued before the restart stay valid everywhere. Returns the
 * secrets now published: when another instance published first (one started
 * during the outage), they differ from `inUse`, and the caller adopts them,
 * so that the instances converge on one set.
 */
export async function republishSecrets(state: SharedState, inUse: Secrets, pinned: PinnedSecrets): Promise<Secrets> {
  const published: Partial<Record<keyof Secrets, string>> = {};
  for (const name of NAMES) published[name] = await republish(state, KEYS[name], pinned[name], inUse[name]);
  return published as Secrets;
}

/** The names of the secrets that differ between `a` and `b`. */
export const differing = (a: Secrets, b: Secrets): (keyof Secrets)[] => NAMES.filter((name) => a[name] !== b[name]);
