import type { Response } from 'express';
import { warnOnce } from '../config/warnings.js';
import { setResponseHeaders } from '../http/response-headers.js';
import { optionOfHeader, SECURITY_HEADER_TABLE } from './defaults.js';

/**
 * Order means precedence, as everywhere in Express: a security header that
 * a middleware in front set before securityHeaders() ran (helmet with its
 * own defaults, the app's own) is replaced by the conventions' value; a
 * route or a middleware after it still replaces that in turn.
 */

/** The option of securityHeaders() that writes each header (lower-case name), for the warning's fix. */
const OPTION_OF_HEADER = optionOfHeader(SECURITY_HEADER_TABLE);

/**
 * Writes a fixed [name, value, …] list (computed once by the caller) over
 * whatever the response holds. Outside production, a value another
 * middleware set before, and that differs, is said once per header name
 * (EAC_HEADER_REPLACED) with the way to keep it.
 */
export function writeOverEarlierHeaders(res: Response, fixed: readonly string[], watch: boolean): void {
  if (watch) {
    for (let i = 0; i < fixed.length; i += 2) {
      const name = fixed[i] as string;
      const earlier = res.getHeader(name);
      if (earlier !== undefined && String(earlier) !== fixed[i + 1]) sayReplaced(name, String(earlier), fixed[i + 1] as string);
    }
  }
  setResponseHeaders(res, fixed);
}

/**
 * For a stage whose values are made per request (a CSP nonce): the security
 * headers (of `names`) the response holds before the stage writes, to
 * compare after it with sayReplacedSince().
 */
export function securityHeadersBefore(res: Response, names: readonly string[]): ReadonlyMap<string, string> {
  const earlier = new Map<string, string>();
  for (const name of names) {
    const value = res.getHeader(name);
    if (value !== undefined) earlier.set(name, String(value));
  }
  return earlier;
}

/** Says, as writeOverEarlierHeaders() does, each header of `earlier` the stage then replaced with another value. */
export function sayReplacedSince(res: Response, earlier: ReadonlyMap<string, string>): void {
  for (const [name, value] of earlier) {
    const now = res.getHeader(name);
    if (now !== undefined && String(now) !== value) sayReplaced(name, value, String(now));
  }
}

/**
 * Report-only changes nothing a middleware in front decided: each header of
 * `earlier` that the stage wrote over is set back, and outside production
 * what enforcing would send is said once per header name
 * (EAC_REPORT_ONLY_HEADER_KEPT).
 */
export function keepEarlierHeaders(res: Response, earlier: ReadonlyMap<string, string>): void {
  if (res.headersSent) return;
  for (const [name, value] of earlier) {
    const now = res.getHeader(name);
    if (now === undefined || String(now) === value) continue;
    res.setHeader(name, value);
    warnOnce(
      `reportOnlySecurityHeaders:kept:${name.toLowerCase()}`,
      'EAC_REPORT_ONLY_HEADER_KEPT',
      `report-only kept ${name}: ${value} (set by a middleware before the preset, such as helmet()); enforcing sends ${String(now)}, the conventions' value, in its place.`,
    );
  }
}

function sayReplaced(name: string, earlier: string, value: string): void {
  const option = OPTION_OF_HEADER.get(name.toLowerCase());
  const stageOption = option === undefined ? '' : `, give the stage your value (\`securityHeaders: { ${option}: … }\`)`;
  warnOnce(
    `securityHeaders:replaced:${name.toLowerCase()}`,
    'EAC_HEADER_REPLACED',
    `securityHeaders() replaced ${name}: ${earlier} (set by a middleware before it, such as helmet()) with the conventions' ${value}. ` +
      `Order means precedence: the preset's values replace what ran before it. To keep yours, set it after the preset (in a route, or a middleware mounted after conventions())${stageOption}, or turn the stage off (\`securityHeaders: false\`).`,
  );
}
