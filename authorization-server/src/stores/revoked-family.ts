import type { RevokedFamilies } from 'express-api-conventions/oauth2';

/** Seconds added to an access token's lifetime when its family is revoked: bearerAuth()'s clock tolerance at most. */
const REVOCATION_MARGIN_SECONDS = 300;

/**
 * Records a revoked family in `revokedFamilies` for as long as one of its
 * access tokens can live: `ttlSeconds` from now, plus the largest clock
 * tolerance bearerAuth() accepts.
 */
export function recordRevokedFamily(
  revokedFamilies: RevokedFamilies | undefined,
  familyId: string,
  ttlSeconds: number,
): Promise<void> {
  if (!revokedFamilies) return Promise.resolve();
  return revokedFamilies.revoke(familyId, Date.now() + (ttlSeconds + REVOCATION_MARGIN_SECONDS) * 1000);
}
