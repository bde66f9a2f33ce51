import type { CauseId } from './causes.js';
import { mediaType, type RunContext, shown } from './context.js';
import { isCorsPackagePreflight } from './neighbours.js';
import { describeExchange, type Exchange } from './probe.js';
import type { CheckEvidence } from './report.js';

const PREFLIGHT_IDS = [
  'cors.preflight.status',
  'cors.preflight.content-length',
  'cors.preflight.content-type',
  'cors.preflight.allow-origin',
  'cors.preflight.allow-methods',
  'cors.preflight.allow-headers',
  'cors.preflight.max-age',
] as const;
const ALL_IDS = [...PREFLIGHT_IDS, 'cors.actual.allow-origin', 'cors.look-alike-refused'] as const;

// "comma list": tokens separated by commas (RFC 9110 §5.6.1 list syntax).
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const COMMA_LIST = new RegExp(`^\\s*${TOKEN}(\\s*,\\s*${TOKEN})*\\s*$`);
const INTEGER = /^\d+$/;

const listItems = (value: string): string[] => value.split(',').map((item) => item.trim());

/**
 * An origin that a careless check would let through: the allowed one with
 * a suffix on its host (`https://app.example` → `https://app.example.attacker.invalid`),
 * which defeats prefix matching and unanchored regexes.
 */
export function lookAlikeOrigin(origin: string): string {
  const url = new URL(origin);
  return `${url.protocol}//${url.hostname}.attacker.invalid${url.port ? `:${url.port}` : ''}`;
}

/** Problem with `Access-Control-Allow-Origin` (and `-Credentials`) for an allowed origin, or undefined. */
function allowOriginProblem(exchange: Exchange, origin: string): string | undefined {
  const allow = exchange.headers['access-control-allow-origin'];
  const credentials = exchange.headers['access-control-allow-credentials'];
  if (allow !== origin && allow !== '*') return `Access-Control-Allow-Origin ${shown(allow)}`;
  if (credentials !== undefined && credentials !== 'true') return `Access-Control-Allow-Credentials ${shown(credentials)}`;
  if (allow === '*' && credentials === 'true')
    return 'Access-Control-Allow-Origin "*" with Access-Control-Allow-Credentials "true"';
  return undefined;
}

/** The evidence of an answer that does not allow an allowed origin, or undefined. */
function allowOriginEvidence(exchange: Exchange, origin: string): CheckEvidence | undefined {
  const problem = allowOriginProblem(exchange, origin);
  if (!problem) return undefined;
  return {
    request: describeExchange(exchange),
    expected: `Access-Control-Allow-Origin ${JSON.stringify(origin)} (or "*" without credentials)`,
    seen: problem,
  };
}

/** The request headers of a preflight from `origin`, asking for the configured method and headers. */
function preflightRequestHeaders(ctx: RunContext, origin: string): Record<string, string> {
  const { preflightMethod, preflightHeaders } = ctx.config;
  return {
    origin,
    'access-control-request-method': preflightMethod,
    'access-control-request-headers': preflightHeaders.join(', ').toLowerCase(),
  };
}

/** The conventions' "Cross-origin (CORS)": the preflight shape for an allowed origin, and refusal of a look-alike. */
export async function checkCors(ctx: RunContext): Promise<void> {
  const { origin } = ctx.config;
  if (origin === undefined) return ctx.skipEach(ALL_IDS, 'needs an allowed origin: give --origin https://app.example');
  const path = ctx.under(ctx.config.resource ?? ctx.config.paths[0] ?? '/');
  const headers = preflightRequestHeaders(ctx, origin);
  const preflight = await ctx.send({ purpose: 'CORS preflight', method: 'OPTIONS', path, headers });
  if (!preflight) return ctx.skipEach(ALL_IDS, ctx.budgetReason);
  checkPreflightAnswer(ctx, preflight);
  checkPreflightAllows(ctx, preflight, origin);

  const actual = await ctx.send({ purpose: 'CORS request', method: 'GET', path, headers: { origin } });
  ctx.judge('cors.actual.allow-origin', actual, (answer) => allowOriginEvidence(answer, origin));

  if (preflight.headers['access-control-allow-origin'] === '*')
    return ctx.skip('cors.look-alike-refused', 'the API allows every origin ("*"), as docs/conventions.md §8.1 permits');
  await checkLookAlikeRefused(ctx, path, origin);
}

/** Who answered a preflight the conventions' way or not: the `cors` package with its defaults, or the usual cause. */
const preflightCause = (preflight: Exchange): CauseId | undefined =>
  isCorsPackagePreflight(preflight) ? 'cors-package' : undefined;

