import type { RunContext } from './context.js';
import { shown } from './context.js';
import { describeExchange, type Exchange } from './probe.js';

const WRITE_IDS = ['caching.changed', 'methods.override-header', 'methods.override-form', 'methods.override-post-only'] as const;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

const success = (exchange: Exchange): boolean => exchange.status >= 200 && exchange.status < 300;

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
  const skipAll = (reason: string) => {
    for (const id of WRITE_IDS) ctx.skip(id, reason);
  };
  if (disposable === undefined || change === undefined)
    return skipAll('needs a resource the run may change: give --disposable /v1/<collection>/<id> and --change <json>');
  if (!allowWrites) return skipAll('changes a resource: give --allow-writes');
  const path = ctx.under(disposable);
  const auth: Record<string, string> = ctx.accessToken ? { authorization: `Bearer ${ctx.accessToken}` } : {};
  const json = JSON.stringify(change);
  const form = (extra: Record<string, string>) =>
    new URLSearchParams({ ...extra, ...Object.fromEntries(Object.entries(change).map(([k, v]) => [k, String(v)])) }).toString();

  const before = await ctx.send({ purpose: 'disposable', method: 'GET', path });
  if (!before) return skipAll(ctx.budgetReason);
  if (before.status !== 200) {
    const evidence = {
      request: describeExchange(before),
      expected: 'status 200 (--disposable must name an existing resource)',
      seen: `status ${before.status}`,
    };
    for (const id of WRITE_IDS) ctx.fail(id, evidence);
    return;
  }
  const oldDate = before.headers['last-modified'];
  const oldTag = before.headers.etag;
  // Last-Modified counts whole seconds: a change within the second it names would not show in it.
  const served = Date.parse(before.headers.date ?? '');
  if (oldDate !== undefined && !(Date.parse(oldDate) < served)) await sleep(1100);

  const patched = await ctx.send({
    purpose: 'change',
    method: 'PATCH',
    path,
    headers: { 'content-type': 'application/json', ...auth },
    body: json,
  });
  const patchFailed =
    patched && !success(patched)
      ? `the PATCH of ${path} answered ${patched.status}: ${
          patched.status === 401 || patched.status === 403
            ? 'give --token-endpoint and a user (EAC_USERNAME, EAC_PASSWORD) whose token may change it'
            : 'give --change with fields it accepts'
        }`
      : undefined;
  if (!patched) ctx.skip('caching.changed', ctx.budgetReason);
  else if (patchFailed) {
    ctx.skip('caching.changed', patchFailed);
  } else if (oldDate === undefined && oldTag === undefined) {
    ctx.skip('caching.changed', `${path} sent neither Last-Modified nor ETag`);
  } else {
    const conditional: Record<string, string> =
      oldDate !== undefined ? { 'if-modified-since': oldDate } : { 'if-none-match': oldTag as string };
    const after = await ctx.send({ purpose: 'changed', method: 'GET', path, headers: conditional });
    if (!after) ctx.skip('caching.changed', ctx.budgetReason);
    else {
      const problems: string[] = [];
      const newDate = after.headers['last-modified'];
      const newTag = after.headers.etag;
      if (after.status !== 200) problems.push(`status ${after.status}`);
      else {
        // The validators it had before must both move (caching.etag and caching.last-modified ask for both).
        if (oldDate !== undefined && (newDate === undefined || !(Date.parse(newDate) > Date.parse(oldDate))))
          problems.push(`Last-Modified ${shown(newDate)} (was ${shown(oldDate)})`);
        if (oldTag !== undefined && (newTag === undefined || newTag === oldTag))
          problems.push(`ETag ${shown(newTag)} (was ${shown(oldTag)})`);
      }
      ctx.verdict(
        'caching.changed',
        problems.length === 0
          ? undefined
          : {
              request: `${describeExchange(after)} (${Object.keys(conditional)[0]}: the date before the PATCH)`,
              expected: '200 with a newer Last-Modified and a new ETag',
              seen: problems.join(', '),
            },
      );
    }
  }

  // Override is judged against the PATCH it stands for: when that one fails, there is nothing to compare.
  if (patchFailed || !patched) {
    for (const id of ['methods.override-header', 'methods.override-form'] as const) ctx.skip(id, patchFailed ?? ctx.budgetReason);
  } else await checkOverride(ctx, path, auth, json, form);

  const safe = await ctx.send({
    purpose: 'override on GET',
    method: 'GET',
    path,
    headers: { 'x-http-method-override': 'DELETE', ...auth },
  });
  ctx.judge('methods.override-post-only', safe, (answer) =>
    [200, 400, 405].includes(answer.status)
      ? undefined
      : {
          request: `${describeExchange(answer)} (X-HTTP-Method-Override: DELETE)`,
          expected: 'the answer of the GET (200), or the override refused (400 or 405); never the DELETE done',
          seen: `status ${answer.status}`,
        },
  );
}

/** POST with the override header, then a form POST with `_method`: each must get the PATCH's 2xx. */
async function checkOverride(
  ctx: RunContext,
  path: string,
  auth: Record<string, string>,
  json: string,
  form: (extra: Record<string, string>) => string,
): Promise<void> {
  const overridden = await ctx.send({
    purpose: 'override header',
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', 'x-http-method-override': 'PATCH', ...auth },
    body: json,
  });
  ctx.judge('methods.override-header', overridden, (answer) =>
    success(answer)
      ? undefined
      : {
          request: `${describeExchange(answer)} (X-HTTP-Method-Override: PATCH)`,
          expected: 'the answer of the PATCH: 2xx',
          seen: `status ${answer.status}`,
        },
  );

  const fromForm = await ctx.send({
    purpose: 'override form',
    method: 'POST',
    path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth },
    body: form({ _method: 'PATCH' }),
  });
  ctx.judge('methods.override-form', fromForm, (answer) =>
    success(answer)
      ? undefined
      : {
          request: `${describeExchange(answer)} (form body with _method=PATCH)`,
          expected: 'the answer of the PATCH: 2xx',
          seen: `status ${answer.status}`,
        },
  );
}
