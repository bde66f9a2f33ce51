import type { Request, Response } from 'express';
import { setResponseHeader } from '../http/response-headers.js';
import { DpopNonceRequired, DpopProofRejected } from './dpop.js';
import { tokenError } from './token-errors.js';
import type { TokenRouterConfiguration } from './token-options.js';

/**
 * The DPoP proof of a token request (RFC 9449 §5): the thumbprint of the
 * key the new access token is bound to, or undefined when the request
 * carries no proof (or DPoP is off) and gets a bearer token. A proof that
 * fails is 400 `invalid_dpop_proof`.
 */
export async function tokenEndpointProof(
  config: TokenRouterConfiguration,
  req: Request,
  res: Response,
): Promise<string | undefined> {
  const proof = req.headers.dpop;
  if (config.dpop === undefined || proof === undefined) return undefined;
  const { verifier, tokenUrl } = config.dpop;
  // RFC 9449 §8.2: a fresh nonce on every answer to a proof, so the client always holds one.
  const nonce = verifier.nonce();
  if (nonce !== undefined) setResponseHeader(res, 'DPoP-Nonce', nonce);
  try {
    return (await verifier.verify(proof, { method: 'POST', url: tokenUrl })).jkt;
  } catch (error) {
    if (error instanceof DpopNonceRequired) throw tokenError('use_dpop_nonce', error.message, { 'DPoP-Nonce': nonce as string });
    if (error instanceof DpopProofRejected) throw tokenError('invalid_dpop_proof', error.message);
    throw error;
  }
}
