import type { DpopReplayStore, RevokedFamilies } from 'express-api-conventions/oauth2';
import type { CounterStore } from 'express-api-conventions/stores';
import type {
  AuthorizationCodeStore,
  ConsentStore,
  RefreshTokenStore,
  RegisteredClientStore,
  SessionStore,
  SignInGuardStore,
  UserStore,
} from 'express-api-conventions-authorization-server';
import type { SharedState } from './state.js';
import type { UserRepository } from './users/repository.js';

/** What the app is made of, apart from its settings: each in memory, or in Redis for several instances. */
export interface Services {
  readonly state: SharedState;
  readonly users: UserRepository;
  readonly sessions: SessionStore;
  /** Sign-in accounts (bcrypt hashes), read by the token endpoint and by browser sign-in. */
  readonly accounts: UserStore;
  /** The registered clients: their type, first or third party, grants, redirect URIs and scopes (clients.ts). */
  readonly clients: RegisteredClientStore;
  readonly refreshTokens: RefreshTokenStore;
  /** Refresh-token families revoked before their access tokens expire (reuse detected). */
  readonly revokedFamilies: RevokedFamilies;
  /** Rate-limit counters. */
  readonly counters: CounterStore;
  /** The sign-in guard's counts (both doors that check a password). */
  readonly signIns: SignInGuardStore;
  /** The ids of DPoP proofs seen (DPoP is on unless DPOP=0). */
  readonly dpopReplay: DpopReplayStore;
  /** Authorization codes, as digests, single use (the authorization code flow). */
  readonly codes: AuthorizationCodeStore;
  /** The consents users gave third-party clients. */
  readonly consents: ConsentStore;
  /** Secrets every instance shares (see secrets.ts). */
  readonly secrets: { readonly token: string; readonly csrf: string; readonly partition: string };
  /** The tokens' `iss` and the metadata's `issuer`: the service's URL, the same on every instance (issuer.ts). */
  readonly issuer: string;
  /** The private key (PEM) that signs access tokens with ACCESS_TOKEN_ALG other than HS256, the same on every instance (signing-key.ts). */
  readonly signingKey: string | undefined;
}
