import { isSpecJsonType, mediaType, parseJson, type RunContext, shown } from './context.js';
import { describeExchange, type Exchange } from './probe.js';

/** A bearer token no server issued: the `invalid_token` probe. */
export const INVALID_TOKEN = 'express-api-conventions-conformance-invalid-token';

const TOKEN_IDS = ['auth.token.response', 'auth.token.refresh', 'auth.token.error'] as const;
const INVALID_IDS = ['auth.invalid-token.status', 'auth.invalid-token.headers', 'auth.invalid-token.body'] as const;

const TOKEN_EXPECTED =
  'status 200, JSON { access_token: string, token_type: "bearer", expires_in: integer, refresh_token: string }';

/**
 * The shape of a token response, without its secrets: strings are shown as
 * `string`, so evidence never carries a token.
 */
function tokenShape(body: Record<string, unknown>): string {
  const field = (name: string, showValue: boolean) => {
    const value = body[name];
    if (value === undefined) return `${name}: (absent)`;
    if (showValue || typeof value !== 'string') return `${name}: ${JSON.stringify(value)}`;
    return `${name}: string`;
  };
  return `{ ${[field('access_token', false), field('token_type', true), field('expires_in', true), field('refresh_token', false)].join(', ')} }`;
}

/** The refresh token of a good token response, or a description of what is wrong (never a secret). */
function readTokenResponse(exchange: Exchange): { refreshToken: string } | { problem: string } {
  const type = exchange.headers['content-type'];
  const body = parseJson(exchange.body);
  if (exchange.status !== 200) {
    const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
    return { problem: `status ${exchange.status}${typeof error === 'string' ? ` with error ${JSON.stringify(error)}` : ''}` };
  }
  if (!isSpecJsonType(type)) return { problem: `Content-Type ${shown(type)}` };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { problem: 'a body that is not a JSON object' };
  const token = body as Record<string, unknown>;
  const good =
    typeof token.access_token === 'string' &&
    token.access_token !== '' &&
    token.token_type === 'bearer' &&
    Number.isInteger(token.expires_in) &&
    typeof token.refresh_token === 'string' &&
    token.refresh_token !== '';
  return good ? { refreshToken: token.refresh_token as string } : { problem: tokenShape(token) };
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/**
 * SPEC.md "Authentication": the token endpoint's response and error shape
 * (POST: only with allowWrites), and the `invalid_token` answer of a
 * protected path.
 */
export async function checkAuthentication(ctx: RunContext): Promise<void> {
  await checkTokenEndpoint(ctx);
  await checkInvalidToken(ctx);
}

async function checkTokenEndpoint(ctx: RunContext): Promise<void> {
  const { tokenEndpoint, allowWrites, credentials } = ctx.config;
  const skipAll = (reason: string) => {
    for (const id of TOKEN_IDS) ctx.skip(id, reason);
  };
  if (tokenEndpoint === undefined) return skipAll('needs the token endpoint: give --token-endpoint /v1/oauth2/token');
  if (!allowWrites) return skipAll('a token request is a POST: give --allow-writes to send it');
  const path = ctx.under(tokenEndpoint);
  const client: Record<string, string> =
    credentials.clientId !== undefined && credentials.clientSecret !== undefined
      ? { authorization: `Basic ${Buffer.from(`${credentials.clientId}:${credentials.clientSecret}`).toString('base64')}` }
      : {};

  // The error shape first: an unsupported grant type changes no state and counts no failed sign-in.
  const refused = await ctx.send({
    purpose: 'token error',
    method: 'POST',
    path,
    headers: { ...FORM, ...client },
    body: new URLSearchParams({ grant_type: 'urn:express-api-conventions:conformance-unsupported' }).toString(),
  });
  if (!refused) ctx.skip('auth.token.error', ctx.budgetReason);
  else {
    const body = parseJson(refused.body);
    const problems: string[] = [];
    if (refused.status !== 400 && refused.status !== 401) problems.push(`status ${refused.status}`);
    if (mediaType(refused.headers['content-type']) !== 'application/json')
      problems.push(`Content-Type ${shown(refused.headers['content-type'])}`);
    if (typeof body !== 'object' || body === null || typeof (body as { error?: unknown }).error !== 'string') {
      problems.push('a body without a string error');
    }
    ctx.verdict(
      'auth.token.error',
      problems.length === 0
        ? undefined
        : {
            request: describeExchange(refused),
            expected: 'status 400 (or 401), JSON { error: string, ... }',
            seen: problems.join(', '),
          },
    );
  }

  if (credentials.username === undefined || credentials.password === undefined) {
    const reason = 'needs a user: set EAC_USERNAME and EAC_PASSWORD (credentials.username, credentials.password)';
    ctx.skip('auth.token.response', reason);
    ctx.skip('auth.token.refresh', reason);
    return;
  }
  const granted = await ctx.send({
    purpose: 'token',
    method: 'POST',
    path,
    headers: { ...FORM, ...client },
    body: new URLSearchParams({
      grant_type: 'password',
      username: credentials.username,
      password: credentials.password,
    }).toString(),
  });
  if (!granted) {
    ctx.skip('auth.token.response', ctx.budgetReason);
    ctx.skip('auth.token.refresh', ctx.budgetReason);
    return;
  }
  const read = readTokenResponse(granted);
  if ('problem' in read) {
    ctx.fail('auth.token.response', {
      request: `${describeExchange(granted)} (grant_type=password)`,
      expected: TOKEN_EXPECTED,
      seen: read.problem,
    });
    ctx.skip('auth.token.refresh', 'the password grant gave no refresh token');
    return;
  }
  ctx.secrets.add(read.refreshToken);
  ctx.pass('auth.token.response');
  const refreshed = await ctx.send({
    purpose: 'token refresh',
    method: 'POST',
    path,
    headers: { ...FORM, ...client },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: read.refreshToken }).toString(),
  });
  if (!refreshed) {
    ctx.skip('auth.token.refresh', ctx.budgetReason);
    return;
  }
  const again = readTokenResponse(refreshed);
  ctx.verdict(
    'auth.token.refresh',
    'problem' in again
      ? { request: `${describeExchange(refreshed)} (grant_type=refresh_token)`, expected: TOKEN_EXPECTED, seen: again.problem }
      : undefined,
  );
}

