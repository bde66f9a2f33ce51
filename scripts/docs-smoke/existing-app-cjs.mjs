// The existing-app guide's CommonJS app (docs/guides/existing-app.md, `// existing-app-cjs/app.cjs`:
// helmet, cors, morgan, express-session, passport-local, a legacy route, /health and static files
// in front of or beside the conventions), run by check:docs in its three stages. Each probe asserts
// what the guide asks of that stage, over HTTP, as a browser and a load balancer would send it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const APP_ORIGIN = 'https://app.example.com';
const EVIL = 'https://evil.example';
const JSON_TYPE = 'application/json; charset=utf-8';

/** A cross-origin write as a browser sends it: `Origin`, and Fetch Metadata unless `legacyBrowser`. */
function write(origin, from, { legacyBrowser = false } = {}) {
  const headers = { origin: from, 'content-type': 'application/json', cookie: 'connect.sid=s%3Aabc.def' };
  if (!legacyBrowser) headers['sec-fetch-site'] = 'cross-site';
  return fetch(`${origin}/api/v1/items/1`, { method: 'PUT', headers, body: JSON.stringify({ name: 'Green tea' }) });
}

/** The allowed origin's writes pass: with Fetch Metadata, and with only `Origin` (an older browser). */
async function allowedOriginWrites(origin) {
  for (const legacyBrowser of [false, true]) {
    const res = await write(origin, APP_ORIGIN, { legacyBrowser });
    assert.equal(res.status, 200, `a PUT from ${APP_ORIGIN} (legacyBrowser: ${legacyBrowser}) passes`);
    assert.equal(res.headers.get('access-control-allow-origin'), APP_ORIGIN);
  }
}

/** Stage 1, report-only on /api: nothing is refused or limited. */
export async function reportOnlyRefusesNothing(origin) {
  await allowedOriginWrites(origin);
  const evil = await write(origin, EVIL);
  assert.equal(evil.status, 200, 'report-only: a cross-site write is reported, not refused');
  const statuses = [];
  for (let i = 0; i < 101; i++) statuses.push((await fetch(`${origin}/api/v1/items/1`)).status);
  assert.deepEqual([...new Set(statuses)], [200], 'report-only: the 101st GET of a minute is not limited');
  const legacy = await fetch(`${origin}/api/v1/legacy`);
  assert.equal(`${legacy.status} ${await legacy.text()}`, '200 ["tea","coffee"]');
  assert.equal(legacy.headers.get('content-security-policy-report-only'), "script-src 'self'");
}

/**
 * The conventions' values on an API response that hold with helmet in front today. The guide's
 * point 3 (order means precedence) adds `Content-Security-Policy: script-src 'self'`,
 * `Strict-Transport-Security: max-age=63072000; includeSubDomains` and `X-Frame-Options`
 * `deny`, which helmet's own values still replace.
 */
function assertApiValues(res) {
  const seen = (name) => res.headers.get(name);
  assert.equal(seen('content-type'), JSON_TYPE);
  assert.equal(seen('x-content-type-options'), 'nosniff');
  assert.equal(seen('cache-control'), 'no-store, max-age=0');
  // helmet() runs in front with its own defaults; the conventions' values replace them (order means precedence).
  assert.equal(seen('content-security-policy'), "script-src 'self'");
  assert.equal(seen('strict-transport-security'), 'max-age=63072000; includeSubDomains');
  assert.equal(seen('x-frame-options'), 'deny');
  assert.equal(seen('cross-origin-embedder-policy'), 'require-corp');
  assert.equal(seen('cross-origin-opener-policy'), 'same-origin');
  assert.equal(seen('cross-origin-resource-policy'), 'same-origin');
  assert.equal(seen('referrer-policy'), 'no-referrer');
  assert.equal(seen('x-permitted-cross-domain-policies'), 'none');
  assert.equal(seen('x-dns-prefetch-control'), 'off');
  assert.equal(seen('x-powered-by'), null);
  assert.match(seen('ratelimit-policy') ?? '', /^"user";q=100;w=60;pk=/);
}

