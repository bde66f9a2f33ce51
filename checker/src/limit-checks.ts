import { type BareItem, type Item, type List, parseList } from 'structured-headers';
import { firstOffender, type RunContext, shown } from './context.js';
import { describeExchange, type Exchange } from './probe.js';
import { LEGACY_RATE_LIMIT_HEADERS } from './spec-values.js';

/**
 * the conventions' "Limits": `RateLimit-Policy` and `RateLimit` are Structured Field
 * lists (RFC 9651), parsed with `structured-headers`; each item is a quoted
 * policy name with parameters.
 */

const isInteger = (value: BareItem | undefined): boolean => typeof value === 'number' && Number.isInteger(value) && value >= 0;
const isByteSequence = (value: BareItem | undefined): boolean => value instanceof ArrayBuffer;

interface ParamRule {
  readonly name: string;
  readonly required: boolean;
  readonly valid: (value: BareItem | undefined) => boolean;
  readonly kind: string;
}

/** "`q` (quota, required); `qu` (quota unit, default requests); `w` (window in seconds); `pk` (partition key)." */
const POLICY_PARAMS: readonly ParamRule[] = [
  { name: 'q', required: true, valid: isInteger, kind: 'an integer' },
  { name: 'qu', required: false, valid: (value) => typeof value === 'string', kind: 'a string' },
  { name: 'w', required: false, valid: isInteger, kind: 'an integer' },
  { name: 'pk', required: false, valid: isByteSequence, kind: 'a byte sequence' },
];

/** "`r` (remaining, required); `t` (seconds until reset); `pk`." */
const STATE_PARAMS: readonly ParamRule[] = [
  { name: 'r', required: true, valid: isInteger, kind: 'an integer' },
  { name: 't', required: false, valid: isInteger, kind: 'an integer' },
  { name: 'pk', required: false, valid: isByteSequence, kind: 'a byte sequence' },
];

/** The items of a rate-limit field, or what is wrong with it. */
export function readRateLimitField(value: string, rules: readonly ParamRule[]): { items: Item[] } | { problem: string } {
  let list: List;
  try {
    list = parseList(value);
  } catch (error) {
    return { problem: `not a structured list (${(error as Error).message})` };
  }
  if (list.length === 0) return { problem: 'an empty list' };
  const items: Item[] = [];
  for (const member of list) {
    if (Array.isArray(member[0])) return { problem: 'an inner list where a policy item belongs' };
    const item = member as Item;
    if (typeof item[0] !== 'string')
      return { problem: `an item that is not a quoted policy name (${JSON.stringify(String(item[0]))})` };
    for (const rule of rules) {
      const param = item[1].get(rule.name);
      if (param === undefined) {
        if (rule.required) return { problem: `policy ${JSON.stringify(item[0])} without ${rule.name}` };
      } else if (!rule.valid(param)) {
        return { problem: `policy ${JSON.stringify(item[0])} with ${rule.name} that is not ${rule.kind}` };
      }
    }
    items.push(item);
  }
  return { items };
}

/** A RateLimit-Policy value with every `pk` parameter removed, for comparison (unparsable values as they are). */
function withoutPartitionKeys(value: string): string {
  try {
    return JSON.stringify(
      parseList(value).map((member) => [member[0], [...member[1].entries()].filter(([name]) => name !== 'pk')]),
    );
  } catch {
    return value;
  }
}

