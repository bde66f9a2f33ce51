import { resourceContextOf, WELL_KNOWN_PREFIX } from 'express-api-conventions/extend';
import { lintBody, type ResponseRule } from 'express-api-conventions/lint';
import { parseJson, type RunContext } from './context.js';
import { describeExchange, type Exchange } from './probe.js';
import { largeIntegerFindings, readRawJson } from './raw-json.js';

/**
 * the conventions' "Conventions for every resource", on the JSON bodies the run has
 * already read: no request of its own. The key rules are the response-shape
 * linter's (src/lint/body-rules.ts, `lintBody()`), so a body gets the
 * same verdict from the linter in development and from the checker outside;
 * large integers are read from the body text, never through JSON.parse.
 */

/** The linter rules each check reports. */
const LINT_CHECKS = [
  ['resource.key-case', 'camelCase', 'camelCase keys'],
  ['resource.timestamp-suffix', 'timestampSuffix', 'timestamp keys ending in At'],
  ['resource.no-resource-prefix', 'resourcePrefix', 'no key repeating the resource name'],
  ['resource.date-time', 'dateTime', 'RFC 3339 date-times (2026-01-31T09:30:00Z or +hh:mm)'],
  ['resource.gender', 'gender', 'gender "male" or "female"'],
] as const satisfies readonly (readonly [string, ResponseRule, string])[];

const LOOKS_LIKE_DATE_TIME = /"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}/;

/** A JSON object body with the path it answered, or undefined. */
function objectBody(exchange: Exchange): Record<string, unknown> | undefined {
  if (exchange.method === 'HEAD' || exchange.status === 304) return undefined;
  const parsed = parseJson(exchange.body);
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : undefined;
}

const pathOf = (exchange: Exchange): string => exchange.path.split('?')[0] as string;

/** Whether an answer is a list result: a 2xx GET of a list path (a collection or a search) whose body holds an array. */
export function isListAnswer(exchange: Exchange): boolean {
  if (exchange.method !== 'GET' || exchange.status < 200 || exchange.status >= 300) return false;
  const body = objectBody(exchange);
  return body !== undefined && resourceContextOf(pathOf(exchange)).list && Object.values(body).some(Array.isArray);
}

/** The first offender of a set of findings, with how many answers break the rule. */
function verdictOf(
  ctx: RunContext,
  id: Parameters<RunContext['pass']>[0],
  offenders: readonly { exchange: Exchange; seen: string }[],
  expected: string,
): void {
  const first = offenders[0];
  if (!first) {
    ctx.pass(id);
    return;
  }
  const more = offenders.length > 1 ? ` (and ${offenders.length - 1} more)` : '';
  ctx.fail(id, { request: `${describeExchange(first.exchange)}${more}`, expected, seen: first.seen });
}

/**
 * "Nesting: flat by default. Nested objects are used when the same structure
 * occurs more than once." Observed as: an object held by a key (not an item
 * of an array) is nested; it is allowed when another object in the same
 * parent has the same set of keys (two parties of one kind).
 */
export function nestingFindings(body: unknown, path = ''): string[] {
  const found: string[] = [];
  if (Array.isArray(body)) {
    for (const item of body) found.push(...nestingFindings(item, `${path}[]`));
    return [...new Set(found)];
  }
  if (typeof body !== 'object' || body === null) return found;
  const entries = Object.entries(body as Record<string, unknown>);
  const shapeOf = (value: unknown) =>
    Object.keys(value as object)
      .sort()
      .join(',');
  const objects = entries.filter(([, value]) => typeof value === 'object' && value !== null && !Array.isArray(value));
  for (const [key, value] of objects) {
    const at = path === '' ? key : `${path}.${key}`;
    const twins = objects.filter(([, other]) => shapeOf(other) === shapeOf(value)).length;
    if (twins < 2) found.push(`"${at}" is a nested object whose structure occurs once`);
    found.push(...nestingFindings(value, at));
  }
  for (const [key, value] of entries) {
    if (Array.isArray(value)) found.push(...nestingFindings(value, path === '' ? key : `${path}.${key}`));
  }
  return [...new Set(found)];
}