async function checkInvalidToken(ctx: RunContext): Promise<void> {
  const target = ctx.config.protected;
  if (target === undefined) {
    for (const id of INVALID_IDS) ctx.skip(id, 'needs a protected path: give --protected /v1/<path>');
    return;
  }
  const answer = await ctx.send({
    purpose: 'invalid token',
    method: 'GET',
    path: ctx.under(target),
    headers: { authorization: `Bearer ${INVALID_TOKEN}` },
  });
  if (!answer) {
    for (const id of INVALID_IDS) ctx.skip(id, ctx.budgetReason);
    return;
  }
  const request = `${describeExchange(answer)} (Authorization: Bearer <invalid>)`;
  ctx.verdict(
    'auth.invalid-token.status',
    answer.status === 401 ? undefined : { request, expected: 'status 401', seen: `status ${answer.status}` },
  );
  const h = answer.headers;
  const problems: string[] = [];
  if (mediaType(h['content-type']) !== 'application/json') problems.push(`Content-Type ${shown(h['content-type'])}`);
  const cacheControl = h['cache-control']?.split(',').map((part) => part.trim().toLowerCase()) ?? [];
  if (!cacheControl.includes('no-store')) problems.push(`Cache-Control ${shown(h['cache-control'])}`);
  if (h.pragma?.toLowerCase() !== 'no-cache') problems.push(`Pragma ${shown(h.pragma)}`);
  ctx.verdict(
    'auth.invalid-token.headers',
    problems.length === 0
      ? undefined
      : {
          request,
          expected: 'Content-Type: application/json, Cache-Control: no-store, Pragma: no-cache',
          seen: problems.join(', '),
        },
  );
  const body = parseJson(answer.body);
  const error =
    typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { error?: unknown }).error : undefined;
  ctx.verdict(
    'auth.invalid-token.body',
    error === 'invalid_token'
      ? undefined
      : {
          request,
          expected: 'a JSON object with error "invalid_token"',
          seen:
            body === undefined
              ? `body ${shown(answer.body.slice(0, 80))}`
              : `error ${shown(typeof error === 'string' ? error : undefined)}`,
        },
  );
}
