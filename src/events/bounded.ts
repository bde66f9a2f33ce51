/**
 * What an event carries from a request is the attacker's to choose: a 90 KB
 * `client_id`, a 12 KB path, ESC or U+2028 in a username. Every string of an
 * event is bounded here, once, where every event passes, so that no
 * publisher can forget it and a line stays under EVENT_LINE_LIMIT_BYTES
 * (docs/observability.md, "Bounded").
 */

/** The most characters (UTF-16 units) a field keeps. */
export const EVENT_FIELD_LIMIT = 256;

/** The most characters a description keeps: written by the library, it may quote a bounded field. */
export const EVENT_DESCRIPTION_LIMIT = 512;

/** The most bytes one event takes as a JSON line, with the worst inputs through every door. */
export const EVENT_LINE_LIMIT_BYTES = 8192;

// C0, DEL, C1, the two line separators JavaScript and some log viewers break lines at, and a
// lone surrogate (JSON writes it as a 6-byte escape; a terminal shows garbage).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `value` with control and line-separator characters replaced by U+FFFD, cut to `limit` characters. */
export function boundedText(value: string, limit: number = EVENT_FIELD_LIMIT): string {
  const text = value.length > limit ? value.slice(0, limit) : value;
  // A cut inside a surrogate pair leaves a lone half, replaced like the others.
  return text.replace(UNSAFE, '\ufffd');
}

/** The event's strings bounded, the policy's too; numbers and booleans as they are. */
export function boundEvent(event: Record<string, unknown>): void {
  for (const key in event) {
    const value = event[key];
    if (typeof value === 'string') {
      event[key] = boundedText(value, key === 'description' ? EVENT_DESCRIPTION_LIMIT : EVENT_FIELD_LIMIT);
    } else if (value !== null && typeof value === 'object') {
      const inner: Record<string, unknown> = { ...(value as Record<string, unknown>) };
      for (const innerKey in inner) if (typeof inner[innerKey] === 'string') inner[innerKey] = boundedText(inner[innerKey]);
      event[key] = inner;
    }
  }
}
