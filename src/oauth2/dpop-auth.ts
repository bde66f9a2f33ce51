import type { NextFunction, Request, RequestHandler, Response } from 'express';
import '../auth-context.js';
import { checkInteger, checkString, invalidOption, readOptions } from '../config/options.js';
import { apiError } from '../errors/api-error.js';
import { refuse } from '../errors/refuse.js';
import { isStoreFailure, storeUnavailable } from '../errors/store-unavailable.js';
import { TOKEN_FAILURE_HEADERS } from '../http/spec.js';
import { type AccessTokenClaims, AccessTokenVerifier, TokenRejected } from './access-tokens.js';
import { bearerAuth, DEFAULT_CLOCK_TOLERANCE } from './bearer-auth.js';
import { checkAudience, checkRealm, checkSubjectActive, type SubjectActiveCheck } from './checks.js';
import { DpopNonceRequired, type DpopOptions, DpopProofRejected, DpopVerifier, readDpopOptions } from './dpop.js';
import { type AccessTokenKey, readKeys } from './keys.js';
import type { RevokedFamilies } from './revoked-families.js';

export interface DpopAuthOptions {
  /** Keys that verify access tokens, as given to tokenRouter(). Required. */
  keys: readonly AccessTokenKey[];
  /** The expected `iss`. Required. */
  issuer: string;
  /** The expected `aud`. Required. */
  audience: string | readonly string[];
  /**
   * The public origin of this API (`https://api.example.com`): a proof's
   * `htu` must be this origin followed by the request's path. Required:
   * behind a proxy, the request alone does not tell it.
   */
  origin: string;
  /** The proof check: replay store (shared by every instance), algorithms, window. Default: the defaults of DpopOptions. */
  dpop?: DpopOptions;
  /** Realm of the challenges. Default: `'api'`. */
  realm?: string;
  /** Clock skew allowed on the access token's `exp` and `nbf`, in seconds (0 to 300). Default: 5. */
  clockToleranceSeconds?: number;
  /** Revoked refresh-token families, as for bearerAuth(). Default: none. */
  revokedFamilies?: RevokedFamilies;
  /** Whether a token's user still exists, as for bearerAuth(): a token of a user it denies is refused. Default: none. */
  isSubjectActive?: SubjectActiveCheck;
}

const OPTION_NAMES = [
  'keys',
  'issuer',
  'audience',
  'origin',
  'dpop',
  'realm',
  'clockToleranceSeconds',
  'revokedFamilies',
  'isSubjectActive',
] as const;
const FACTORY = 'dpopAuth';
// RFC 9449 §7.1: credentials = "DPoP" 1*SP token68.
const DPOP_SCHEME = /^DPoP +([A-Za-z0-9\-._~+/]+=*) *$/i;
const EMPTY_SCOPES: readonly string[] = Object.freeze([]);

/**
 * Sender-constrained access tokens at a resource (RFC 9449 §7): accepts
 * `Authorization: DPoP <token>` with a `DPoP` proof made by the key the
 * token is bound to (`cnf.jkt`), for this method and URL, naming this
 * token (`ath`), never seen before (the replay store); and plain `Bearer`
 * tokens, as bearerAuth() does, which refuses a bound token presented as a
 * bearer one. Failures are 401 with `WWW-Authenticate: DPoP` and
 * `error="invalid_token"` or `error="invalid_dpop_proof"`, and the JSON body
 * of SPEC.md's "Token failure".
 */
