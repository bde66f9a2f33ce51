/**
 * Refresh-token families whose access tokens must stop working before they
 * expire (reuse detected, sign-out). Access tokens carry their family id;
 * bearerAuth() asks `isRevoked()` on every request, so it is synchronous:
 * each instance keeps a local copy, refreshed from the shared store often
 * enough that a revocation reaches every instance within about a second.
 */
export interface RevokedFamilies {
  /** Revokes the family's access tokens until `untilMs` (ms since the epoch: the last one's expiry). */
  revoke(familyId: string, untilMs: number): Promise<void>;
  /** Whether the family is revoked, from this instance's local copy (no I/O). */
  isRevoked(familyId: string): boolean;
  /** Stops any background refresh (timers), for a clean shutdown. */
  close(): void;
}

/** The most families MemoryRevokedFamilies holds between sweeps before it sweeps on a revoke. */
const SWEEP_EVERY_REVOKES = 256;

/**
 * Revoked families of one process: a Map from family id to the instant its
 * revocation ends. Expired entries are dropped when looked up and swept
 * every 256 revocations, so memory is bounded by the families revoked within
 * one access-token lifetime.
 */
export class MemoryRevokedFamilies implements RevokedFamilies {
  readonly #until = new Map<string, number>();
  #revokes = 0;

  revoke(familyId: string, untilMs: number): Promise<void> {
    if (++this.#revokes % SWEEP_EVERY_REVOKES === 0) this.sweep();
    if (untilMs > (this.#until.get(familyId) ?? 0)) this.#until.set(familyId, untilMs);
    return Promise.resolve();
  }

  isRevoked(familyId: string): boolean {
    const until = this.#until.get(familyId);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.#until.delete(familyId);
    return false;
  }

  /** How many entries are held, expired ones not yet swept included. */
  get size(): number {
    return this.#until.size;
  }

  /** Drops every entry whose revocation has ended. */
  sweep(): void {
    const now = Date.now();
    for (const [familyId, until] of this.#until) if (until <= now) this.#until.delete(familyId);
  }

  /** Nothing runs in the background; the entries stay (closing never un-revokes). */
  close(): void {}
}
