import type { CheckId } from './catalogue.js';
import { isSpecJsonType, mediaType, parseJson, type RunContext, shown } from './context.js';
import { describeExchange, type Exchange } from './probe.js';

/** A bearer token no server issued: the `invalid_token` probe. */
export const INVALID_TOKEN = 'express-api-conventions-conformance-invalid-token';

const TOKEN_IDS = [
  'auth.token.response',
  'auth.token.expires-in',
  'auth.token.refresh-token',
  'auth.token.no-pragma',
  'auth.token.client-optional',
  'auth.token.client-in-body',
  'auth.token.refresh',
  'auth.token.error',
  'auth.insufficient-rights',
] as const;
const GRANT_IDS = ['auth.token.response', 'auth.token.expires-in', 'auth.token.refresh-token', 'auth.token.no-pragma'] as const;
const INVALID_IDS = [
  'auth.missing-credential',
  'auth.invalid-token.status',
  'auth.invalid-token.headers',
  'auth.invalid-token.body',
] as const;

const TOKEN_EXPECTED = 'status 200, JSON { access_token: string, token_type: "bearer", ... }';

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

/** A refused grant in evidence: its status, and its OAuth error when it has one. */
function refusalOf(exchange: Exchange): string {
  const error = (parseJson(exchange.body) as { error?: unknown } | undefined)?.error;
  return `status ${exchange.status}${typeof error === 'string' ? ` with error ${JSON.stringify(error)}` : ''}`;
}

type TokenAnswer = { token: Record<string, unknown>; accessToken: string } | { problem: string };

/** The token of a good answer (200 JSON, string access_token, token_type bearer), or what is wrong (never a secret). */
function readTokenResponse(exchange: Exchange): TokenAnswer {
  const type = exchange.headers['content-type'];
  const body = parseJson(exchange.body);
  if (exchange.status !== 200) return { problem: refusalOf(exchange) };
  if (!isSpecJsonType(type)) return { problem: `Content-Type ${shown(type)}` };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { problem: 'a body that is not a JSON object' };
  const token = body as Record<string, unknown>;
  const good = typeof token.access_token === 'string' && token.access_token !== '' && token.token_type === 'bearer';
  return good ? { token, accessToken: token.access_token as string } : { problem: tokenShape(token) };
}

