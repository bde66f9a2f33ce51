import express, { type Request, type Response } from 'express';
import type { Params } from '../protocol/params.js';
import { tokenError } from '../protocol/token-errors.js';

/**
 * The form requests of the OAuth endpoints (token, revocation,
 * introspection): RFC 6749 §3.2's encoding, read once, each defined
 * parameter at most once, the others ignored.
 */

/** The conventions' "Token endpoint": "Request content type `application/x-www-form-urlencoded`, UTF-8". */
export const TOKEN_REQUEST_TYPE = 'application/x-www-form-urlencoded';

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

/**
 * The parameters every OAuth endpoint defines (RFC 6749 §3.3, client
 * authentication §2.3.1; RFC 7009 §2.1; RFC 7662 §2.1); each grant adds its
 * own (grants/grant.ts `parameters`).
 */
const ENDPOINT_PARAMETERS = ['grant_type', 'scope', 'client_id', 'client_secret', 'token', 'token_type_hint'] as const;

/** The parameters read from a form: the endpoints' and the grants'. Only these are read, and only these may not repeat. */
export const definedParameters = (grantParameters: readonly string[]): ReadonlySet<string> =>
  new Set([...ENDPOINT_PARAMETERS, ...grantParameters]);

/**
 * The form's defined parameters; a repeated or non-text one is invalid_request (RFC 6749 §3.2).
 * Any other parameter is ignored, repeated or not (RFC 6749 §3.1), and its name is never echoed.
 */
export function readParams(body: unknown, defined: ReadonlySet<string>): Params {
  if (typeof body !== 'object' || body === null) return {};
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    if (!defined.has(name)) continue;
    // RFC 6749 §3.2: "Request and response parameters MUST NOT be included more than once."
    if (typeof value !== 'string') throw tokenError('invalid_request', 'A parameter of the request is repeated or malformed.');
    // RFC 6749 §3.1: parameters sent without a value are treated as omitted.
    if (value !== '') params[name] = value;
  }
  return params;
}

/** The request's media type and charset, as the conventions' "Token endpoint" fixes them. */
export function checkContentType(req: Request): void {
  const contentType = req.headers['content-type'];
  if (contentType === undefined || !req.is(TOKEN_REQUEST_TYPE)) {
    throw tokenError('invalid_request', `The request body must be ${TOKEN_REQUEST_TYPE}.`);
  }
  const charset = CHARSET.exec(contentType)?.[1];
  if (charset !== undefined && charset.toLowerCase() !== 'utf-8') {
    throw tokenError('invalid_request', 'The request body must be encoded in UTF-8.');
  }
}

/**
 * The form body. A body parser that ran before (conventions()'s parsers)
 * has consumed the request stream (`readableEnded`), and its result is in
 * `req.body`; otherwise the stream is unread and the router's own bounded
 * parser (Express's urlencoded) reads it. No private field of body-parser
 * is looked at.
 */
export function formReader(): (req: Request, res: Response) => Promise<unknown> {
  const parseForm = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 16, type: () => true });
  return function readForm(req, res) {
    if (req.readableEnded) {
      const body: unknown = req.body;
      if (typeof body === 'object' && body !== null && !Buffer.isBuffer(body)) return Promise.resolve(body);
      return Promise.reject(tokenError('invalid_request', 'The request body could not be read as a form.'));
    }
    return new Promise((resolve, reject) => {
      parseForm(req, res, (error?: unknown) => {
        if (error) reject(tokenError('invalid_request', 'The request body could not be read as a form.', {}, error));
        else resolve(req.body);
      });
    });
  };
}
