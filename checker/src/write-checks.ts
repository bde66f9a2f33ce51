import type { CheckId } from './catalogue.js';
import type { RunContext } from './context.js';
import { shown } from './context.js';
import { describeExchange, type Exchange } from './probe.js';

const WRITE_IDS = ['caching.changed', 'methods.override-header', 'methods.override-form', 'methods.override-post-only'] as const;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

const success = (exchange: Exchange): boolean => exchange.status >= 200 && exchange.status < 300;

/** What the writes share: the disposable resource's path, the token, and the change as JSON and as form fields. */
interface WriteRun {
  readonly ctx: RunContext;
  readonly path: string;
  readonly auth: Record<string, string>;
  readonly json: string;
  readonly form: (extra: Record<string, string>) => string;
}

/**
 * The checks that change state, on the one resource the user named as
 * disposable, and only with allowWrites:
 *
 * 1. GET it: its validators.
 * 2. PATCH it with `change`; then `If-Modified-Since` with the old date must
 *    answer 200 with a new `Last-Modified` and a new tag (Caching,
 *    conditional 3).
 * 3. POST with `X-HTTP-Method-Override: PATCH`, and a form POST with
 *    `_method=PATCH`: each answered as the PATCH (2xx), where a plain POST
 *    to a resource gets 404 or 405. Skipped when the PATCH itself failed.
 * 4. GET with `X-HTTP-Method-Override: DELETE`: answered as the GET (200)
 *    or refused (400, 405), since override is for POST only. Were it honoured, the resource would be
 *    deleted: that is why it must be disposable.
 *
 * Writes carry the password grant's access token when the run has one.
 */
export async function checkWrites(ctx: RunContext): Promise<void> {
  const { disposable, change, allowWrites } = ctx.config;
  if (disposable === undefined || change === undefined)
    return ctx.skipEach(
      WRITE_IDS,
      'needs a resource the run may change: give --disposable /v1/<collection>/<id> and --change <json>',
    );
  if (!allowWrites) return ctx.skipEach(WRITE_IDS, 'changes a resource: give --allow-writes');
  const path = ctx.under(disposable);
  const run: WriteRun = {
    ctx,
    path,
    auth: ctx.accessToken ? { authorization: `Bearer ${ctx.accessToken}` } : {},
    json: JSON.stringify(change),
    form: (extra) =>
      new URLSearchParams({ ...extra, ...Object.fromEntries(Object.entries(change).map(([k, v]) => [k, String(v)])) }).toString(),
  };

  const before = await ctx.send({ purpose: 'disposable', method: 'GET', path });
  if (!before) return ctx.skipEach(WRITE_IDS, ctx.budgetReason);
  if (before.status !== 200) {
    const evidence = {
      request: describeExchange(before),
      expected: 'status 200 (--disposable must name an existing resource)',
      seen: `status ${before.status}`,
    };
    for (const id of WRITE_IDS) ctx.fail(id, evidence);
    return;
  }
  // Last-Modified counts whole seconds: a change within the second it names would not show in it.
  const oldDate = before.headers['last-modified'];
  if (oldDate !== undefined && !(Date.parse(oldDate) < Date.parse(before.headers.date ?? ''))) await sleep(1100);

  const patched = await ctx.send({
    purpose: 'change',
    method: 'PATCH',
    path,
    headers: { 'content-type': 'application/json', ...run.auth },
    body: run.json,
  });
  const patchFailed = patched && !success(patched) ? patchFailure(patched, path) : undefined;
  if (!patched) ctx.skip('caching.changed', ctx.budgetReason);
  else if (patchFailed) ctx.skip('caching.changed', patchFailed);
  else await checkChanged(run, before);

  // Override is judged against the PATCH it stands for: when that one fails, there is nothing to compare.
  if (patchFailed || !patched)
    ctx.skipEach(['methods.override-header', 'methods.override-form'], patchFailed ?? ctx.budgetReason);
  else await checkOverride(run);
  await checkOverridePostOnly(run);
}

