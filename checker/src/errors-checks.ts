import { errorBodyProblem, excerpt, isSpecJsonType, JSON_EXPECTED, parseJson, type RunContext, shown } from './context.js';
import { TOKEN_PURPOSES } from './header-checks.js';
import { describeExchange, type Exchange } from './probe.js';

/** A path no API answers; the checker never lints it as one of the API's own. */
export const UNKNOWN_ROUTE = '/v1/express-api-conventions-no-such-route';

const ERROR_BODY_EXPECTED = 'a JSON object { errors: [{ message: string, code: integer }, ...] }';

function checkErrorAnswer(
  ctx: RunContext,
  exchange: Exchange,
  prefix: 'errors.not-found' | 'errors.method-not-allowed',
  status: number,
) {
  const request = describeExchange(exchange);
  ctx.verdict(
    `${prefix}.status`,
    exchange.status === status ? undefined : { request, expected: `status ${status}`, seen: `status ${exchange.status}` },
  );
  const type = exchange.headers['content-type'];
  ctx.verdict(
    `${prefix}.json`,
    isSpecJsonType(type) ? undefined : { request, expected: JSON_EXPECTED, seen: `Content-Type ${shown(type)}` },
  );
  const problem = errorBodyProblem(exchange.body);
  ctx.verdict(`${prefix}.body`, problem ? { request, expected: ERROR_BODY_EXPECTED, seen: problem } : undefined);
}

const METHOD_LIST = /^\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*\s*$/;

/**
 * the conventions' "Errors": a wrong URI gets 404 JSON; a method the path does not
 * answer gets 405 with `Allow`. The wrong method is TRACE: a safe method
 * (RFC 9110 §9.2.1) that APIs do not route, so the probe changes nothing.
 */
export async function checkErrors(ctx: RunContext): Promise<void> {
  const unknown = await ctx.send({ purpose: 'unknown route', method: 'GET', path: ctx.under(UNKNOWN_ROUTE) });
  if (unknown) checkErrorAnswer(ctx, unknown, 'errors.not-found', 404);
  else ctx.skipEach(['errors.not-found.status', 'errors.not-found.json', 'errors.not-found.body'], ctx.budgetReason);

  await checkMissingResource(ctx, unknown);

  const existing = ctx.config.resource ?? ctx.config.paths[0];
  const ids = [
    'errors.method-not-allowed.status',
    'errors.method-not-allowed.allow',
    'errors.method-not-allowed.json',
    'errors.method-not-allowed.body',
  ] as const;
  if (existing === undefined) return ctx.skipEach(ids, 'needs an existing path: give --resource or --path');
  const wrong = await ctx.send({ purpose: 'wrong method', method: 'TRACE', path: ctx.under(existing) });
  if (!wrong) {
    return ctx.skipEach(ids, ctx.budgetReason);
  }
  checkErrorAnswer(ctx, wrong, 'errors.method-not-allowed', 405);
  const allow = wrong.headers.allow;
  const good = allow !== undefined && METHOD_LIST.test(allow) && !/\bTRACE\b/i.test(allow);
  ctx.verdict(
    'errors.method-not-allowed.allow',
    good
      ? undefined
      : {
          request: describeExchange(wrong),
          expected: 'Allow: a comma list of the methods the path answers (not TRACE)',
          seen: `Allow ${shown(allow)}`,
        },
  );
}

