import { RemoteKeySet, type RemoteKeySetSettings } from './remote-key-set.js';

/**
 * One key set per issuer in the process: every bearerAuth() and dpopAuth()
 * (the preset's stage included) given the same issuer, `jwksUri` and `jwks`
 * options uses the same RemoteKeySet, so an app with several protected
 * routers fetches the metadata and the key set once, and a rotation costs one
 * refetch, not one per middleware (docs/bearer-auth.md, "One key set per
 * issuer"). Options that differ make another set: a team that asks for
 * another cooldown or other algorithms gets exactly what it asked for.
 *
 * Held weakly: a set is dropped with the last middleware that uses it (a
 * test, or an app built again), so the registry never grows with the number
 * of apps a process builds.
 */

const sets = new Map<string, WeakRef<RemoteKeySet>>();
const forget = new FinalizationRegistry<string>((id) => {
  if (sets.get(id)?.deref() === undefined) sets.delete(id);
});

/** What makes two sets the same: everything but the fetch and the clock, which are the process's own. */
function identity(settings: RemoteKeySetSettings): string {
  const { issuer, jwksUri, algorithms, cooldownMs, maxAgeMs, graceMs, timeoutMs, maxBytes, maxKeys } = settings;
  return JSON.stringify([
    issuer,
    jwksUri ?? null,
    [...algorithms].sort(),
    cooldownMs,
    maxAgeMs,
    graceMs,
    timeoutMs,
    maxBytes,
    maxKeys,
  ]);
}

/** The process's key set for these settings: the one already in use, or a new one. */
export function sharedKeySet(settings: RemoteKeySetSettings): RemoteKeySet {
  const id = identity(settings);
  const known = sets.get(id)?.deref();
  if (known !== undefined) return known;
  const set = new RemoteKeySet(settings);
  sets.set(id, new WeakRef(set));
  forget.register(set, id);
  return set;
}
