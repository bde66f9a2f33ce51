import { firstOffender, mediaType, type RunContext } from './context.js';
import { describeExchange } from './probe.js';
import { ESCAPED_GT, ESCAPED_LT } from './spec-values.js';

/** The value written into the reflecting endpoint: both characters the conventions want escaped. */
export const REFLECTION_PROBE = '<eac-probe>';

/** Where the probe goes in the `reflect` option. */
export const PROBE_PLACEHOLDER = '{probe}';

export function reflectionPath(reflect: string): string {
  const encoded = encodeURIComponent(REFLECTION_PROBE);
  if (reflect.includes(PROBE_PLACEHOLDER)) return reflect.replace(PROBE_PLACEHOLDER, encoded);
  return `${reflect}${reflect.includes('?') ? '&' : '?'}q=${encoded}`;
}

/**
 * the conventions' "JSON output escaping" rule 2: a named endpoint that writes a
 * request value back must write `<` and `>` as `\u003C` and `\u003E`. Raw
 * `<` or `>` in any JSON body seen also fails the check.
 */
export async function checkJsonEscaping(ctx: RunContext): Promise<void> {
  const id = 'json.escape-angle-brackets';
  let unproven: string | undefined;
  if (ctx.config.reflect !== undefined) {
    const answer = await ctx.send({ purpose: 'reflection', method: 'GET', path: ctx.under(reflectionPath(ctx.config.reflect)) });
    if (!answer) ctx.skip(id, ctx.budgetReason);
    else {
      const escaped = `${ESCAPED_LT}eac-probe${ESCAPED_GT}`;
      const request = `${describeExchange(answer)} (probe ${JSON.stringify(REFLECTION_PROBE)})`;
      const expected = `the probe written as ${escaped}`;
      // A search the checker found (openapi) need not write `q` back: without the probe in its answer it proves nothing.
      const guessed = ctx.config.discovered.has('reflect') && !answer.body.toLowerCase().includes('eac-probe');
      if (guessed)
        unproven = `the search found in the OpenAPI document (${answer.path.split('?')[0]}) did not write the probe back; give --reflect`;
      else if (answer.body.includes(escaped)) ctx.pass(id);
      else if (answer.body.includes(REFLECTION_PROBE)) ctx.fail(id, { request, expected, seen: `${REFLECTION_PROBE} unescaped` });
      else if (answer.body.toLowerCase().includes(escaped.toLowerCase())) {
        ctx.fail(id, {
          request,
          expected,
          seen: '\\u003c...\\u003e (lower-case hex; docs/conventions.md §9.2 writes \\u003C and \\u003E)',
        });
      } else
        ctx.fail(id, {
          request,
          expected,
          seen: `no probe in the ${answer.status} answer: --reflect must name an endpoint that writes it back`,
        });
    }
  }
  const json = ctx.probe.exchanges.filter((exchange) => mediaType(exchange.headers['content-type'])?.endsWith('json'));
  const raw = firstOffender(json, 'no raw < or > in JSON', (exchange) =>
    /[<>]/.test(exchange.body) ? `raw ${exchange.body.includes('<') ? '<' : '>'} in the body` : undefined,
  );
  if (raw) ctx.fail(id, raw);
  else if (ctx.config.reflect === undefined || unproven !== undefined) {
    // A value with < or > that the run wrote (a --change such as {"name":"<Probe>"}) shows the escapes too.
    if (json.some((exchange) => exchange.body.includes(ESCAPED_LT) || exchange.body.includes(ESCAPED_GT))) ctx.pass(id);
    else
      ctx.skip(
        id,
        unproven ?? 'needs a < or > in an answer: give --reflect "/v1/<path>?q={probe}", or a --change whose value holds < or >',
      );
  }
}
