import { publishConsentWithdrawn } from '../authorization-events.js';
import type { SessionCallOptions } from './session-store.js';

/**
 * What each user granted each third-party client (RFC 6749 §10.2, RFC 9700
 * §2.1: the authorization server asks the user before a client it does not
 * operate gets anything): remembered per user, client and scopes, so the
 * consent page comes back only when a client asks for more. A user lists
 * the consents they gave and withdraws any, as they do with sessions.
 */

/** One client's consent, as its user sees it in their list. */
export interface ConsentRecord {
  readonly clientId: string;
  /** The scopes granted, in the order first granted. */
  readonly scopes: readonly string[];
  /** RFC 3339 UTC: the last time the user approved. */
  readonly grantedAt: string;
}

/**
 * Where consents live: MemoryConsentStore for one instance,
 * RedisConsentStore for several. withdraw() publishes
 * `authz_consent_withdrawn`.
 */
export interface ConsentStore {
  /** The consent `subject` gave `clientId`, or undefined. */
  find(subject: string, clientId: string): Promise<ConsentRecord | undefined>;
  /** Records an approval: the scopes are added to those granted before, in one step. */
  grant(subject: string, clientId: string, scopes: readonly string[]): Promise<ConsentRecord>;
  /** The user's consents, oldest grant first. */
  list(subject: string): Promise<ConsentRecord[]>;
  /** Withdraws the consent given to `clientId`; false when there was none. */
  withdraw(subject: string, clientId: string, options?: SessionCallOptions): Promise<boolean>;
}

/** Whether a consent covers every scope asked for. */
export const consentCovers = (consent: ConsentRecord | undefined, scopes: readonly string[]): boolean =>
  consent !== undefined && scopes.every((scope) => consent.scopes.includes(scope));

/** The scopes of `before`, then those of `added` it lacks. */
export const unionOf = (before: readonly string[], added: readonly string[]): string[] => [
  ...before,
  ...added.filter((scope) => !before.includes(scope)),
];

/** Consents in this process: for one instance, and for tests. */
export class MemoryConsentStore implements ConsentStore {
  /** Subject → client id → consent. */
  readonly #consents = new Map<string, Map<string, ConsentRecord>>();

  async find(subject: string, clientId: string): Promise<ConsentRecord | undefined> {
    return this.#consents.get(subject)?.get(clientId);
  }

  async grant(subject: string, clientId: string, scopes: readonly string[]): Promise<ConsentRecord> {
    const mine = this.#consents.get(subject) ?? new Map<string, ConsentRecord>();
    const before = mine.get(clientId)?.scopes ?? [];
    const record = { clientId, scopes: unionOf(before, scopes), grantedAt: new Date().toISOString() };
    mine.set(clientId, record);
    this.#consents.set(subject, mine);
    return record;
  }

  async list(subject: string): Promise<ConsentRecord[]> {
    return [...(this.#consents.get(subject)?.values() ?? [])].sort((a, b) => a.grantedAt.localeCompare(b.grantedAt));
  }

  async withdraw(subject: string, clientId: string, options: SessionCallOptions = {}): Promise<boolean> {
    const mine = this.#consents.get(subject);
    const record = mine?.get(clientId);
    if (mine === undefined || record === undefined) return false;
    mine.delete(clientId);
    if (mine.size === 0) this.#consents.delete(subject);
    publishConsentWithdrawn(options.request, { subject, clientId, scopes: record.scopes });
    return true;
  }
}
