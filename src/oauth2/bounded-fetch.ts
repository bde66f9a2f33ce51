import { StoreUnavailableError } from '../stores/store-error.js';

/**
 * One GET of a small JSON document from an issuer (its metadata, its key
 * set), bounded in time and in size: a slow or huge answer fails the fetch
 * instead of holding requests or memory. Every failure is a
 * StoreUnavailableError, so a request that needed the answer gets the
 * store-failure 503 with `Retry-After`, never a 500. A redirect is never
 * followed: the address was checked (isFetchableUrl) and its document's
 * `issuer` compared, and a 3xx would lead the keys anywhere (plain http, an
 * internal host); it is an answer without a document, like a 404.
 */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** `https`, or plain `http` on a loopback host (a developer's machine, a test): where keys may come from. */
export function isFetchableUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
}

export interface FetchLimits {
  /** Abort after this many milliseconds. */
  readonly timeoutMs: number;
  /** Refuse a body longer than this many bytes. */
  readonly maxBytes: number;
  /** The fetch to use (Node's global one). */
  readonly fetch: typeof fetch;
}

/** A document fetched: its parsed JSON, and its `Cache-Control` max-age in seconds when it states one. */
export interface FetchedJson {
  readonly status: number;
  readonly body: unknown;
  readonly maxAgeSeconds: number | undefined;
}

/** The store name failures carry. */
const SOURCE = 'issuer';

export const fetchFailure = (message: string, cause?: unknown): StoreUnavailableError =>
  new StoreUnavailableError(SOURCE, message, cause === undefined ? undefined : { cause });

const MAX_AGE = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?\s*(?:,|$)/i;
const NO_CACHE = /(?:^|,)\s*(?:no-cache|no-store)\s*(?:,|$)/i;

/** RFC 9111 §5.2.2.1: `max-age`; `no-cache` and `no-store` as 0. */
function maxAgeOf(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (NO_CACHE.test(header)) return 0;
  const match = MAX_AGE.exec(header);
  return match === null ? undefined : Number(match[1]);
}

/** Reads at most `maxBytes` of the body; throws when there is more. */
async function boundedText(response: Response, maxBytes: number, url: string): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > maxBytes) throw fetchFailure(`${url} answered more than ${maxBytes} bytes.`);
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw fetchFailure(`${url} answered more than ${maxBytes} bytes.`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Why an answer of `status` (not 2xx) holds no document, for the error that says so. */
export function noDocument(url: string, status: number): string {
  if (status >= 300 && status <= 399) {
    return `${url} answered ${status}, a redirect, which is not followed: configure the address it names, if it is yours.`;
  }
  return `${url} answered ${status}.`;
}

/** GETs `url` as JSON; a non-2xx answer is returned with a body of undefined, anything else that goes wrong throws. */
export async function fetchJson(url: string, limits: FetchLimits): Promise<FetchedJson> {
  let response: Response;
  try {
    response = await limits.fetch(url, {
      headers: { accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(limits.timeoutMs),
    });
  } catch (error) {
    throw fetchFailure(`${url} could not be fetched.`, error);
  }
  if (response.status < 200 || response.status > 299) {
    await response.body?.cancel().catch(() => undefined);
    return { status: response.status, body: undefined, maxAgeSeconds: undefined };
  }
  let text: string;
  try {
    text = await boundedText(response, limits.maxBytes, url);
  } catch (error) {
    throw error instanceof StoreUnavailableError ? error : fetchFailure(`${url} could not be read.`, error);
  }
  try {
    return { status: response.status, body: JSON.parse(text), maxAgeSeconds: maxAgeOf(response.headers.get('cache-control')) };
  } catch (error) {
    throw fetchFailure(`${url} did not answer JSON.`, error);
  }
}