/** The conventions' "Errors" rules 1 and 2, on every error answer the run saw (HEAD answers have no body). */
export function checkErrorBodies(ctx: RunContext): void {
  const errors = ctx.probe.exchanges.filter((exchange) => exchange.status >= 400 && exchange.method !== 'HEAD');
  if (errors.length === 0) {
    ctx.skip('errors.json-bodies', 'no 4xx or 5xx answer was seen');
    ctx.skip('errors.body-shape', 'no 4xx or 5xx answer was seen');
    return;
  }
  const shapes = errors
    .map((exchange) => ({
      exchange,
      seen: isOAuthAnswer(exchange) ? oauthBodyProblem(exchange.body) : errorBodyProblem(exchange.body),
    }))
    .filter((item) => item.seen !== undefined);
  const firstShape = shapes[0];
  ctx.verdict(
    'errors.body-shape',
    firstShape
      ? {
          request: `${describeExchange(firstShape.exchange)}${shapes.length > 1 ? ` (and ${shapes.length - 1} more of ${errors.length})` : ''}`,
          expected: isOAuthAnswer(firstShape.exchange)
            ? 'an OAuth 2.0 error body { error: string, ... } (RFC 6749 §5.2, RFC 6750 §3.1)'
            : ERROR_BODY_EXPECTED,
          seen: firstShape.seen as string,
        }
      : undefined,
  );
  const evidence = errors
    .map((exchange) => {
      const type = exchange.headers['content-type'];
      if (exchange.body.trim() === '') return { exchange, seen: `an empty body (Content-Type ${shown(type)})` };
      if (!isSpecJsonType(type)) return { exchange, seen: `Content-Type ${shown(type)}` };
      return undefined;
    })
    .filter((item) => item !== undefined);
  const first = evidence[0];
  ctx.verdict(
    'errors.json-bodies',
    first
      ? {
          request: `${describeExchange(first.exchange)}${evidence.length > 1 ? ` (and ${evidence.length - 1} more)` : ''}`,
          expected: `a JSON body with ${JSON_EXPECTED}`,
          seen: first.seen,
        }
      : undefined,
  );
}

/**
 * The answers to which the conventions give the OAuth 2.0 shape instead ("Token error body":
 * `error`): the token endpoint's errors, and a bearer challenge that names
 * an error (`WWW-Authenticate: Bearer ... error="invalid_token"`, RFC 6750 §3.1).
 * A 401 without any credential names no error, and has the API's error body.
 */
export function isOAuthAnswer(exchange: Exchange): boolean {
  if (TOKEN_PURPOSES.has(exchange.purpose)) return true;
  const challenge = exchange.headers['www-authenticate'];
  return challenge !== undefined && /^\s*bearer\b/i.test(challenge) && /\berror\s*=/i.test(challenge);
}

function oauthBodyProblem(body: string): string | undefined {
  const parsed = parseJson(body);
  if (parsed === undefined) return body.trim() === '' ? 'an empty body' : `a body that is not JSON: ${excerpt(body)}`;
  const good = typeof parsed === 'object' && parsed !== null && typeof (parsed as { error?: unknown }).error === 'string';
  return good ? undefined : `JSON ${excerpt(body)}`;
}

/** The id the checker asks for in place of --resource's: no API has it. */
export const MISSING_ID = 'express-api-conventions-no-such-id';

/**
 * the conventions' "Errors" rule 4: "a 404 carries enough detail to tell a missing
 * resource from a wrong URI". The resource's last segment replaced by an id
 * no API has must answer 404 with a body other than the wrong URI's.
 */
async function checkMissingResource(ctx: RunContext, unknown: Exchange | undefined): Promise<void> {
  const id = 'errors.not-found.distinct';
  const { resource } = ctx.config;
  if (resource === undefined) return ctx.skip(id, 'needs a resource URL: give --resource /v1/<collection>/<id>');
  if (!unknown) return ctx.skip(id, ctx.budgetReason);
  const own = ctx.under(resource).split('?')[0] as string;
  // `/v1/<collection>/<id>`: without a collection before it, the id's place is a wrong URI, not a missing resource.
  if (
    own
      .slice(ctx.prefix.length)
      .split('/')
      .filter((segment) => segment !== '').length < 3
  )
    return ctx.skip(id, 'needs --resource of the form /v1/<collection>/<id>');
  const path = own.replace(/\/[^/]*$/, `/${MISSING_ID}`);
  const missing = await ctx.send({ purpose: 'missing resource', method: 'GET', path });
  if (!missing) return ctx.skip(id, ctx.budgetReason);
  const request = `${describeExchange(missing)} and ${describeExchange(unknown)}`;
  if (missing.status !== 404)
    return ctx.fail(id, { request, expected: 'status 404 for a missing resource', seen: `status ${missing.status}` });
  ctx.verdict(
    id,
    missing.body.trim() !== '' && missing.body !== unknown.body
      ? undefined
      : {
          request,
          expected: "a 404 body that differs from the wrong URI's (another code or message)",
          seen: missing.body.trim() === '' ? 'an empty body' : `the same body: ${excerpt(missing.body)}`,
        },
  );
}
