import { invalidOption } from 'express-api-conventions/extend';

// The `introspectors` option, apart from the endpoint: the token router's
// options read it without loading the endpoint that reads the options.

/**
 * What a client may learn at the introspection endpoint (RFC 7662 §4 leaves
 * it to the server): `'own-tokens'`, the tokens issued to that client only;
 * `'resource-server'`, every access token for the router's audience, and its
 * own refresh tokens. A refresh token is never described to another client
 * (RFC 9700: refresh tokens stay between their client and the server).
 */
export type IntrospectionRight = 'own-tokens' | 'resource-server';

/** Client ids mapped to what each may introspect; a client not named may not introspect. */
export type Introspectors = Readonly<Record<string, IntrospectionRight>>;

const RIGHTS: readonly IntrospectionRight[] = ['own-tokens', 'resource-server'];

/** Checks the `introspectors` option of `factory` (a plain object of client id → right). */
export function readIntrospectors(factory: string, value: unknown): ReadonlyMap<string, IntrospectionRight> {
  if (value === undefined) return new Map();
  const expected = "an object mapping client ids to 'own-tokens' or 'resource-server'";
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    invalidOption(factory, 'introspectors', value, expected);
  const entries = Object.entries(value);
  if (!entries.every(([id, right]) => id.length > 0 && (RIGHTS as readonly unknown[]).includes(right))) {
    invalidOption(factory, 'introspectors', value, expected);
  }
  return new Map(entries as [string, IntrospectionRight][]);
}
