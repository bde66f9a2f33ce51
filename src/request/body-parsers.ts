import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import { checkInteger, invalidOption, readOptions } from '../config/options.js';
import { apiError } from '../errors/api-error.js';
import { refuse } from '../errors/refuse.js';
import { setResponseHeader } from '../http/response-headers.js';

/** Options of parseBodies(). */
export interface ParseBodiesOptions {
  /**
   * Largest accepted body, in bytes or as a size string such as `'100kb'`.
   * A larger one is refused with 413. Default: `'100kb'`.
   */
  limit?: number | string;
  /** Parse `application/json` bodies. Default: `true`. */
  json?: boolean;
  /** Parse `application/x-www-form-urlencoded` bodies (UTF-8). Default: `true`. */
  form?: boolean;
  /** Most form parameters accepted; more is refused with 413. Default: `100`. */
  parameterLimit?: number;
  /**
   * Path prefixes whose bodies are left unread, as the request stream, for
   * what follows: a proxy (http-proxy-middleware) or a multipart parser that
   * reads the body itself. Each starts with `/` and matches whole segments
   * of the path under the preset's mount (`'/upstream'` matches
   * `/upstream` and `/upstream/users`, not `/upstreams`). Default: none.
   */
  unparsedPaths?: readonly string[];
  /**
   * Longest time, in milliseconds, the whole body may take to arrive, from
   * the moment the parser starts reading it. A body still incomplete then
   * (trickled or stalled) is refused with 408 and the connection is closed.
   * Default: `10000` (10 s: a 100 KB body at 10 KB/s).
   */
  bodyTimeoutMs?: number;
}

/** parseBodies()'s default `bodyTimeoutMs`: a slow client holds a connection at most this long. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

const SIZE = /^\d+(?:\.\d+)?\s*(?:b|kb|mb)$/i;

/**
 * Express's own body parsers (body-parser), bounded in size, for the two
 * body types the conventions use: JSON and `application/x-www-form-urlencoded`.
 * Their failures (malformed JSON, too large, bad charset) are answered as
 * JSON (400, 413, 415): by errorHandler() when one is mounted after, else
 * here (refuse()).
 *
 * Form bodies are parsed flat (`extended: false`): `a[b]=1` stays a key named
 * `a[b]`, so a form cannot build nested objects or reach `__proto__`.
 *
 * A body must be UTF-8 (RFC 8259 §8.1 for JSON, the WHATWG URL standard's
 * form encoding for forms): a `charset` other than `utf-8` (UTF-16, UTF-32,
 * ISO-8859-1) is refused with 415 `unsupportedCharset` (code 41501); invalid bytes, a percent-escape in a
 * form that decodes to invalid UTF-8, or a JSON `\uD800`-style escape of an
 * unpaired surrogate are refused with 400 `invalidUtf8Body` (code 40012),
 * where the decoders would silently store U+FFFD or a lone surrogate.
 *
 * A body that has not fully arrived `bodyTimeoutMs` after its read began is
 * refused with 408 `requestTimeout` (code 40800) and its connection closed.
 */
export function parseBodies(options?: Readonly<ParseBodiesOptions>): RequestHandler[] {
  const given = readOptions<ParseBodiesOptions>('parseBodies', options, [
    'limit',
    'json',
    'form',
    'parameterLimit',
    'unparsedPaths',
    'bodyTimeoutMs',
  ]);
  const limit = given.limit ?? '100kb';
  if (!(typeof limit === 'number' && Number.isInteger(limit) && limit > 0) && !(typeof limit === 'string' && SIZE.test(limit))) {
    invalidOption('parseBodies', 'limit', limit, "a positive whole number of bytes or a size such as '100kb'");
  }
  const parameterLimit = given.parameterLimit ?? 100;
  if (!Number.isInteger(parameterLimit) || parameterLimit < 1) {
    invalidOption('parseBodies', 'parameterLimit', parameterLimit, 'a positive whole number');
  }
  const unparsed = unparsedPathsOf(given.unparsedPaths);
  const deadline = checkInteger('parseBodies', 'bodyTimeoutMs', given.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS, {
    min: 1,
    max: 2_147_483_647,
  });
  const parsers: RequestHandler[] = [];
  if (given.json ?? true) {
    parsers.push(whenBodied(express.json({ limit, strict: true, verify: verifyJsonText }), unparsed, deadline));
  }
  if (given.form ?? true) {
    parsers.push(
      whenBodied(express.urlencoded({ limit, extended: false, parameterLimit, verify: verifyFormText }), unparsed, deadline),
    );
  }
  return parsers;
}

function unparsedPathsOf(paths: unknown): readonly string[] {
  if (paths === undefined) return [];
  if (!Array.isArray(paths) || paths.some((path) => typeof path !== 'string' || !path.startsWith('/'))) {
    return invalidOption(
      'parseBodies',
      'unparsedPaths',
      paths,
      "a list of path prefixes, each starting with '/', such as ['/upstream']",
    );
  }
  // '/upstream/' and '/upstream' name the same prefix.
  return paths.map((path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path));
}

/** Whether `path` is `prefix` or lies under it, segment by segment. */
const isUnder = (path: string, prefix: string): boolean =>
  prefix === '/' || (path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 0x2f));

/**
 * Runs a body-parser parser only when the request has a body: no
 * `Transfer-Encoding` and no `Content-Length` means none (RFC 9112 §6.3;
 * type-is `hasBody`, which body-parser asks first). A GET then costs two
 * property reads instead of the parser's own checks; `req.body` reads
 * `undefined`, as body-parser leaves it, without a property added to the
 * request or to the app's `app.request`.
 *
 * body-parser waits for the body as long as the socket stays open (Node's
 * own `requestTimeout` is checked every 30 s at best): the deadline is
 * kept here, over the whole read, since a client trickling one byte a
 * second never lets an idle timeout fire.
 */
