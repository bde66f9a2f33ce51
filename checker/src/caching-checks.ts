import type { RunContext } from './context.js';
import { shown } from './context.js';
import { describeExchange, type Exchange } from './probe.js';
import { HTTP_DATE } from './spec-values.js';

// RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE.
const ENTITY_TAG = /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

const CACHING_IDS = ['caching.etag', 'caching.last-modified', 'caching.if-none-match', 'caching.if-modified-since'] as const;
// Every check this group decides from the resource's first answer.
const RESOURCE_IDS = [...CACHING_IDS, 'methods.head'] as const;

function checkNotModified(ctx: RunContext, id: (typeof CACHING_IDS)[number], answer: Exchange | undefined): void {
  if (!answer) {
    ctx.skip(id, ctx.budgetReason);
    return;
  }
  const problems: string[] = [];
  if (answer.status !== 304) problems.push(`status ${answer.status}`);
  if (answer.body.length > 0) problems.push(`a body of ${Buffer.byteLength(answer.body)} bytes`);
  ctx.verdict(
    id,
    problems.length === 0
      ? undefined
      : { request: describeExchange(answer), expected: '304 with an empty body', seen: problems.join(', ') },
  );
}

/** The conventions' "Caching": validators on a resource, and conditional GET answered with 304 and no body. */
export async function checkCaching(ctx: RunContext): Promise<void> {
  const resource = ctx.config.resource;
  if (resource === undefined) {
    return ctx.skipEach(RESOURCE_IDS, 'needs a resource URL: give --resource /v1/<collection>/<id>');
  }
  const path = ctx.under(resource);
  const first = await ctx.send({ purpose: 'resource', method: 'GET', path });
  if (!first) {
    return ctx.skipEach(RESOURCE_IDS, ctx.budgetReason);
  }
  if (first.status !== 200) {
    const expected =
      first.status === 405
        ? // A GET route refused with 405: notFound() answers before the route (NestJS adds its routes in app.init()).
          'status 200: a 405 for a GET of the resource is a mount order problem: notFound() and errorHandler() stand before the routes (under NestJS, mount neither and use ConventionsExceptionFilter, docs/guides/nestjs.md)'
        : 'status 200 (--resource must name an existing resource)';
    for (const id of RESOURCE_IDS) {
      ctx.fail(id, { request: describeExchange(first), expected, seen: `status ${first.status}` });
    }
    return;
  }
  const etag = first.headers.etag;
  const lastModified = first.headers['last-modified'];
  const request = describeExchange(first);
  ctx.verdict(
    'caching.etag',
    etag !== undefined && ENTITY_TAG.test(etag)
      ? undefined
      : { request, expected: 'ETag: an entity tag ("..." or W/"...")', seen: `ETag ${shown(etag)}` },
  );
  ctx.verdict(
    'caching.last-modified',
    lastModified !== undefined && HTTP_DATE.test(lastModified)
      ? undefined
      : { request, expected: 'Last-Modified: an HTTP-date in GMT', seen: `Last-Modified ${shown(lastModified)}` },
  );

  const head = await ctx.send({ purpose: 'HEAD', method: 'HEAD', path });
  if (!head) ctx.skip('methods.head', ctx.budgetReason);
  else {
    const problems: string[] = [];
    if (head.status !== 200) problems.push(`status ${head.status}`);
    if (head.body.length > 0) problems.push(`a body of ${Buffer.byteLength(head.body)} bytes`);
    if (head.headers.etag !== etag) problems.push(`ETag ${shown(head.headers.etag)} where the GET sent ${shown(etag)}`);
    ctx.verdict(
      'methods.head',
      problems.length === 0
        ? undefined
        : { request: describeExchange(head), expected: "200, the GET's ETag, no body", seen: problems.join(', ') },
    );
  }

  if (etag === undefined) ctx.skip('caching.if-none-match', 'the resource sent no ETag');
  else {
    const answer = await ctx.send({ purpose: 'If-None-Match', method: 'GET', path, headers: { 'if-none-match': etag } });
    checkNotModified(ctx, 'caching.if-none-match', answer);
  }
  if (lastModified === undefined) ctx.skip('caching.if-modified-since', 'the resource sent no Last-Modified');
  else {
    const answer = await ctx.send({
      purpose: 'If-Modified-Since',
      method: 'GET',
      path,
      headers: { 'if-modified-since': lastModified },
    });
    checkNotModified(ctx, 'caching.if-modified-since', answer);
  }
}

const CONDITIONAL_HEADERS = ['if-none-match', 'if-modified-since'];

/** Status 304 in the conventions: "empty body; only when the client sent cache information", on every 304 the run saw. */
export function checkNotModifiedAnswers(ctx: RunContext): void {
  const id = 'caching.not-modified-only-conditional';
  const answers = ctx.probe.exchanges.filter((exchange) => exchange.status === 304);
  if (answers.length === 0) {
    ctx.skip(id, 'no 304 was seen: give --resource');
    return;
  }
  const bad = answers
    .map((exchange) => {
      const problems: string[] = [];
      if (!exchange.sentHeaders.some((name) => CONDITIONAL_HEADERS.includes(name)))
        problems.push('a 304 to a request without If-None-Match or If-Modified-Since');
      if (exchange.body.length > 0) problems.push(`a body of ${Buffer.byteLength(exchange.body)} bytes`);
      return { exchange, seen: problems.join(', ') };
    })
    .filter((item) => item.seen !== '');
  const first = bad[0];
  ctx.verdict(
    id,
    first
      ? {
          request: `${describeExchange(first.exchange)}${bad.length > 1 ? ` (and ${bad.length - 1} more)` : ''}`,
          expected: '304 with an empty body, only to a conditional request',
          seen: first.seen,
        }
      : undefined,
  );
}
