import { JsonInteger } from '../http/json-output/serialize.js';

/** The `id` / `id_str` pair of the conventions' "Large integers". */
export interface IdPair {
  /** The identifier, written in JSON as an exact integer. */
  readonly id: JsonInteger;
  /** The same digits as a string, for clients whose numbers are IEEE 754 doubles. */
  readonly id_str: string;
}

/**
 * the conventions' "Large integers": an identifier that may exceed the exact range of
 * a 64-bit float is delivered as `id` (number) and `id_str` (string of the
 * same value). Spread the result into a response object:
 * `{ ...idPair(user.id), name: user.name }`.
 */
export function idPair(id: bigint | number | string): IdPair {
  if (typeof id === 'number' && !Number.isSafeInteger(id)) {
    throw new TypeError(`idPair: ${id} is not a safe integer; pass identifiers beyond 2^53 as a bigint or a string`);
  }
  const exact = new JsonInteger(id);
  return { id: exact, id_str: exact.digits };
}
