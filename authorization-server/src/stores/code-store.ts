import { randomBytes } from 'node:crypto';
import { hashRefreshToken } from './stores.js';

/**
 * Authorization codes (RFC 6749 §4.1.2, RFC 9700 §4.5): random, short-lived,
 * single-use, and stored as digests only, so a copy of the store redeems
 * nothing. A code used once is remembered past its expiry, so that a second
 * presentation is told apart from a made-up code and revokes what the first
 * one issued (RFC 6749 §4.1.2).
 */

/** What a code grants, fixed when the user approves, checked at the exchange. */
export interface CodeGrant {
  readonly clientId: string;
  /** The redirect URI of the authorization request: the token request must name the same (RFC 6749 §4.1.3). */
  readonly redirectUri: string;
  /** The S256 code challenge (RFC 7636 §4.2). */
  readonly codeChallenge: string;
  /** The user (a token's `sub`). */
  readonly subject: string;
  readonly scopes: readonly string[];
  /** The scopes the request named, if it named any: the token response says `scope` when they differ (RFC 6749 §5.1). */
  readonly requested?: readonly string[];
  /** When the user signed in: the session's authentication time, seconds since the epoch. */
  readonly authTime: number;
  /**
   * The refresh-token family the exchange starts, chosen with the code: a
   * second presentation revokes it by this id, however close the two are.
   */
  readonly familyId: string;
  /** The DPoP key the tokens must be bound to (`dpop_jkt`, RFC 9449 §10); absent: any or none. */
  readonly jkt?: string;
}

/** What presenting a code finds. */
export type RedeemResult =
  /** Its first presentation, before its expiry: it is now used. */
  | { readonly status: 'redeemed'; readonly grant: CodeGrant }
  /** A code used before (RFC 6749 §4.1.2: refuse it, and revoke what it issued). */
  | { readonly status: 'replayed'; readonly grant: CodeGrant }
  /** Unknown, or expired unused. */
  | { readonly status: 'invalid' };

/**
 * Where codes live: MemoryCodeStore for one instance, RedisCodeStore for
 * several. redeem() is atomic: of two presentations of one code, at once
 * or on two instances, exactly one answers `redeemed`.
 */
export interface AuthorizationCodeStore {
  /** Keeps a new code's grant under its digest, valid until `expiresAt` (ms since the epoch). */
  save(codeHash: string, grant: CodeGrant, expiresAt: number): Promise<void>;
  /** Uses the code: `redeemed` once, `replayed` after (and it is marked replayed), `invalid` when unknown or expired unused. */
  redeem(codeHash: string): Promise<RedeemResult>;
  /**
   * Whether the code was presented again since it was redeemed. The exchange
   * asks after it has stored its tokens: a replay that came before they
   * existed could not revoke them, so the exchange revokes them itself.
   */
  wasReplayed(codeHash: string): Promise<boolean>;
}

/** RFC 9700 §4.5 and RFC 6749 §10.10: 256 random bits, base64url (43 characters). */
export const newAuthorizationCode = (): string => randomBytes(32).toString('base64url');

/** The stored form of a code: its SHA-256, as for refresh tokens. */
export const hashAuthorizationCode = (code: string): string => hashRefreshToken(code);

/** The longest a code lives (RFC 6749 §4.1.2: "a maximum authorization code lifetime of 10 minutes is RECOMMENDED"; we keep 60 s). */
export const MAX_CODE_TTL_SECONDS = 60;

/** How long a code is remembered after its expiry, to recognise a second presentation: one hour. */
export const USED_CODE_MEMORY_MS = 3_600_000;

interface StoredCode {
  readonly grant: CodeGrant;
  readonly expiresAt: number;
  used: boolean;
  replayed: boolean;
}

/**
 * Codes in this process: for one instance, and for tests. redeem() reads
 * and marks in one synchronous step, so it is atomic. Codes are kept in the
 * order they were saved and forgotten in that order, one hour after expiry.
 */
export class MemoryCodeStore implements AuthorizationCodeStore {
  readonly #codes = new Map<string, StoredCode>();

  async save(codeHash: string, grant: CodeGrant, expiresAt: number): Promise<void> {
    this.#forget(Date.now());
    this.#codes.set(codeHash, { grant, expiresAt, used: false, replayed: false });
  }

  async redeem(codeHash: string): Promise<RedeemResult> {
    const now = Date.now();
    this.#forget(now);
    const code = this.#codes.get(codeHash);
    if (code === undefined) return { status: 'invalid' };
    if (code.used) {
      code.replayed = true;
      return { status: 'replayed', grant: code.grant };
    }
    if (code.expiresAt <= now) return { status: 'invalid' };
    code.used = true;
    return { status: 'redeemed', grant: code.grant };
  }

  async wasReplayed(codeHash: string): Promise<boolean> {
    return this.#codes.get(codeHash)?.replayed === true;
  }

  #forget(now: number): void {
    for (const [hash, code] of this.#codes) {
      if (code.expiresAt + USED_CODE_MEMORY_MS > now) return;
      this.#codes.delete(hash);
    }
  }
}
