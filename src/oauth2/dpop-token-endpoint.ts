import type { Request } from 'express';
import { DpopProofRejected } from './dpop.js';
import { tokenError } from './token-errors.js';
import type { TokenRouterConfiguration } from './token-options.js';

/**
 * The DPoP proof of a token request (RFC 9449 §5): the thumbprint of the
 * key the new access token is bound to, or undefined when the request
 * carries no proof (or DPoP is off) and gets a bearer token. A proof that
 * fails is 400 `invalid_dpop_proof`.
 */
export async function tokenEndpointProof(config: TokenRouterConfiguration, req: Request): Promise<string | undefined> {
  const proof = req.headers.dpop;
  if (config.dpop === undefined || proof === undefined) return undefined;
  try {
    return (await config.dpop.verifier.verify(proof, { method: 'POST', url: config.dpop.tokenUrl })).jkt;
  } catch (error) {
    if (error instanceof DpopProofRejected) throw tokenError('invalid_dpop_proof', error.message);
    throw error;
  }
}
