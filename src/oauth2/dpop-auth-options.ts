import { checkString, invalidOption, readOptions } from '../config/options.js';
import {
  type BearerAuthConfiguration,
  requiredBearer,
  TOKEN_KEY_OPTION_NAMES,
  type TokenKeyOptions,
} from './bearer-auth-options.js';
import type { SubjectActiveCheck } from './checks.js';
import { type DpopOptions, DpopVerifier, readDpopOptions } from './dpop.js';
import { type AccessTokenCheck, readAccessTokenCheck } from './resource-token.js';
import type { RevokedFamilies } from './revoked-families.js';

/** dpopAuth()'s options; where keys come from and the token checks are bearerAuth()'s (TokenKeyOptions). */
export interface DpopAuthOptions extends TokenKeyOptions {
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
  /**
   * The longest lifetime (`exp` − `iat`) a token is accepted with, in seconds
   * (60 to 31536000): a token that claims more, or has no `iat`, is refused
   * with 401 `invalid_token`, however far its `exp`. Default: 86400 (one
   * day, the longest tokenRouter() issues).
   */
  maxTokenLifetimeSeconds?: number;
  /** Revoked refresh-token families, as for bearerAuth(). Default: none. */
  revokedFamilies?: RevokedFamilies;
  /** Whether a token's user still exists, as for bearerAuth(): a token of a user it denies is refused. Default: none. */
  isSubjectActive?: SubjectActiveCheck;
}

const OPTION_NAMES = [
  ...TOKEN_KEY_OPTION_NAMES,
  'origin',
  'dpop',
  'realm',
  'clockToleranceSeconds',
  'maxTokenLifetimeSeconds',
  'revokedFamilies',
  'isSubjectActive',
] as const;
const FACTORY = 'dpopAuth';

/** dpopAuth()'s options, checked, with their defaults. */
export interface DpopAuthConfiguration extends AccessTokenCheck {
  /** The public origin a proof's `htu` starts with. */
  readonly origin: string;
  /** The proof check (replay store, algorithms, window, nonces). */
  readonly proofs: DpopVerifier;
  /** `DPoP realm="…", algs="…"`: the start of every challenge. */
  readonly challenge: string;
  /** The answer to a `Bearer` header: bearerAuth() with the same token check, required. */
  readonly bearer: BearerAuthConfiguration;
}

/** An origin alone (scheme, host, port), as `new URL(origin).origin` writes it. */
function readOrigin(value: unknown): string {
  const origin = checkString(FACTORY, 'origin', value);
  let parsed: URL | undefined;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || parsed.origin !== origin)
    invalidOption(FACTORY, 'origin', origin, 'an origin such as https://api.example.com');
  return origin;
}

/** Turns dpopAuth()'s options into its configuration, or throws a ConfigurationError at start-up. */
export function readDpopAuthOptions(options: unknown): DpopAuthConfiguration {
  const given = readOptions<DpopAuthOptions>(FACTORY, options, OPTION_NAMES);
  const check = readAccessTokenCheck(FACTORY, given);
  const origin = readOrigin(given.origin);
  const proofs = new DpopVerifier(readDpopOptions(FACTORY, given.dpop));
  const challenge = `DPoP realm="${check.realm}", algs="${proofs.algorithms.join(' ')}"`;
  // A request without credentials, or with a failed Bearer token, learns that DPoP is accepted too (RFC 9449 §7.1).
  return { ...check, origin, proofs, challenge, bearer: { ...requiredBearer(check), otherChallenge: challenge } };
}
