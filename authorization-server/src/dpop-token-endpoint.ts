import type { Request, Response } from 'express';
import { type CheckedProof, DpopNonceRequired, DpopProofRejected, setResponseHeader } from 'express-api-conventions/extend';
import type { Issued } from './grants/token-response.js';
import { tokenError } from './token-errors.js';
import type { TokenRouterConfiguration } from './token-options.js';

/**
 * The DPoP proof of a token request (RFC 9449 §5), checked but not yet
 * spent: the thumbprint of the key the new access token is bound to, or
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
 * Spends the proof once the grant was accepted, so a refused grant never
 * writes to the replay store. A replayed proof (two requests with one proof
 * raced through the grant) or a store that cannot record it gets no tokens,
 * and the family the grant just issued or rotated is revoked: nobody was
 * given its tokens.
 */
export async function spendTokenEndpointProof(
  config: TokenRouterConfiguration,
  proof: CheckedProof,
  issued: Issued,
): Promise<void> {
  try {
    await (config.dpop as NonNullable<TokenRouterConfiguration['dpop']>).verifier.spend(proof);
  } catch (error) {
    // Best effort: a family whose tokens were never sent is out of reach, and expires anyway.
    await config.refreshTokens.revokeFamily(issued.familyId).catch(() => undefined);
    if (error instanceof DpopProofRejected) throw tokenError('invalid_dpop_proof', error.message);
    throw error;
  }
}
