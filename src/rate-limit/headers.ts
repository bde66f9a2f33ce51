import type { Response } from 'express';
import { appendResponseHeader } from '../http/response-headers.js';

/**
 * The one file that writes the RateLimit headers. The IETF draft
 * (draft-ietf-httpapi-ratelimit-headers) is still moving: a change of item
 * or parameter names is made here and nowhere else.
 *
 * Both headers are Structured Field Lists (RFC 9651): each policy is an Item
 * whose value is its quoted name, with parameters after `;`, and several
 * policies are comma-separated.
 */

/** The conventions' Limits: "`RateLimit-Policy` ... Policy. Items: a quoted policy name; `q`; `qu`; `w`; `pk`". */
export const RATELIMIT_POLICY_HEADER = 'RateLimit-Policy';
/** The conventions' Limits: "`RateLimit` ... Current state. Items: a quoted policy name; `r`; `t`; `pk`". */
export const RATELIMIT_HEADER = 'RateLimit';

/**
 * the conventions' Limits: "`qu` (quota unit, default requests)". The units the draft
 * defines; `requests` is the default and so is never written.
 */
export const QUOTA_UNITS = ['requests', 'content-bytes', 'concurrent-requests'] as const;
export type QuotaUnit = (typeof QUOTA_UNITS)[number];
export const DEFAULT_QUOTA_UNIT: QuotaUnit = 'requests';

/** What a policy item says: its name, quota, unit and window. */
export interface PolicyDescription {
  readonly name: string;
  readonly limit: number;
  readonly windowSeconds: number;
  readonly quotaUnit?: QuotaUnit;
}

// RFC 9651 §3.3.3: an sf-string holds printable ASCII (%x20-7E).
const PRINTABLE_ASCII = /^[\x20-\x7E]+$/;
const STRING_ESCAPES = /["\\]/g;

/** Whether a policy name can be written as an sf-string. */
export const isPolicyName = (name: unknown): name is string => typeof name === 'string' && PRINTABLE_ASCII.test(name);

/** The quoted name of a policy, as the value of its items (RFC 9651 §4.1.6). */
export const quotedName = (name: string): string => `"${name.replace(STRING_ESCAPES, '\\$&')}"`;

/**
 * The part of a policy item that never changes: `"name";q=100;w=60`, with
 * `qu` only when the unit is not `requests`. Computed once per policy, at
 * construction; `pk` is added per request by policyItem().
 */
export function policyItemPrefix(policy: PolicyDescription): string {
  const unit = policy.quotaUnit ?? DEFAULT_QUOTA_UNIT;
  const qu = unit === DEFAULT_QUOTA_UNIT ? '' : `;qu="${unit}"`;
  return `${quotedName(policy.name)};q=${policy.limit}${qu};w=${policy.windowSeconds}`;
}

/** `pk` as an sf-binary (RFC 9651 §3.3.5): the base64 partition key between colons. */
const pkParameter = (partitionKey: string | undefined): string => (partitionKey === undefined ? '' : `;pk=:${partitionKey}:`);

/** A whole policy item: the static prefix and the request's partition key. */
export const policyItem = (prefix: string, partitionKey?: string): string => prefix + pkParameter(partitionKey);

/** A state item: `"name";r=<remaining>;t=<seconds to reset>;pk=:<key>:`. */
export const stateItem = (quoted: string, remaining: number, resetSeconds: number, partitionKey?: string): string =>
  `${quoted};r=${remaining};t=${resetSeconds}${pkParameter(partitionKey)}`;

/**
 * Appends one or more items (already comma-joined) to both headers. Appended,
 * never overwritten, so that several limiters on one route compose into one
 * list per header (docs/conventions.md rules 12.2 and 12.3). Nothing is written once the headers
 * are sent.
 */
export function appendRateLimitHeaders(res: Response, policyItems: string, stateItems: string): void {
  if (res.headersSent) return;
  if (policyItems !== '') appendResponseHeader(res, RATELIMIT_POLICY_HEADER, policyItems);
  // Empty when the store could not tell the state (a failing store, failing open).
  if (stateItems !== '') appendResponseHeader(res, RATELIMIT_HEADER, stateItems);
}
