import type { Request, Response } from 'express';
import {
  type CheckedProof,
  DpopNonceRequired,
  DpopProofRejected,
  noteSecurityEvent,
  securityEventsWanted,
  setResponseHeader,
} from 'express-api-conventions/extend';
import { tokenError } from '../protocol/token-errors.js';
import { deviceName } from '../sign-in/sign-in-guard.js';
import type { TokenRouterConfiguration } from '../token-options.js';

/**
 * The DPoP proof of a token request (RFC 9449 §5), checked but not yet
 * spent (see reserveTokenEndpointProof()): the thumbprint of the key the new access token is bound to, or
 * undefined when the request carries no proof (or DPoP is off) and gets a
 * bearer token. A proof that fails is 400 `invalid_dpop_proof`.
 */
export function tokenEndpointProof(config: TokenRouterConfiguration, req: Request, res: Response): CheckedProof | undefined {
  const proof = req.headers.dpop;
  if (config.dpop === undefined || proof === undefined) return undefined;
  const { verifier, tokenUrl } = config.dpop;
  // RFC 9449 §8.2: a fresh nonce on every answer to a proof, so the client always holds one.
  const nonce = verifier.nonce();
  if (nonce !== undefined) setResponseHeader(res, 'DPoP-Nonce', nonce);
  try {
    return verifier.check(proof, { method: 'POST', url: tokenUrl });
  } catch (error) {
    if (error instanceof DpopNonceRequired) throw tokenError('use_dpop_nonce', error.message, { 'DPoP-Nonce': nonce as string });
    if (error instanceof DpopProofRejected) throw tokenError('invalid_dpop_proof', error.message);
    throw error;
  }
}

/**
 * Spends the proof BEFORE the grant has any effect (RFC 9449 §11.1), so a
 * replayed request is refused before it can rotate or revoke anything: a
 * replay is 400 `invalid_dpop_proof`; a store that cannot record it fails
 * the request (503 with `Retry-After` through the error model) and nothing
 * else happens, so the client's retry works.
 */
export async function reserveTokenEndpointProof(
  config: TokenRouterConfiguration,
  req: Request,
  proof: CheckedProof,
): Promise<void> {
  try {
    await verifierOf(config).spend(proof);
  } catch (error) {
    if (error instanceof DpopProofRejected) {
      // A proof seen before: a captured request replayed (RFC 9449 §11.1). The key is named, never the proof.
      if (securityEventsWanted()) {
        noteSecurityEvent(req, {
          event: 'authn_proof_replay',
          description: 'A DPoP proof was presented again at the token endpoint.',
          device: deviceName(`dpop:${proof.jkt}`),
        });
      }
      throw tokenError('invalid_dpop_proof', error.message);
    }
    throw error;
  }
}

/** Gives the proof back when the grant was refused: it had no effect. Best effort: a proof kept spent only expires. */
export async function releaseTokenEndpointProof(config: TokenRouterConfiguration, proof: CheckedProof): Promise<void> {
  await verifierOf(config)
    .release(proof)
    .catch(() => undefined);
}

const verifierOf = (config: TokenRouterConfiguration) => (config.dpop as NonNullable<TokenRouterConfiguration['dpop']>).verifier;