export function dpopAuth(options: Readonly<DpopAuthOptions>): RequestHandler {
  const given = readOptions<DpopAuthOptions>(FACTORY, options, OPTION_NAMES);
  const keys = readKeys(FACTORY, given.keys, false);
  const issuer = checkString(FACTORY, 'issuer', given.issuer);
  const audience = checkAudience(FACTORY, given.audience);
  const origin = checkString(FACTORY, 'origin', given.origin);
  let parsed: URL | undefined;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || parsed.origin !== origin)
    invalidOption(FACTORY, 'origin', origin, 'an origin such as https://api.example.com');
  const realm = given.realm === undefined ? 'api' : checkRealm(FACTORY, given.realm);
  const tolerance =
    given.clockToleranceSeconds === undefined
      ? DEFAULT_CLOCK_TOLERANCE
      : checkInteger(FACTORY, 'clockToleranceSeconds', given.clockToleranceSeconds, { min: 0, max: 300 });
  const revokedFamilies = given.revokedFamilies;
  const isSubjectActive = checkSubjectActive(FACTORY, given.isSubjectActive);
  const proofs = new DpopVerifier(readDpopOptions(FACTORY, given.dpop));
  const verifier = new AccessTokenVerifier(keys, issuer, audience, tolerance);
  const bearer = bearerAuth({
    keys: given.keys as readonly AccessTokenKey[],
    issuer,
    audience,
    realm,
    clockToleranceSeconds: tolerance,
    ...(revokedFamilies === undefined ? {} : { revokedFamilies }),
    ...(isSubjectActive === undefined ? {} : { isSubjectActive }),
  });
  const algs = proofs.algorithms.join(' ');

  const CATALOGUE = {
    invalid_token: 'invalidToken',
    invalid_dpop_proof: 'invalidDpopProof',
    use_dpop_nonce: 'useDpopNonce',
  } as const;
  const refusal = (error: keyof typeof CATALOGUE, description: string, extra: Record<string, string> = {}) =>
    apiError(CATALOGUE[error], {
      message: description,
      body: { error, error_description: description },
      headers: {
        ...TOKEN_FAILURE_HEADERS,
        'WWW-Authenticate': `DPoP realm="${realm}", algs="${algs}", error="${error}", error_description="${description}"`,
        ...extra,
      },
    });

  async function authenticate(req: Request, token: string): Promise<void> {
    let claims: AccessTokenClaims;
    try {
      claims = verifier.verify(token);
    } catch (error) {
      throw refusal('invalid_token', error instanceof TokenRejected ? error.message : 'The access token is not valid.');
    }
    if (claims.cnf === undefined) throw refusal('invalid_token', 'The access token is not bound to a DPoP key.');
    if (revokedFamilies !== undefined && claims.sid !== undefined && revokedFamilies.isRevoked(claims.sid)) {
      throw refusal('invalid_token', 'The access token was revoked.');
    }
    if (isSubjectActive !== undefined && !(await isSubjectActive(claims.sub))) {
      throw refusal('invalid_token', 'The user of the access token no longer exists.');
    }
    const path = req.originalUrl.split('?', 1)[0] as string;
    let jkt: string;
    try {
      ({ jkt } = await proofs.verify(req.headers.dpop, { method: req.method, url: `${origin}${path}`, accessToken: token }));
    } catch (error) {
      // RFC 9449 §9: 401 with `use_dpop_nonce` and the nonce to use.
      if (error instanceof DpopNonceRequired) {
        throw refusal('use_dpop_nonce', error.message, { 'DPoP-Nonce': proofs.nonce() as string });
      }
      if (error instanceof DpopProofRejected) throw refusal('invalid_dpop_proof', error.message);
      throw error;
    }
    // RFC 9449 §7.1: the proof's key is the one the token is bound to.
    if (jkt !== claims.cnf.jkt) throw refusal('invalid_dpop_proof', 'The DPoP proof key is not the key the token is bound to.');
    req.accessToken = claims;
    req.auth = {
      subject: claims.sub,
      clientId: claims.client_id,
      scopes: claims.scope === undefined ? EMPTY_SCOPES : claims.scope.split(' '),
    };
  }

  return function dpopAuthMiddleware(req: Request, res: Response, next: NextFunction) {
    const header = req.headers.authorization;
    const match = header === undefined ? null : DPOP_SCHEME.exec(header);
    if (match === null) return bearer(req, res, next);
    authenticate(req, match[1] as string).then(
      () => next(),
      (error: unknown) => refuse(req, res, next, isStoreFailure(error) ? storeUnavailable(error) : error),
    );
  };
}