function whenBodied(parser: RequestHandler, unparsed: readonly string[], deadlineMs: number): RequestHandler {
  return function parseBodyMiddleware(req, res, next) {
    const headers = req.headers;
    if (
      (headers['transfer-encoding'] === undefined && headers['content-length'] === undefined) ||
      (unparsed.length > 0 && unparsed.some((prefix) => isUnder(req.path, prefix)))
    ) {
      next();
      return;
    }
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      // The rest of the body will not be read: the connection cannot carry
      // another request, so it closes once the 408 is written.
      setResponseHeader(res, 'Connection', 'close');
      res.once('finish', () => req.socket?.destroy());
      refuse(req, res, next, apiError('requestTimeout', { detail: { bodyTimeoutMs: deadlineMs } }));
    }, deadlineMs);
    parser(req, res, (error?: unknown) => {
      clearTimeout(timer);
      // After a 408 the parser still reports the read it gave up on.
      if (late) return;
      // A body the parser refuses (400, 413, 415) is answered in JSON even
      // when no errorHandler() follows (refuse()).
      if (error === undefined || error === null) next();
      else refuse(req, res, next, error);
    });
  };
}

/**
 * The `type` of the error the verify hooks throw. body-parser keeps a thrown
 * error's `type` and decorates the error (status, body bytes), so a plain
 * Error travels, and toApiError() maps the type to `invalidUtf8Body`.
 */
export const INVALID_UTF8_TYPE = 'entity.utf8.invalid' as const;

const invalidUtf8 = (detail: string): Error => Object.assign(new Error(detail), { type: INVALID_UTF8_TYPE, status: 400 });

/**
 * RFC 8259 §8.1: JSON exchanged between systems MUST be UTF-8; forms are
 * UTF-8 too (docs/conventions.md rule 13.1). body-parser would decode UTF-16, UTF-32 (JSON) or
 * ISO-8859-1 (forms) itself, out of reach of the checks below: refused
 * with 415, so every accepted body has passed the same validation.
 */
const notUtf8Charset = (encoding: string): Error =>
  Object.assign(new Error(`unsupported charset "${encoding.slice(0, 40)}": only UTF-8 is accepted`), {
    type: 'charset.unsupported',
    status: 415,
  });

/** body-parser's `verify` hook for JSON: UTF-8 only, valid, no unpaired surrogate escape. */
function verifyJsonText(_req: IncomingMessage, _res: unknown, body: Buffer, encoding: string): void {
  if (encoding !== 'utf-8') throw notUtf8Charset(encoding);
  if (!isUtf8(body)) throw invalidUtf8('the JSON body holds bytes that are not UTF-8');
  // Most bodies hold no \u escape at all: one indexOf, no decoding.
  if (body.indexOf('\\u') !== -1 && hasUnpairedSurrogateEscape(body.toString('utf8'))) {
    throw invalidUtf8('the JSON body holds a \\u escape of an unpaired surrogate');
  }
}

/** body-parser's `verify` hook for forms: UTF-8 only; the bytes and the percent-decoded bytes are valid UTF-8. */
function verifyFormText(_req: IncomingMessage, _res: unknown, body: Buffer, encoding: string): void {
  if (encoding !== 'utf-8') throw notUtf8Charset(encoding);
  if (!isUtf8(body)) throw invalidUtf8('the form body holds bytes that are not UTF-8');
  if (body.indexOf(0x25) !== -1 && !isUtf8(percentDecoded(body))) {
    throw invalidUtf8('a percent-escape of the form body decodes to bytes that are not UTF-8');
  }
}

// One JSON escape: `\u` and four hex digits (group 1 holds the digits) or `\` and one character.
const JSON_ESCAPE = /\\(?:u([0-9a-fA-F]{4})|[\s\S])/g;

/**
 * Whether JSON text holds a `\uD800`-`\uDBFF` escape not followed at once by a
 * `\uDC00`-`\uDFFF` one, or a low one not preceded by a high one: JSON.parse
 * accepts both and returns a string that is not well-formed Unicode.
 */
export function hasUnpairedSurrogateEscape(text: string): boolean {
  let pendingHighEnd = -1;
  JSON_ESCAPE.lastIndex = 0;
  for (let match = JSON_ESCAPE.exec(text); match !== null; match = JSON_ESCAPE.exec(text)) {
    const hex = match[1];
    const unit = hex === undefined ? -1 : Number.parseInt(hex, 16);
    const isLow = unit >= 0xdc00 && unit <= 0xdfff;
    if (pendingHighEnd !== -1) {
      if (!(isLow && match.index === pendingHighEnd)) return true;
      pendingHighEnd = -1;
      continue;
    }
    if (isLow) return true;
    if (unit >= 0xd800 && unit <= 0xdbff) pendingHighEnd = match.index + match[0].length;
  }
  return pendingHighEnd !== -1;
}

const hexValue = (byte: number | undefined): number => {
  if (byte === undefined) return -1;
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
};

/** The bytes of a form body with each `%XX` replaced by the byte it names. */
function percentDecoded(body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(body.length);
  let length = 0;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i] as number;
    const high = byte === 0x25 ? hexValue(body[i + 1]) : -1;
    const low = high === -1 ? -1 : hexValue(body[i + 2]);
    if (low === -1) {
      out[length++] = byte;
    } else {
      out[length++] = high * 16 + low;
      i += 2;
    }
  }
  return out.subarray(0, length);
}