/** The access token of a 200, to use in later requests, whether or not the rest of the answer is right. */
function usableToken(exchange: Exchange): string | undefined {
  if (exchange.status !== 200) return undefined;
  const token = (parseJson(exchange.body) as { access_token?: unknown } | undefined)?.access_token;
  return typeof token === 'string' && token !== '' ? token : undefined;
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/**
 * the conventions' "Authentication": the token endpoint's response and error shape
 * (POST: only with allowWrites), client authentication being optional, the
 * 403 of a token without the right, and the 401s of a protected path.
 */
export async function checkAuthentication(ctx: RunContext): Promise<void> {
  await checkTokenEndpoint(ctx);
  await checkInvalidToken(ctx);
}

/** The secrets of a token answer go into the redaction list before anything is reported. */
function remember(ctx: RunContext, exchange: Exchange): void {
  const body = parseJson(exchange.body);
  if (typeof body !== 'object' || body === null) return;
  for (const key of ['access_token', 'refresh_token'] as const) {
    const value = (body as Record<string, unknown>)[key];
    if (typeof value === 'string') ctx.secrets.add(value);
  }
}

/** A POST to the token endpoint with form parameters; with the client's `Authorization: Basic` unless told not to. */
type Grant = (purpose: string, params: Record<string, string>, withClient?: boolean) => Promise<Exchange | undefined>;

/** What the checks after the password grant share: how to ask for a token, and the first answer. */
interface TokenRun {
  readonly ctx: RunContext;
  readonly grant: Grant;
  /** Whether the registered application's id and secret were given. */
  readonly clientGiven: boolean;
  readonly username: string;
  readonly password: string;
  /** The password grant's answer. */
  readonly granted: Exchange;
  /** How evidence names that grant. */
  readonly request: string;
}

/** The token checks that need the password grant: all but the error shape. */
const AFTER_ERROR_IDS = TOKEN_IDS.filter((id) => id !== 'auth.token.error');

/** The token endpoint's checks, one function a group, in the order their requests are sent. */
async function checkTokenEndpoint(ctx: RunContext): Promise<void> {
  const { tokenEndpoint, allowWrites, credentials } = ctx.config;
  if (tokenEndpoint === undefined)
    return ctx.skipEach(TOKEN_IDS, 'needs the token endpoint: give --token-endpoint /v1/oauth2/token');
  if (!allowWrites) return ctx.skipEach(TOKEN_IDS, 'a token request is a POST: give --allow-writes to send it');
  const clientGiven = credentials.clientId !== undefined && credentials.clientSecret !== undefined;
  const grant = tokenGrant(ctx, ctx.under(tokenEndpoint), clientGiven);

  // The error shape first: an unsupported grant type changes no state and counts no failed sign-in.
  await checkTokenError(ctx, grant);

  const { username, password } = credentials;
  if (username === undefined || password === undefined)
    return ctx.skipEach(
      AFTER_ERROR_IDS,
      'needs a user: set EAC_USERNAME and EAC_PASSWORD (credentials.username, credentials.password)',
    );
  const granted = await grant('token', { grant_type: 'password', username, password });
  if (!granted) return ctx.skipEach(AFTER_ERROR_IDS, ctx.budgetReason);
  const request = `${describeExchange(granted)} (grant_type=password${clientGiven ? ', client authenticated' : ''})`;
  const run: TokenRun = { ctx, grant, clientGiven, username, password, granted, request };
  checkPasswordGrant(run);
  await checkClientOptional(run);
  await checkClientInBody(run);
  await checkRefresh(run);
  await checkInsufficientRights(ctx, grant);
}

function tokenGrant(ctx: RunContext, path: string, clientGiven: boolean): Grant {
  const { clientId, clientSecret } = ctx.config.credentials;
  const client: Record<string, string> = clientGiven
    ? { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` }
    : {};
  return async (purpose, params, withClient = true) => {
    const answer = await ctx.send({
      purpose,
      method: 'POST',
      path,
      headers: { ...FORM, ...(withClient ? client : {}) },
      body: new URLSearchParams(params).toString(),
    });
    if (answer) remember(ctx, answer);
    return answer;
  };
}

/** auth.token.error: a grant type no server supports gets the OAuth error shape. */
async function checkTokenError(ctx: RunContext, grant: Grant): Promise<void> {
  const refused = await grant('token error', { grant_type: 'urn:express-api-conventions:conformance-unsupported' });
  ctx.judge('auth.token.error', refused, (answer) => {
    const body = parseJson(answer.body);
    const problems: string[] = [];
    if (answer.status !== 400 && answer.status !== 401) problems.push(`status ${answer.status}`);
    if (mediaType(answer.headers['content-type']) !== 'application/json')
      problems.push(`Content-Type ${shown(answer.headers['content-type'])}`);
    if (typeof body !== 'object' || body === null || typeof (body as { error?: unknown }).error !== 'string') {
      problems.push('a body without a string error');
    }
    if (problems.length === 0) return undefined;
    return {
      request: describeExchange(answer),
      expected: 'status 400 (or 401), JSON { error: string, ... }',
      seen: problems.join(', '),
    };
  });
}

/** The password grant's answer: its shape, `expires_in`, a refresh token, no `Pragma`; its token serves the writes. */
function checkPasswordGrant({ ctx, granted, request }: TokenRun): void {
  const read = readTokenResponse(granted);
  if ('problem' in read) {
    ctx.fail('auth.token.response', { request, expected: TOKEN_EXPECTED, seen: read.problem });
    if (granted.status !== 200) ctx.skipEach(GRANT_IDS.slice(1), 'the password grant was refused');
  } else ctx.pass('auth.token.response');
  // The run's own writes use any token it was given, whatever the shape of the answer that carried it.
  ctx.accessToken = usableToken(granted);
  if (granted.status !== 200) return;
  const token = (parseJson(granted.body) ?? {}) as Record<string, unknown>;
  ctx.verdict(
    'auth.token.expires-in',
    Number.isInteger(token.expires_in)
      ? undefined
      : {
          request,
          expected: 'expires_in: an integer',
          seen: `expires_in ${token.expires_in === undefined ? '(absent)' : JSON.stringify(token.expires_in)}`,
        },
  );
  ctx.verdict(
    'auth.token.refresh-token',
    typeof token.refresh_token === 'string' && token.refresh_token !== ''
      ? undefined
      : { request, expected: 'refresh_token: a string, in the same answer as the access token', seen: tokenShape(token) },
  );
  ctx.verdict(
    'auth.token.no-pragma',
    granted.headers.pragma === undefined
      ? undefined
      : {
          request,
          expected: 'no Pragma on the 200 (Cache-Control: no-store says it)',
          seen: `Pragma ${shown(granted.headers.pragma)}`,
        },
  );
}

const TOKEN_GIVEN = 'status 200 with an access_token';

/** A grant that must give a token (its shape is auth.token.response's to judge); `how` says how it was sent. */
function judgeTokenGiven(ctx: RunContext, id: CheckId, answer: Exchange | undefined, how: string): void {
  ctx.judge(id, answer, (exchange) =>
    usableToken(exchange)
      ? undefined
      : { request: `${describeExchange(exchange)} (${how})`, expected: TOKEN_GIVEN, seen: refusalOf(exchange) },
  );
}

/** Client authentication is optional: the same grant, without any client credentials, gets a token. */
async function checkClientOptional({ ctx, grant, clientGiven, username, password, granted, request }: TokenRun): Promise<void> {
  if (!clientGiven) {
    ctx.verdict(
      'auth.token.client-optional',
      ctx.accessToken ? undefined : { request, expected: TOKEN_GIVEN, seen: refusalOf(granted) },
    );
    return;
  }
  const anonymous = await grant('token', { grant_type: 'password', username, password }, false);
  judgeTokenGiven(ctx, 'auth.token.client-optional', anonymous, 'grant_type=password, no client credentials');
}

/** The client's credentials in the body instead of the header get a token too. */
async function checkClientInBody({ ctx, grant, clientGiven, username, password }: TokenRun): Promise<void> {
  if (!clientGiven)
    return ctx.skip('auth.token.client-in-body', 'needs the registered application: set EAC_CLIENT_ID and EAC_CLIENT_SECRET');
  const { clientId, clientSecret } = ctx.config.credentials;
  const inBody = await grant(
    'token',
    {
      grant_type: 'password',
      username,
      password,
      client_id: clientId as string,
      client_secret: clientSecret as string,
    },
    false,
  );
  judgeTokenGiven(ctx, 'auth.token.client-in-body', inBody, 'grant_type=password, client_id and client_secret in the body');
}

/** The password grant's refresh token gets a new token of the same shape, which the writes then use. */
async function checkRefresh({ ctx, grant, granted }: TokenRun): Promise<void> {
  const refreshToken =
    granted.status === 200 ? (parseJson(granted.body) as { refresh_token?: unknown }).refresh_token : undefined;
  if (typeof refreshToken !== 'string' || refreshToken === '')
    return ctx.skip('auth.token.refresh', 'the password grant gave no refresh token');
  const refreshed = await grant('token refresh', { grant_type: 'refresh_token', refresh_token: refreshToken });
  if (!refreshed) return ctx.skip('auth.token.refresh', ctx.budgetReason);
  const again = readTokenResponse(refreshed);
  ctx.verdict(
    'auth.token.refresh',
    'problem' in again
      ? {
          request: `${describeExchange(refreshed)} (grant_type=refresh_token)`,
          expected: TOKEN_EXPECTED,
          seen: again.problem,
        }
      : undefined,
  );
  ctx.accessToken = usableToken(refreshed) ?? ctx.accessToken;
}

/** 403: a valid token without the right to act, from the limited user or the limited scope. */
async function checkInsufficientRights(ctx: RunContext, grant: Grant): Promise<void> {
  const id = 'auth.insufficient-rights';
  const { forbidden, limitedScope, credentials } = ctx.config;
  if (forbidden === undefined) return ctx.skip(id, 'needs a path a limited token may not use: give --forbidden /v1/<path>');
  const username = credentials.limitedUsername ?? credentials.username;
  const password = credentials.limitedPassword ?? credentials.password;
  if (
    username === undefined ||
    password === undefined ||
    (credentials.limitedUsername === undefined && limitedScope === undefined)
  ) {
    return ctx.skip(
      id,
      'needs a limited token: give --limited-scope <scope>, or set EAC_LIMITED_USERNAME and EAC_LIMITED_PASSWORD',
    );
  }
  const params: Record<string, string> = { grant_type: 'password', username, password };
  if (limitedScope !== undefined) params.scope = limitedScope;
  const granted = await grant('limited token', params);
  if (!granted) return ctx.skip(id, ctx.budgetReason);
  const limitedToken = usableToken(granted);
  if (limitedToken === undefined) {
    return ctx.fail(id, {
      request: `${describeExchange(granted)} (grant_type=password${limitedScope === undefined ? '' : `, scope=${limitedScope}`})`,
      expected: 'a token for the limited credential (status 200 with an access_token)',
      seen: `status ${granted.status}`,
    });
  }
  const used = await ctx.send({
    purpose: 'limited token use',
    method: 'GET',
    path: ctx.under(forbidden),
    headers: { authorization: `Bearer ${limitedToken}` },
  });
  ctx.judgeStatus(id, used, [403], 'Authorization: Bearer <limited token>', 'status 403 (an authorization failure)');
}

async function checkInvalidToken(ctx: RunContext): Promise<void> {
  const target = ctx.config.protected;
  if (target === undefined) return ctx.skipEach(INVALID_IDS, 'needs a protected path: give --protected /v1/<path>');
  const missing = await ctx.send({ purpose: 'no credential', method: 'GET', path: ctx.under(target) });
  ctx.judgeStatus('auth.missing-credential', missing, [401], 'no Authorization', 'status 401 (an authentication failure)');
  const answer = await ctx.send({
    purpose: 'invalid token',
    method: 'GET',
    path: ctx.under(target),
    headers: { authorization: `Bearer ${INVALID_TOKEN}` },
  });
  if (!answer) return ctx.skipEach(INVALID_IDS, ctx.budgetReason);
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
