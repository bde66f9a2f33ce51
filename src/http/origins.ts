import { invalidOption } from '../config/options.js';

/**
 * A list of browser origins an option names: exact origins, compared as
 * whole strings, and anchored patterns. Read once, at construction, by every
 * middleware that trusts origins (corsPolicy(), crossSiteProtection()), so
 * that one list means the same thing to both.
 */
export interface OriginList {
  readonly exact: ReadonlySet<string>;
  readonly patterns: readonly RegExp[];
}

/** An exact origin as a browser serializes it: scheme, host, optional port; no path, no trailing slash. */
function checkOrigin(factory: string, option: string, value: string): string {
  if (value === 'null') {
    // An opaque origin (sandboxed frame, file:, data:) sends `null`; any
    // site can produce one, so allowing it allows everyone.
    invalidOption(factory, option, value, 'real origins; `null` is what any sandboxed page sends, so it is never allowed');
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  if (!parsed || parsed.origin !== value) {
    invalidOption(
      factory,
      option,
      value,
      'exact origins such as "https://app.example.com" (scheme, lower-case host, optional port, no path or trailing slash)',
    );
  }
  return value;
}

function checkPattern(factory: string, option: string, pattern: RegExp): RegExp {
  if (!pattern.source.startsWith('^') || !pattern.source.endsWith('$')) {
    invalidOption(
      factory,
      option,
      String(pattern),
      'anchored patterns (starting with ^ and ending with $), so that a look-alike origin cannot match a part',
    );
  }
  if (pattern.global || pattern.sticky) {
    invalidOption(factory, option, String(pattern), 'patterns without the g or y flag (they keep state between tests)');
  }
  return pattern;
}

/** Reads `values` (already known to be an array) as an OriginList, refusing what a browser never sends. */
export function readOriginList(factory: string, option: string, values: readonly unknown[]): OriginList {
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  for (const origin of values) {
    if (typeof origin === 'string') exact.add(checkOrigin(factory, option, origin));
    else if (origin instanceof RegExp) patterns.push(checkPattern(factory, option, origin));
    else invalidOption(factory, option, origin, 'strings or RegExps');
  }
  return { exact, patterns };
}

/** Whether `origin` is in the list: an exact member, or matched by a pattern. */
export function inOriginList(list: OriginList, origin: string): boolean {
  if (list.exact.has(origin)) return true;
  for (const pattern of list.patterns) if (pattern.test(origin)) return true;
  return false;
}
