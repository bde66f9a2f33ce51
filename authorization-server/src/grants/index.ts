import type { TokenRouterConfiguration } from '../token-options.js';
import { AUTHORIZATION_CODE_GRANT } from './authorization-code.js';
import { CLIENT_CREDENTIALS_GRANT } from './client-credentials.js';
import type { Grant } from './grant.js';
import { PASSWORD_GRANT } from './password.js';
import { REFRESH_TOKEN_GRANT } from './refresh-token.js';

export type { Grant, GrantRequest } from './grant.js';

/**
 * The grant table: every grant the token endpoint answers, one row each.
 * Adding a grant is one module in this folder and one line here.
 */
export const GRANTS: readonly Grant[] = [PASSWORD_GRANT, REFRESH_TOKEN_GRANT, AUTHORIZATION_CODE_GRANT, CLIENT_CREDENTIALS_GRANT];

/** The grants this configuration answers, by grant_type, in the table's order. */
export function enabledGrants(config: TokenRouterConfiguration, table: readonly Grant[]): ReadonlyMap<string, Grant> {
  return new Map(table.filter((grant) => grant.enabled?.(config) ?? true).map((grant) => [grant.type, grant]));
}

/** Every form parameter the grants of the table define. */
export function grantParameters(table: readonly Grant[]): readonly string[] {
  return table.flatMap((grant) => grant.parameters);
}