export function checkResourceConventions(ctx: RunContext): void {
  // A well-known document (RFC 8615: the RFC 8414 metadata) is shaped by its
  // own RFC, snake_case keys included: not a resource of the API.
  const bodies = ctx.probe.exchanges
    .filter((exchange) => !pathOf(exchange).startsWith(WELL_KNOWN_PREFIX))
    .map((exchange) => ({ exchange, body: objectBody(exchange) }))
    .filter((item): item is { exchange: Exchange; body: Record<string, unknown> } => item.body !== undefined);
  const noJson = 'no JSON object body was seen';

  // Key rules: every JSON body, errors included (they are the API's too), each with the resource of its path.
  const lint = bodies.map(({ exchange, body }) => ({
    exchange,
    // An error answer is never a list result (NestJS's `{ "message": [...] }`), as in the response linter.
    findings: lintBody(
      body,
      exchange.status >= 400 ? { ...resourceContextOf(pathOf(exchange)), list: false } : resourceContextOf(pathOf(exchange)),
    ),
  }));
  const timestamps = bodies.some(({ exchange }) => LOOKS_LIKE_DATE_TIME.test(exchange.body));
  const genders = bodies.some(({ exchange }) => exchange.body.includes('"gender"'));
  for (const [id, rule, expected] of LINT_CHECKS) {
    if (bodies.length === 0) ctx.skip(id, noJson);
    else if ((id === 'resource.timestamp-suffix' || id === 'resource.date-time') && !timestamps)
      ctx.skip(id, 'no date-time value was seen');
    else if (id === 'resource.gender' && !genders) ctx.skip(id, 'no "gender" field was seen');
    else {
      const offenders = lint.flatMap(({ exchange, findings }) => {
        const finding = findings.find((item) => item.rule === rule);
        return finding ? [{ exchange, seen: `${finding.path}: ${finding.message}` }] : [];
      });
      verdictOf(ctx, id, offenders, expected);
    }
  }

  // Nesting: successful bodies only (an error's `detail` is the error model's own).
  const successes = bodies.filter(({ exchange }) => exchange.status >= 200 && exchange.status < 300);
  if (successes.length === 0) ctx.skip('resource.flat', 'no 2xx JSON body was seen');
  else {
    verdictOf(
      ctx,
      'resource.flat',
      successes.flatMap(({ exchange, body }) => {
        const found = nestingFindings(body)[0];
        return found ? [{ exchange, seen: found }] : [];
      }),
      'flat objects; a nested object only where another object of the same structure sits beside it',
    );
  }

  // Large integers, from the body text.
  let pairs = false;
  const large = bodies.flatMap(({ exchange }) => {
    const raw = readRawJson(exchange.body);
    if (!raw) return [];
    const { findings, seen } = largeIntegerFindings(raw);
    pairs ||= seen;
    const first = findings[0];
    return first ? [{ exchange, seen: `${first.path}: ${first.seen}` }] : [];
  });
  if (!pairs) ctx.skip('resource.large-integers', 'no integer beyond 2^53 and no `id_str` was seen');
  else verdictOf(ctx, 'resource.large-integers', large, '"id": <digits> beside "id_str": "<the same digits>"');

  // Paging flag, on every list result seen.
  const lists = ctx.probe.exchanges.filter(isListAnswer);
  if (lists.length === 0) ctx.skip('resource.has-next', 'no list result was seen: give --path with a collection');
  else {
    verdictOf(
      ctx,
      'resource.has-next',
      lists.flatMap((exchange) => {
        const flag = (objectBody(exchange) as Record<string, unknown>).hasNext;
        return typeof flag === 'boolean'
          ? []
          : [{ exchange, seen: `hasNext ${flag === undefined ? '(absent)' : JSON.stringify(flag)}` }];
      }),
      'hasNext: true or false',
    );
  }
}
