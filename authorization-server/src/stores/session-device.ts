/**
 * A session's device as its user reads it in a list of their sessions:
 * "Firefox on Linux". Made from the User-Agent header by a few fixed rules,
 * so that the result is always one of a small set of words: never the raw
 * header (which the client writes, of any length and content), never
 * anything that tells one browser of a kind from another.
 */

/** Browsers, tested in order: a browser's header names the ones it derives from too (Edge says Chrome and Safari). */
const BROWSERS: readonly (readonly [RegExp, string])[] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\b(?:OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:Chrome|Chromium|CriOS)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
];

/** Systems, tested in order: Android says Linux, iOS says Mac OS X. */
const SYSTEMS: readonly (readonly [RegExp, string])[] = [
  [/\bAndroid\b/, 'Android'],
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

/** The longest User-Agent read: enough for every browser's, and no regular expression runs over more. */
const MAX_USER_AGENT = 512;

const first = (rules: readonly (readonly [RegExp, string])[], text: string): string | undefined =>
  rules.find(([pattern]) => pattern.test(text))?.[1];

/** "Firefox on Linux", "Safari on iOS", "Unknown browser on Windows", "Unknown device". */
export function describeDevice(userAgent: string | undefined): string {
  const text = (userAgent ?? '').slice(0, MAX_USER_AGENT);
  const browser = first(BROWSERS, text);
  const system = first(SYSTEMS, text);
  if (!browser && !system) return 'Unknown device';
  return `${browser ?? 'Unknown browser'} on ${system ?? 'an unknown system'}`;
}
