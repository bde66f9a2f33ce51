import type { RunContext } from './context.js';
import { type DocumentedOperation, documentedOperation } from './openapi-source.js';
import { describeExchange, type Exchange } from './probe.js';
import { SECURITY_HEADERS } from './spec-values.js';

/**
 * With `--openapi`: whether the document says what the service answered.
 * Every exchange on an operation of the document is read back: its status
 * must be listed for the operation, and each header the conventions send
 * (security headers, caching, rate limit, CORS) must be declared for that
 * status. A contract test (Schemathesis, Dredd, Prism) fails on the same
 * gaps; `withConventions()` fills them.
 */

/** The response headers the conventions' preset sends, lower case. */
export const CONVENTION_HEADERS: readonly string[] = [
  ...SECURITY_HEADERS.map((row) => row.name),
  'cache-control',
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
  'etag',
  'last-modified',
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-expose-headers',
];

interface Gap {
  readonly exchange: Exchange;
  readonly operation: DocumentedOperation;
  readonly missing: readonly string[];
}

const gapEvidence = (gaps: readonly Gap[], expected: (gap: Gap) => string) => {
  const first = gaps[0] as Gap;
  const more = gaps.length > 1 ? ` (and ${gaps.length - 1} more ${gaps.length === 2 ? 'answer' : 'answers'})` : '';
  return { request: describeExchange(first.exchange), expected: expected(first), seen: `${first.missing.join(', ')}${more}` };
};

/** Reads every exchange of the run against the document; skips both checks without one. */
export function checkOpenApiDocument(ctx: RunContext, doc: Readonly<Record<string, unknown>> | undefined): void {
  const ids = ['common.openapi-statuses', 'common.openapi-headers'] as const;
  if (!doc) {
    ctx.skipEach(ids, 'needs --openapi (the service’s OpenAPI document)');
    return;
  }
  const statusGaps: Gap[] = [];
  const headerGaps: Gap[] = [];
  let read = 0;
  for (const exchange of ctx.probe.exchanges) {
    const path = exchange.path.split('?')[0] as string;
    const local = ctx.prefix !== '' && path.startsWith(ctx.prefix) ? path.slice(ctx.prefix.length) || '/' : path;
    const operation = documentedOperation(doc, exchange.method, local);
    if (!operation) continue;
    read += 1;
    const declared = operation.responseHeaders(exchange.status);
    if (declared === undefined) {
      statusGaps.push({ exchange, operation, missing: [`status ${exchange.status} not listed`] });
      continue;
    }
    const missing = CONVENTION_HEADERS.filter((name) => name in exchange.headers && !declared.has(name));
    if (missing.length > 0) headerGaps.push({ exchange, operation, missing });
  }
  if (read === 0) {
    ctx.skipEach(ids, 'no answer of the run was on an operation of the document');
    return;
  }
  const named = (gap: Gap) => `${gap.operation.method.toUpperCase()} ${gap.operation.path}`;
  ctx.verdict(
    'common.openapi-statuses',
    statusGaps.length === 0 ? undefined : gapEvidence(statusGaps, (gap) => `${named(gap)} lists ${gap.exchange.status}`),
  );
  ctx.verdict(
    'common.openapi-headers',
    headerGaps.length === 0
      ? undefined
      : gapEvidence(headerGaps, (gap) => `${named(gap)} ${gap.exchange.status} declares the headers it sends`),
  );
}