/** A page, outside the API: its own policy, none of the API's COEP, `no-store` or limit. */
async function assertPageKeptOut(origin) {
  const page = await fetch(`${origin}/`);
  assert.equal(page.status, 200);
  assert.equal(page.headers.get('content-security-policy'), "default-src 'self'; style-src 'self' 'unsafe-inline'");
  assert.equal(page.headers.get('cross-origin-embedder-policy'), null, 'no COEP on a page');
  assert.equal(page.headers.get('cache-control'), null, 'no `no-store` on a page');
  assert.equal(page.headers.get('ratelimit-policy'), null, 'a page is not counted');
}

/** Stage 2, enforcing on /api: the allowed origin writes, another is refused, the values are there. */
export async function enforcingOnTheApi(origin) {
  await allowedOriginWrites(origin);
  const evil = await write(origin, EVIL);
  assert.equal(evil.status, 403);
  assert.equal((await evil.json()).errors[0].code, 40305);
  assertApiValues(await fetch(`${origin}/api/v1/items/1`));
  const legacy = await fetch(`${origin}/api/v1/legacy`);
  assert.equal(`${legacy.status} ${await legacy.text()}`, '200 ["tea","coffee"]', 'the excepted array still answers');
  await assertPageKeptOut(origin);
}

/** Stage 3, app-wide: the API as in stage 2; pages, /health and static files kept out. */
export async function everywhereWithPagesKeptOut(origin) {
  await allowedOriginWrites(origin);
  assertApiValues(await fetch(`${origin}/api/v1/items/1`));
  await assertPageKeptOut(origin);
  const health = await fetch(`${origin}/health`);
  assert.equal(health.status, 200);
  assert.equal(health.headers.get('ratelimit-policy'), null, '/health is not counted');
  const asset = await fetch(`${origin}/assets/site.css`);
  assert.equal(asset.status, 200);
  assert.equal(asset.headers.get('cache-control'), 'public, max-age=3600', 'static files keep their maxAge');
  assert.equal(asset.headers.get('ratelimit-policy'), null, 'static files are not counted');
}

// The causes whose fix names a middleware of express-api-conventions: in this app those are
// mounted, so a finding under them would send the reader to the wrong middleware.
const OWN_MIDDLEWARE_CAUSES = new Set(['security-headers', 'retired-headers', 'custom-headers', 'cors']);

/**
 * The checker on stage 2, with the legacy route in the guide's baseline: every finding left names
 * the neighbour that produces it (helmet's defaults, the `cors` package), none the wrong middleware.
 */
export function checkerBlamesTheRightParty(baseline) {
  return async function checkerBlamesTheRightParty(origin, { checker, dir }) {
    writeFileSync(join(dir, 'baseline.json'), baseline);
    const args = ['check', `${origin}/api`, '--resource', '/v1/items/1', '--path', '/v1/legacy', '--origin', APP_ORIGIN];
    const result = spawnSync(process.execPath, [checker, ...args, '--baseline', 'baseline.json', '--format', 'json', '--quiet'], {
      cwd: dir,
      encoding: 'utf8',
    });
    assert.ok(result.status === 0 || result.status === 1, `the checker ran (exit ${result.status}): ${result.stderr}`);
    const report = JSON.parse(result.stdout);
    assert.deepEqual(
      report.accepted.map((finding) => finding.id).sort(),
      ['common.top-level-object', 'paths.plural-nouns'],
      'the legacy route is accepted by the baseline',
    );
    const wrong = report.failures.filter((finding) => OWN_MIDDLEWARE_CAUSES.has(finding.cause));
    assert.deepEqual(
      wrong.map((finding) => `${finding.id}: ${finding.cause}`),
      [],
      'no finding names a middleware of this package that is mounted',
    );
    assert.deepEqual(
      [...new Set(report.failures.map((finding) => finding.cause))].filter(
        (cause) => cause !== 'helmet-defaults' && cause !== 'cors-package',
      ),
      [],
      "what is left is helmet's and the cors package's",
    );
  };
}
