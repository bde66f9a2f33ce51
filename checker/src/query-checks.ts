import { errorBodyProblem, isSpecJsonType, parseJson, type RunContext, shown } from './context.js';
import { describeExchange, type Exchange } from './probe.js';
import { isListAnswer } from './resource-checks.js';

/** A field name no API has: `fields` naming it must be refused. */
export const UNKNOWN_FIELD = 'eacNoSuchField';

const QUERY_IDS = [
  'query.limit',
  'query.has-next-while-more',
  'query.invalid-paging',
  'query.fields',
  'query.fields-unknown',
] as const;

/** The list's items: the first array in the body (`users` of `{ users, hasNext }`). */
function itemsOf(exchange: Exchange): { key: string; items: unknown[] } | undefined {
  const body = parseJson(exchange.body);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const found = Object.entries(body).find(([, value]) => Array.isArray(value));
  return found ? { key: found[0], items: found[1] as unknown[] } : undefined;
}

/** The path with `name=value` set in its query. */
function withQuery(path: string, params: Readonly<Record<string, string>>): string {
  const url = new URL(path, 'http://checker.invalid');
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return `${url.pathname}${url.search}`;
}

/** What is wrong with a refusal: not 400, or not the JSON error body. */
function refusalProblem(exchange: Exchange): string | undefined {
  if (exchange.status !== 400) return `status ${exchange.status}`;
  if (!isSpecJsonType(exchange.headers['content-type'])) return `Content-Type ${shown(exchange.headers['content-type'])}`;
  return errorBodyProblem(exchange.body);
}

const REFUSAL_EXPECTED = 'status 400 with a JSON { errors: [{ message, code }] } body';

/** The list the checks work on: its answer, and the items it held. */
interface ListRun {
  readonly ctx: RunContext;
  readonly list: Exchange;
  readonly whole: { key: string; items: unknown[] };
  readonly path: string;
}

/**
 * the conventions' "Common query parameters" and "Field selection", on the first
 * list result the run read (a `--path` naming a collection): `limit`
 * honoured, `hasNext` true while more follows, malformed paging refused,
 * `fields` selecting and refusing. All GET.
 */
export async function checkQueryParameters(ctx: RunContext): Promise<void> {
  // A --path answer, whether the run GOT it for its checks or while exploring (explore.ts GETs the given paths first).
  const given = new Set(ctx.config.paths.map((path) => ctx.under(path)));
  const list = ctx.probe.exchanges.find(
    (exchange) =>
      (exchange.purpose === 'path' || (exchange.purpose === 'explore' && given.has(exchange.path))) && isListAnswer(exchange),
  );
  const whole = list ? itemsOf(list) : undefined;
  if (!list || !whole) return ctx.skipEach(QUERY_IDS, 'needs a list: give --path with a collection, e.g. --path /v1/users');
  const run: ListRun = { ctx, list, whole, path: list.path };
  await checkLimit(run);
  await checkInvalidPaging(run);
  await checkFieldSelection(run);
  await checkUnknownField(run);
}

/** `limit=1`: at most one item, and `hasNext` true when the whole list held more. */
async function checkLimit({ ctx, list, whole, path }: ListRun): Promise<void> {
  const limited = await ctx.send({ purpose: 'limit', method: 'GET', path: withQuery(path, { limit: '1' }) });
  if (!limited) return ctx.skipEach(['query.limit', 'query.has-next-while-more'], ctx.budgetReason);
  const page = itemsOf(limited);
  const request = describeExchange(limited);
  ctx.verdict(
    'query.limit',
    limited.status === 200 && page && page.items.length <= 1
      ? undefined
      : {
          request,
          expected: 'status 200 with at most 1 item',
          seen: page ? `status ${limited.status} with ${page.items.length} items in "${page.key}"` : `status ${limited.status}`,
        },
  );
  const hasNext = (parseJson(limited.body) as { hasNext?: unknown } | undefined)?.hasNext;
  const more = whole.items.length >= 2 || (parseJson(list.body) as { hasNext?: unknown }).hasNext === true;
  if (!more) return ctx.skip('query.has-next-while-more', `the list ${path} holds fewer than 2 items: give a --path with more`);
  ctx.verdict(
    'query.has-next-while-more',
    hasNext === true
      ? undefined
      : {
          request,
          expected: `hasNext: true (${describeExchange(list)} held ${whole.items.length} items)`,
          seen: `hasNext ${hasNext === undefined ? '(absent)' : JSON.stringify(hasNext)}`,
        },
  );
}

/** Malformed `limit` and `offset` values: each refused with 400 and the error body. */
async function checkInvalidPaging({ ctx, path }: ListRun): Promise<void> {
  const refusals: Exchange[] = [];
  for (const params of [{ limit: 'abc' }, { limit: '-1' }, { offset: 'abc' }] as Record<string, string>[]) {
    const answer = await ctx.send({ purpose: 'invalid paging', method: 'GET', path: withQuery(path, params) });
    if (!answer) break;
    refusals.push(answer);
  }
  if (refusals.length < 3) return ctx.skip('query.invalid-paging', ctx.budgetReason);
  const bad = refusals.map((exchange) => ({ exchange, problem: refusalProblem(exchange) })).filter((item) => item.problem);
  const first = bad[0];
  ctx.verdict(
    'query.invalid-paging',
    first
      ? {
          request: `${describeExchange(first.exchange)}${bad.length > 1 ? ` (and ${bad.length - 1} more of 3)` : ''}`,
          expected: REFUSAL_EXPECTED,
          seen: first.problem as string,
        }
      : undefined,
  );
}

/** `fields` naming one field of the first item: every item holds only that field (and its `_str` twin). */
async function checkFieldSelection({ ctx, whole, path }: ListRun): Promise<void> {
  // One field of the first item: not `id`, which may come with `id_str`, when another exists.
  const first = whole.items.find((item) => typeof item === 'object' && item !== null && !Array.isArray(item)) as
    | Record<string, unknown>
    | undefined;
  const keys = first ? Object.keys(first) : [];
  const field = keys.find((key) => key !== 'id' && !key.endsWith('_str')) ?? keys[0];
  if (field === undefined) return ctx.skip('query.fields', `the list ${path} has no item with a field to select`);
  const selected = await ctx.send({ purpose: 'fields', method: 'GET', path: withQuery(path, { fields: field }) });
  ctx.judge('query.fields', selected, (answer) => {
    const page = itemsOf(answer);
    const allowed = new Set([field, `${field}_str`]);
    const extra = page?.items
      .flatMap((item) => (typeof item === 'object' && item !== null ? Object.keys(item) : []))
      .filter((key) => !allowed.has(key));
    if (answer.status === 200 && page && extra?.length === 0) return undefined;
    return {
      request: describeExchange(answer),
      expected: `status 200, every item holding only "${field}"`,
      seen:
        answer.status !== 200 || !page
          ? `status ${answer.status}`
          : `items also holding ${[...new Set(extra)].map((key) => `"${key}"`).join(', ')}`,
    };
  });
}

/** `fields` naming a field no API has: refused with 400 and the error body. */
async function checkUnknownField({ ctx, path }: ListRun): Promise<void> {
  const unknown = await ctx.send({ purpose: 'unknown field', method: 'GET', path: withQuery(path, { fields: UNKNOWN_FIELD }) });
  ctx.judge('query.fields-unknown', unknown, (answer) => {
    const problem = refusalProblem(answer);
    return problem ? { request: describeExchange(answer), expected: REFUSAL_EXPECTED, seen: problem } : undefined;
  });
}
