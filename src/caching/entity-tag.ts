import { hash } from 'node:crypto';
import type { Request, Response } from 'express';
import { answerNotModified } from '../http/json-output/writer.js';
import { setResponseHeader } from '../http/response-headers.js';

/**
 * Entity tags (RFC 9110 §8.8.3): `"opaque"` (strong) or `W/"opaque"` (weak).
 * the conventions' "Caching": "`ETag` — Entity tag of the current representation."
 */

/** How caching() tags JSON bodies. */
export type EntityTagMode = 'strong' | 'weak';

// RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / obs-text.
const ENTITY_TAG = /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;
// Version strings written as they are: short and plainly safe inside quotes.
const PLAIN_VERSION = /^[A-Za-z0-9._~-]{1,64}$/;

/**
 * The entity tag of a body: a SHA-1 of its bytes, base64url. One-shot
 * `crypto.hash()` is several times cheaper than the `createHash()` chain that
 * Express's default `etag` package runs, and the body is hashed once.
 * Strong by default: the tag changes whenever a byte of the body changes.
 */
export function bodyEntityTag(body: string | Buffer, mode: EntityTagMode = 'strong'): string {
  const tag = `"${hash('sha1', body, 'base64url')}"`;
  return mode === 'weak' ? `W/${tag}` : tag;
}

export interface EntityTagOptions {
  /** Write a weak tag (`W/"..."`), for representations that are equivalent but not byte-equal. Default: `false`. */
  weak?: boolean;
}

/**
 * An entity tag built from a version the route already knows (a revision
 * number, `updatedAt`), so the route neither serializes nor hashes the body
 * to tag it. A Date becomes its milliseconds; a short plain string is used as
 * it is; anything else is hashed. The tag must change whenever the
 * representation changes: when one resource has several representations
 * (`fields`), put what selects them into the version too.
 */
export function entityTag(version: string | number | bigint | Date, options: Readonly<EntityTagOptions> = {}): string {
  let opaque: string;
  if (version instanceof Date) {
    const time = version.getTime();
    if (Number.isNaN(time)) throw new TypeError('entityTag: the version is an invalid Date');
    opaque = String(time);
  } else if (typeof version === 'number' || typeof version === 'bigint') {
    opaque = String(version);
  } else if (typeof version === 'string') {
    opaque = PLAIN_VERSION.test(version) ? version : hash('sha1', version, 'base64url');
  } else {
    throw new TypeError(`entityTag: the version must be a string, number, bigint or Date; received ${typeof version}`);
  }
  return options.weak === true ? `W/"${opaque}"` : `"${opaque}"`;
}

/** Whether a string is an entity tag as RFC 9110 §8.8.3 writes it. */
export const isEntityTag = (value: string): boolean => ENTITY_TAG.test(value);

/** Validators of the current representation of a resource. */
export interface Validators {
  /** Its entity tag, written as RFC 9110 says (`"v1"` or `W/"v1"`); see entityTag(). */
  readonly etag?: string;
  /** When it last changed; sent as an HTTP-date (second precision). */
  readonly lastModified?: Date | number | string;
}

/** A Last-Modified value as an HTTP-date (the conventions' "Caching": "Time of last update, HTTP-date"). */
export function httpDate(value: Date | number | string): string {
  const date = value instanceof Date ? value : new Date(value);
  const time = date.getTime();
  if (Number.isNaN(time)) throw new TypeError(`lastModified is not a valid date: ${String(value)}`);
  return date.toUTCString();
}

/**
 * Sets `ETag` and `Last-Modified` on a response before its body is sent.
 * With an ETag set, caching() computes none from the body; its
 * conditional-GET step (`req.fresh`, the `fresh` package) then answers 304
 * when the client's `If-None-Match` or `If-Modified-Since` still matches.
 * On a write (PUT/PATCH 200, POST 201) the tag is sent as it is, so the
 * client can send it back in `If-Match`.
 */
export function setValidators(res: Response, validators: Validators): void {
  if (res.headersSent) return;
  if (validators.etag !== undefined) {
    if (typeof validators.etag !== 'string' || !isEntityTag(validators.etag)) {
      throw new TypeError(
        `setValidators: etag must be an entity tag such as "v1" (quotes included); received ${String(validators.etag)}`,
      );
    }
    setResponseHeader(res, 'ETag', validators.etag);
  }
  if (validators.lastModified !== undefined) setResponseHeader(res, 'Last-Modified', httpDate(validators.lastModified));
}

/**
 * Answers 304 with an empty body when the request's `If-None-Match` /
 * `If-Modified-Since` still match the validators already set on `res`
 * (Express's `req.fresh`, the `fresh` package, RFC 9110 §13.1.2–3), and
 * returns whether it did: a route can then skip loading and serializing
 * the body.
 */
export function notModified(req: Request, res: Response): boolean {
  if (res.headersSent || !req.fresh) return false;
  answerNotModified(res);
  return true;
}
