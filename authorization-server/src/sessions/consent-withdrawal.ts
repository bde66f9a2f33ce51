import type { RevokedFamilies } from 'express-api-conventions/oauth2';
import type { ConsentStore } from '../stores/consent-store.js';
import { recordRevokedFamily } from '../stores/revoked-family.js';
import type { SessionCallOptions } from '../stores/session-store.js';
import type { RefreshTokenStore } from '../stores/stores.js';

/**
 * A user cuts a client off: the consent goes, and so do the tokens the
 * client holds for that user (RFC 6749 §10.2; docs/authorization-code.md),
 * its refresh-token families at once, its access tokens at once too with
 * `revokedFamilies`.
 */

/** What withdrawConsent() did. */
export interface ConsentWithdrawal {
  /** Whether there was a consent to withdraw (false for a client never approved, e.g. a first-party one). */
  readonly withdrawn: boolean;
  /** How many refresh-token families of the client were revoked, whether or not a consent was found. */
  readonly revokedFamilies: number;
}

/** `router.authorization.withdrawConsent(subject, clientId, { request })`. */
export type WithdrawConsent = (subject: string, clientId: string, options?: SessionCallOptions) => Promise<ConsentWithdrawal>;

/** The stores a withdrawal changes. */
export interface ConsentWithdrawalStores {
  readonly consents: ConsentStore;
  readonly refreshTokens: RefreshTokenStore;
  readonly revokedFamilies: RevokedFamilies | undefined;
  readonly accessTokenTtlSeconds: number;
}

export function consentWithdrawal(stores: ConsentWithdrawalStores): WithdrawConsent {
  const { consents, refreshTokens, revokedFamilies, accessTokenTtlSeconds } = stores;
  return async function withdrawConsent(subject, clientId, options = {}) {
    // The consent first: a code exchanged meanwhile stores its family, then checks the consent (authorization-code.ts),
    // so its family is either found below or refused there.
    const withdrawn = await consents.withdraw(subject, clientId, options);
    // tokenRouter() refuses a store without it when `authorization` is on (token-options.ts).
    const revoke = refreshTokens.revokeClientFamilies?.bind(refreshTokens);
    const ids = revoke === undefined ? [] : await revoke(subject, clientId);
    await Promise.all(ids.map((familyId) => recordRevokedFamily(revokedFamilies, familyId, accessTokenTtlSeconds)));
    return { withdrawn, revokedFamilies: ids.length };
  };
}
