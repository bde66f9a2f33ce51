/**
 * V8's dictionary mode for the request and the response of one Express
 * request (docs/performance.md, "The request and the response as
 * dictionaries").
 *
 * Express gives `req` and `res` their app's prototypes on every request
 * (`Object.setPrototypeOf(res, app.response)`), after which V8 shares no
 * hidden class between two responses: each property added later in V8's
 * fast form makes a hidden class for that one object and copies its
 * descriptors. Taking off a property that was not the last one added moves
 * the object's properties into a dictionary once; adding one is then a hash
 * insert. `test/dictionary-mode.test.ts` checks both facts on Express 4 and 5
 * under `--allow-natives-syntax`.
 */

/** The one own property of each that Node's constructor sets, and the app's prototype Express gives it. */
const ANCHORS = { request: 'complete', response: 'sendDate' } as const;

/**
 * Moves the properties of an Express request or response into a
 * dictionary: takes off its `complete` / `sendDate` (a boolean Node's
 * constructor set, so never the last property added) and puts it back
 * with its value. What stays observable: that key comes last in
 * `Object.keys()`; nothing else changes.
 *
 * It does nothing unless both hold:
 * - the object carries its app's prototype as Express sets it
 *   (`Object.getPrototypeOf(res) === res.app.response`, in a mounted
 *   sub-app its own): a plain `node:http` object keeps the hidden class it
 *   shares with every other;
 * - the property is an own, writable, enumerable, configurable boolean data
 *   property of an extensible object, as Node makes it: a neighbour's
 *   accessor, or a property it made read-only or fixed, stays as it is.
 */
export function toDictionary(target: object, kind: keyof typeof ANCHORS): void {
  const prototype = Object.getPrototypeOf(target) as { app?: Partial<Record<keyof typeof ANCHORS, unknown>> } | null;
  if (prototype === null || prototype.app?.[kind] !== prototype || !Object.isExtensible(target)) return;
  const anchor = ANCHORS[kind];
  const property = Object.getOwnPropertyDescriptor(target, anchor);
  if (!property?.writable || !property.enumerable || !property.configurable || typeof property.value !== 'boolean') return;
  const record = target as Record<string, unknown>;
  delete record[anchor];
  record[anchor] = property.value;
}
