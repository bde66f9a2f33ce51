import { ApiError, type ApiErrorInit } from 'express-api-conventions/errors';
import { type ErrorEntryRegistration, registerErrorEntries } from 'express-api-conventions/extend';

/**
 * This package's entries of the error catalogue (docs/errors.md lists them
 * with the library's): the RFC 6749 §5.2 token-endpoint errors, rendered
 * with the RFC's own body, and the sign-in refusals. Each names the
 * security event its refusal publishes (docs/observability.md). They are
 * registered with the library as this module loads, so that its refusals
 * are published like the library's own, under these names.
 */

const input = { event: 'input_validation_fail' } as const;
const authzFail = { event: 'authz_fail' } as const;
const clientFail = { event: 'authn_client_fail' } as const;

export const AUTHORIZATION_SERVER_ERRORS = {
  oauthInvalidRequest: { status: 400, code: 40007, message: 'The token request is not valid.', event: input },
  oauthInvalidGrant: {
    status: 400,
    code: 40008,
    message: 'The grant or refresh token is not valid.',
    event: { event: 'authn_login_fail' },
  },
  oauthUnauthorizedClient: { status: 400, code: 40009, message: 'The client may not use this grant.', event: authzFail },
  oauthUnsupportedGrantType: { status: 400, code: 40010, message: 'The grant type is not supported.', event: input },
  oauthInvalidScope: { status: 400, code: 40011, message: 'The requested scope is not valid.', event: authzFail },
  // RFC 6749 §5.2: invalid_client is 400 unless the client authenticated with the Authorization header
  // (a 401 needs a challenge, which strict clients read instead of the body; docs/oauth2-token.md).
  oauthInvalidClientRequest: { status: 400, code: 40014, message: 'Client authentication failed.', event: clientFail },
  // RFC 7009 §2.2.1: the server does not revoke this kind of token.
  oauthUnsupportedTokenType: { status: 400, code: 40015, message: 'This kind of token cannot be revoked here.', event: input },
  // RFC 9449 §5: a DPoP proof sent to the token endpoint that does not hold.
  oauthInvalidDpopProof: {
    status: 400,
    code: 40016,
    message: 'The DPoP proof is not valid.',
    event: { event: 'authn_proof_invalid' },
  },
  // RFC 9449 §8: the token endpoint asks for a proof with its nonce (no decision against the client: no event).
  oauthUseDpopNonce: { status: 400, code: 40017, message: 'The DPoP proof must carry the server nonce.' },
  oauthInvalidClient: { status: 401, code: 40101, message: 'Client authentication failed.', event: clientFail },
  tooManyLoginFailures: {
    status: 429,
    code: 42901,
    message: 'Too many failed sign-in attempts; retry after the time in Retry-After.',
    event: { event: 'authn_login_lock' },
  },
  // The password hasher's queue: this address's own attempts would wait too long (PasswordHasher maxWaitMs).
  signInQueueFull: {
    status: 429,
    code: 42902,
    message: 'Too many sign-ins at once from this address; retry after Retry-After.',
    event: { event: 'excess_rate_limit_exceeded' },
  },
  // The password hasher's queue: any new sign-in would wait longer than its bound (PasswordHasher maxWaitMs).
  signInBusy: {
    status: 503,
    code: 50303,
    message: 'Sign-in is busy; retry after the time in Retry-After.',
    event: { event: 'excess_sign_in_busy' },
  },
} as const satisfies Record<string, ErrorEntryRegistration>;

/** The name of one of this package's entries. */
export type AuthorizationServerErrorName = keyof typeof AUTHORIZATION_SERVER_ERRORS;

registerErrorEntries('express-api-conventions-authorization-server', AUTHORIZATION_SERVER_ERRORS);

/** The ApiError of one of this package's entries: `packageError('signInBusy', { headers })`. */
export const packageError = (name: AuthorizationServerErrorName, init?: ApiErrorInit): ApiError =>
  new ApiError(AUTHORIZATION_SERVER_ERRORS[name], init);
