import type { Request } from 'express';
import { isProductionEnvironment } from '../config/options.js';
import { warnOnce } from '../config/warnings.js';

// At most this many header names are said per corsPolicy(): the names come from requests.
const NAMES_LIMIT = 32;

/**
 * Outside production, names once each request header a preflight asks for
 * that `allowedHeaders` does not list: the preflight is answered as
 * configured, and the browser then blocks the call with a console message
 * the service never sees. Made once per corsPolicy(), from its list.
 */
export function unlistedHeaderWarning(allowedHeaders: readonly string[]): (req: Request, origin: string) => void {
  // In production nothing is said: nothing is looked at either.
  if (isProductionEnvironment()) return () => undefined;
  const listed = new Set(allowedHeaders.map((name) => name.toLowerCase()));
  const said = new Set<string>();
  return function warnOfUnlistedHeaders(req, origin) {
    const asked = req.headers['access-control-request-headers'];
    if (typeof asked !== 'string') return;
    for (const part of asked.split(',')) {
      const name = part.trim().toLowerCase();
      if (name === '' || listed.has(name) || said.has(name) || said.size >= NAMES_LIMIT) continue;
      said.add(name);
      warnOnce(
        `corsPolicy:${allowedHeaders.join(',')}:${name}`,
        'EAC_CORS_HEADER_NOT_ALLOWED',
        `corsPolicy(): a preflight from ${origin} asked to send the request header ${part.trim()}, which allowedHeaders ` +
          `does not list, so the browser will block that request. If the API reads it, add it: corsPolicy: { allowedHeaders: ` +
          `[${allowedHeaders.map((header) => `'${header}'`).join(', ')}, '${part.trim()}'] }.`,
      );
    }
  };
}
