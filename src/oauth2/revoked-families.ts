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
