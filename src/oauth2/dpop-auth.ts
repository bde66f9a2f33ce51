import type { NextFunction, Request, RequestHandler, Response } from 'express';
import '../auth-context.js';
import type { ApiError } from '../errors/api-error.js';
import { noteSecurityEvent, PROOF_REPLAY_EVENT } from '../errors/refusal-events.js';
import { refuse } from '../errors/refuse.js';
import { isStoreFailure } from '../errors/store-unavailable.js';
import { securityEventsWanted } from '../events/index.js';
import type { AccessTokenClaims } from './access-tokens.js';
import { bearerAuthWith } from './bearer-auth.js';
import { type CheckedProof, DpopNonceRequired, DpopProofRejected, DpopProofReplayed } from './dpop.js';
import { type DpopAuthConfiguration, type DpopAuthOptions, readDpopAuthOptions } from './dpop-auth-options.js';
import {
  checkAccessToken,
  noteTokenRefusal,
  setTokenAuth,
  subjectGone,
  TokenRefusal,
  tokenActor,
  tokenFailure,
  unavailable,
} from './resource-token.js';

// RFC 9449 §7.1: credentials = "DPoP" 1*SP token68.
const DPOP_SCHEME = /^DPoP +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Sender-constrained access tokens at a resource (RFC 9449 §7): accepts
 * `Authorization: DPoP <token>` with a `DPoP` proof made by the key the
 * token is bound to (`cnf.jkt`), for this method and URL, naming this
 * token (`ath`), never seen before (the replay store); and plain `Bearer`
 * tokens, as bearerAuth() does, which refuses a bound token presented as a
 * bearer one. Failures are 401 with `WWW-Authenticate: DPoP` and
 * `error="invalid_token"` or `error="invalid_dpop_proof"`, and the JSON body
 * of docs/conventions.md rule 13.7.
 */
export function dpopAuth(options: Readonly<DpopAuthOptions>): RequestHandler {
  const config = readDpopAuthOptions(options);
  const bearer = bearerAuthWith(config.bearer);
  return function dpopAuthMiddleware(req: Request, res: Response, next: NextFunction) {
    const header = req.headers.authorization;
    const match = header === undefined ? null : DPOP_SCHEME.exec(header);
    if (match === null) return bearer(req, res, next);
    authenticate(config, req, match[1] as string).then(
      () => next(),
      (error: unknown) => refuse(req, res, next, isStoreFailure(error) ? unavailable(error) : error),
    );
  };
}

/** The error codes of a DPoP refusal (RFC 9449 §7.1, §9), with this package's catalogue entry for each. */
const DPOP_ERRORS = {
  invalid_token: 'invalidToken',
  invalid_dpop_proof: 'invalidDpopProof',
  use_dpop_nonce: 'useDpopNonce',
} as const;

/** 401 with the DPoP challenge naming `error`. */
function refusal(
  config: DpopAuthConfiguration,
  error: keyof typeof DPOP_ERRORS,
  description: string,
  extra?: Readonly<Record<string, string>>,
): ApiError {
  return tokenFailure(DPOP_ERRORS[error], error, config.challenge, description, extra);
}

/** Sets `req.auth` when the token and its proof hold; throws the refusal otherwise. */
async function authenticate(config: DpopAuthConfiguration, req: Request, token: string): Promise<void> {
  const claims = await checkAccessToken(config, token, true);
  if (claims instanceof TokenRefusal) {
    noteTokenRefusal(req, claims.reason, claims.claims);
    throw refusal(config, 'invalid_token', claims.description);
  }
  if (config.isSubjectActive !== undefined && !(await config.isSubjectActive(claims.sub, claims))) {
    noteTokenRefusal(req, 'invalid', claims);
    throw refusal(config, 'invalid_token', subjectGone(claims));
  }
  const proof = checkedProof(config, req, token, claims);
  // RFC 9449 §7.1: the proof's key is the one the token is bound to (checkAccessToken() made sure there is one).
  if (proof.jkt !== claims.cnf?.jkt) {
    noteProofRefusal(req, claims, proof.jti);
    throw refusal(config, 'invalid_dpop_proof', 'The DPoP proof key is not the key the token is bound to.');
  }
  // Spent last, once the token and the proof are both accepted: a refused request writes nothing.
  try {
    await config.proofs.spend(proof);
  } catch (error) {
    if (!(error instanceof DpopProofRejected)) throw error;
    noteProofRefusal(req, claims, proof.jti, error instanceof DpopProofReplayed);
    throw refusal(config, 'invalid_dpop_proof', error.message);
  }
  // requireScope() answers a bound token in the DPoP scheme (RFC 9449 §7.1).
  setTokenAuth(req, claims, config.challenge);
}

/**
 * Notes a refused proof of a token that verified: whom the token names, the
 * proof's `jti` when it was read (never the token's: the event is the
 * proof's), and whether it was a replay.
 */
function noteProofRefusal(req: Request, claims: AccessTokenClaims, jti?: string, replayed = false): void {
  if (!securityEventsWanted()) return;
  noteSecurityEvent(req, { ...tokenActor(claims), jti, ...(replayed ? PROOF_REPLAY_EVENT : undefined) });
}

/** The request's proof, checked for this method, URL and token but not yet spent; throws the refusal otherwise. */
function checkedProof(config: DpopAuthConfiguration, req: Request, token: string, claims: AccessTokenClaims): CheckedProof {
  // The path as parsed from the request target (an absolute-form target names its own host, which is not ours).
  const path = requestPath(req.originalUrl);
  try {
    const url = path === undefined ? '' : `${config.origin}${path}`;
    return config.proofs.check(req.headers.dpop, { method: req.method, url, accessToken: token });
  } catch (error) {
    // RFC 9449 §9: 401 with `use_dpop_nonce` and the nonce to use.
    if (error instanceof DpopNonceRequired) {
      throw refusal(config, 'use_dpop_nonce', error.message, { 'DPoP-Nonce': config.proofs.nonce() as string });
    }
    if (!(error instanceof DpopProofRejected)) throw error;
    noteProofRefusal(req, claims);
    throw refusal(config, 'invalid_dpop_proof', error.message);
  }
}

/** The path of a request target (origin-form or absolute-form), or undefined when it does not parse. */
function requestPath(target: string): string | undefined {
  try {
    return new URL(target, 'http://target.invalid').pathname;
  } catch {
    return undefined;
  }
}