/** Why the checks that compare with the PATCH are skipped when it failed, and what to give. */
function patchFailure(patched: Exchange, path: string): string {
  const give =
    patched.status === 401 || patched.status === 403
      ? 'give --token-endpoint and a user (EAC_USERNAME, EAC_PASSWORD) whose token may change it'
      : 'give --change with fields it accepts';
  return `the PATCH of ${path} answered ${patched.status}: ${give}`;
}

/** caching.changed: after the PATCH, a conditional GET with the validators from before gets 200 with new ones. */
async function checkChanged({ ctx, path }: WriteRun, before: Exchange): Promise<void> {
  const oldDate = before.headers['last-modified'];
  const oldTag = before.headers.etag;
  if (oldDate === undefined && oldTag === undefined)
    return ctx.skip('caching.changed', `${path} sent neither Last-Modified nor ETag`);
  const conditional: Record<string, string> =
    oldDate !== undefined ? { 'if-modified-since': oldDate } : { 'if-none-match': oldTag as string };
  const after = await ctx.send({ purpose: 'changed', method: 'GET', path, headers: conditional });
  ctx.judge('caching.changed', after, (answer) => {
    const problems: string[] = [];
    const newDate = answer.headers['last-modified'];
    const newTag = answer.headers.etag;
    if (answer.status !== 200) problems.push(`status ${answer.status}`);
    else {
      // The validators it had before must both move (caching.etag and caching.last-modified ask for both).
      if (oldDate !== undefined && (newDate === undefined || !(Date.parse(newDate) > Date.parse(oldDate))))
        problems.push(`Last-Modified ${shown(newDate)} (was ${shown(oldDate)})`);
      if (oldTag !== undefined && (newTag === undefined || newTag === oldTag))
        problems.push(`ETag ${shown(newTag)} (was ${shown(oldTag)})`);
    }
    if (problems.length === 0) return undefined;
    return {
      request: `${describeExchange(answer)} (${Object.keys(conditional)[0]}: the date before the PATCH)`,
      expected: '200 with a newer Last-Modified and a new ETag',
      seen: problems.join(', '),
    };
  });
}

/** A POST that overrides its method to PATCH must get the PATCH's 2xx; `how` says how it asked. */
function judgeAsPatch(ctx: RunContext, id: CheckId, answer: Exchange | undefined, how: string): void {
  ctx.judge(id, answer, (exchange) =>
    success(exchange)
      ? undefined
      : {
          request: `${describeExchange(exchange)} (${how})`,
          expected: 'the answer of the PATCH: 2xx',
          seen: `status ${exchange.status}`,
        },
  );
}

/** POST with the override header, then a form POST with `_method`: each must get the PATCH's 2xx. */
async function checkOverride({ ctx, path, auth, json, form }: WriteRun): Promise<void> {
  const overridden = await ctx.send({
    purpose: 'override header',
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', 'x-http-method-override': 'PATCH', ...auth },
    body: json,
  });
  judgeAsPatch(ctx, 'methods.override-header', overridden, 'X-HTTP-Method-Override: PATCH');
  const fromForm = await ctx.send({
    purpose: 'override form',
    method: 'POST',
    path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth },
    body: form({ _method: 'PATCH' }),
  });
  judgeAsPatch(ctx, 'methods.override-form', fromForm, 'form body with _method=PATCH');
}

/** A GET asking to be a DELETE is answered as the GET or refused, never done as the DELETE. */
async function checkOverridePostOnly({ ctx, path, auth }: WriteRun): Promise<void> {
  const safe = await ctx.send({
    purpose: 'override on GET',
    method: 'GET',
    path,
    headers: { 'x-http-method-override': 'DELETE', ...auth },
  });
  ctx.judgeStatus(
    'methods.override-post-only',
    safe,
    [200, 400, 405],
    'X-HTTP-Method-Override: DELETE',
    'the answer of the GET (200), or the override refused (400 or 405); never the DELETE done',
  );
}