export function checkLimits(ctx: RunContext): void {
  const all = ctx.probe.exchanges;
  ctx.verdict(
    'limits.no-x-ratelimit',
    firstOffender(all, 'none of X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset', (exchange) => {
      const legacy = LEGACY_RATE_LIMIT_HEADERS.filter((name) => exchange.headers[name] !== undefined);
      return legacy.length === 0 ? undefined : legacy.map((name) => `${name} ${shown(exchange.headers[name])}`).join(', ');
    }),
  );

  const withPolicy = all.filter((exchange) => exchange.headers['ratelimit-policy'] !== undefined);
  if (withPolicy.length === 0) {
    ctx.skip('limits.policy-syntax', 'no RateLimit-Policy was seen (docs/conventions.md §12.2: the service may send it)');
    ctx.skip('limits.policy-constant', 'no RateLimit-Policy was seen');
  } else {
    ctx.verdict(
      'limits.policy-syntax',
      firstOffender(withPolicy, 'RateLimit-Policy: "name";q=<integer>[;qu="unit"][;w=<seconds>][;pk=:key:], ...', (exchange) => {
        const value = exchange.headers['ratelimit-policy'] as string;
        const read = readRateLimitField(value, POLICY_PARAMS);
        return 'problem' in read ? `${shown(value)}: ${read.problem}` : undefined;
      }),
    );
    // `pk` names the caller's partition: two callers (a client authenticated, then none) get two
    // keys. The run speaks as several callers, so it compares the policies without their `pk`.
    const firstByPath = new Map<string, { value: string; policy: string }>();
    ctx.verdict(
      'limits.policy-constant',
      firstOffender(withPolicy, 'the same RateLimit-Policy on every response of a path (pk aside)', (exchange) => {
        const path = exchange.path.split('?')[0] as string;
        const value = exchange.headers['ratelimit-policy'] as string;
        const policy = withoutPartitionKeys(value);
        const first = firstByPath.get(path);
        if (first === undefined) firstByPath.set(path, { value, policy });
        return first === undefined || first.policy === policy ? undefined : `${shown(value)} after ${shown(first.value)}`;
      }),
    );
  }

  const withState = all.filter((exchange) => exchange.headers.ratelimit !== undefined);
  if (withState.length === 0)
    ctx.skip('limits.state-syntax', 'no RateLimit was seen (docs/conventions.md §12.3: the service may send it)');
  else {
    ctx.verdict(
      'limits.state-syntax',
      firstOffender(
        withState,
        'RateLimit: "name";r=<integer>[;t=<seconds>][;pk=:key:], naming a policy of RateLimit-Policy',
        (exchange) => {
          const value = exchange.headers.ratelimit as string;
          const read = readRateLimitField(value, STATE_PARAMS);
          if ('problem' in read) return `${shown(value)}: ${read.problem}`;
          const policy = exchange.headers['ratelimit-policy'];
          if (policy === undefined) return undefined;
          const policies = readRateLimitField(policy, POLICY_PARAMS);
          if ('problem' in policies) return undefined;
          const names = new Set(policies.items.map((item) => item[0]));
          const stray = read.items.find((item) => !names.has(item[0]));
          return stray
            ? `${shown(value)}: policy ${JSON.stringify(stray[0])} is not in RateLimit-Policy ${shown(policy)}`
            : undefined;
        },
      ),
    );
  }

  checkRetryAfter(ctx, all);
}

/** limits.retry-after on the 429s seen (the rate-limit probe's included); a probe that met a 5xx first fails it. */
function checkRetryAfter(ctx: RunContext, all: readonly Exchange[]): void {
  const limited = all.filter((exchange) => exchange.status === 429);
  const failed = all.find((exchange) => exchange.purpose === LIMIT_PROBE && exchange.status >= 500);
  if (limited.length === 0 && failed) {
    ctx.fail('limits.retry-after', {
      request: describeExchange(failed),
      expected: '429 with Retry-After once the limit is exceeded, never a server error',
      seen: `status ${failed.status}`,
    });
    return;
  }
  if (limited.length === 0) {
    ctx.skip('limits.retry-after', 'no 429 was seen within the request budget');
    return;
  }
  ctx.verdict(
    'limits.retry-after',
    firstOffender(limited, 'Retry-After: <seconds>, equal to the t of the exhausted RateLimit policy', retryAfterProblem),
  );
}

const LIMIT_PROBE = 'rate-limit probe';

/**
 * The opt-in rate-limit probe (`probeLimit`): GETs of the resource until one
 * answers 429 or a server error, at most `probeLimit`; checkLimits() then
 * judges what it saw.
 */
export async function probeRateLimit(ctx: RunContext): Promise<void> {
  const limit = ctx.config.probeLimit;
  const target = ctx.config.resource ?? ctx.config.paths[0];
  if (limit === undefined || target === undefined) return;
  for (let sent = 0; sent < limit; sent++) {
    const answer = await ctx.send({ purpose: LIMIT_PROBE, method: 'GET', path: ctx.under(target) });
    if (!answer || answer.status === 429 || answer.status >= 500) return;
  }
}

/** The conventions' Limits rule 2: "the server makes both point to the same instant" (1 s of rounding allowed). */
function retryAfterProblem(exchange: Exchange): string | undefined {
  const retryAfter = exchange.headers['retry-after'];
  if (retryAfter === undefined || !/^\d+$/.test(retryAfter)) return `Retry-After ${shown(retryAfter)}`;
  const state = exchange.headers.ratelimit;
  if (state === undefined) return undefined;
  const read = readRateLimitField(state, STATE_PARAMS);
  if ('problem' in read) return undefined;
  const exhausted = [...read.items].sort((a, b) => Number(a[1].get('r')) - Number(b[1].get('r')))[0];
  const t = exhausted?.[1].get('t');
  if (typeof t !== 'number') return undefined;
  return Math.abs(t - Number(retryAfter)) <= 1 ? undefined : `Retry-After ${shown(retryAfter)} but RateLimit ${shown(state)}`;
}