/** The preflight's own answer: 200, empty, text/plain. */
function checkPreflightAnswer(ctx: RunContext, preflight: Exchange): void {
  const request = describeExchange(preflight);
  const h = preflight.headers;
  const cause = preflightCause(preflight);
  ctx.verdict(
    'cors.preflight.status',
    preflight.status === 200 ? undefined : { request, expected: 'status 200', seen: `status ${preflight.status}` },
    cause,
  );
  ctx.verdict(
    'cors.preflight.content-length',
    h['content-length'] === '0' && preflight.body.length === 0
      ? undefined
      : {
          request,
          expected: 'Content-Length: 0 and no body',
          seen: `Content-Length ${shown(h['content-length'])}, ${Buffer.byteLength(preflight.body)} body bytes`,
        },
    cause,
  );
  ctx.verdict(
    'cors.preflight.content-type',
    mediaType(h['content-type']) === 'text/plain'
      ? undefined
      : { request, expected: 'Content-Type: text/plain', seen: `Content-Type ${shown(h['content-type'])}` },
    cause,
  );
}

/** What the preflight allows: the origin, the method and headers asked for, and for how long. */
function checkPreflightAllows(ctx: RunContext, preflight: Exchange, origin: string): void {
  const { preflightMethod, preflightHeaders } = ctx.config;
  const request = describeExchange(preflight);
  const h = preflight.headers;
  const cause = preflightCause(preflight);
  ctx.verdict('cors.preflight.allow-origin', allowOriginEvidence(preflight, origin), cause);
  const methods = h['access-control-allow-methods'];
  const methodsGood =
    methods !== undefined &&
    COMMA_LIST.test(methods) &&
    listItems(methods).some((item) => item === '*' || item.toUpperCase() === preflightMethod);
  ctx.verdict(
    'cors.preflight.allow-methods',
    methodsGood
      ? undefined
      : {
          request,
          expected: `Access-Control-Allow-Methods: a comma list holding ${preflightMethod}`,
          seen: `Access-Control-Allow-Methods ${shown(methods)}`,
        },
    cause,
  );
  const headers = h['access-control-allow-headers'];
  const allowedHeaders =
    headers !== undefined && COMMA_LIST.test(headers) ? listItems(headers).map((item) => item.toLowerCase()) : [];
  const headersGood =
    allowedHeaders.length > 0 &&
    preflightHeaders.every((name) => allowedHeaders.includes(name.toLowerCase()) || allowedHeaders.includes('*'));
  ctx.verdict(
    'cors.preflight.allow-headers',
    headersGood
      ? undefined
      : {
          request,
          expected: `Access-Control-Allow-Headers: a comma list holding ${preflightHeaders.join(', ')}`,
          seen: `Access-Control-Allow-Headers ${shown(headers)}`,
        },
    cause,
  );
  const maxAge = h['access-control-max-age'];
  ctx.verdict(
    'cors.preflight.max-age',
    maxAge !== undefined && INTEGER.test(maxAge)
      ? undefined
      : {
          request,
          expected: 'Access-Control-Max-Age: an integer number of seconds',
          seen: `Access-Control-Max-Age ${shown(maxAge)}`,
        },
    cause,
  );
}

/** A preflight from a look-alike of the allowed origin must not be allowed. */
async function checkLookAlikeRefused(ctx: RunContext, path: string, origin: string): Promise<void> {
  const lookAlike = lookAlikeOrigin(origin);
  const refused = await ctx.send({
    purpose: 'CORS look-alike',
    method: 'OPTIONS',
    path,
    headers: preflightRequestHeaders(ctx, lookAlike),
  });
  ctx.judge('cors.look-alike-refused', refused, (answer) => {
    // A refusal that became a server error (another error layer made a 500 of the 403) is no refusal.
    if (answer.status >= 500) {
      return {
        request: `${describeExchange(answer)} (Origin: ${lookAlike})`,
        expected: 'a refusal (403) or an answer without Access-Control-Allow-Origin, never a server error',
        seen: `status ${answer.status}`,
      };
    }
    const granted = answer.headers['access-control-allow-origin'];
    if (granted !== lookAlike && granted !== '*') return undefined;
    return {
      request: `${describeExchange(answer)} (Origin: ${lookAlike})`,
      expected: 'no Access-Control-Allow-Origin for an origin that is not allowed',
      seen: `Access-Control-Allow-Origin ${shown(granted)}`,
    };
  });
}
