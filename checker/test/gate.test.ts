import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import express from 'express';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../test/support/chromium.js';
import { CHROMIUM, closeServer, describeWith, freePort, listen } from '../../test/support/services.js';
import { exitCodeOf, runCli } from '../src/cli.js';
import {
  CONFORMANCE_CHECK_IDS,
  type ConformanceReport,
  checkConventions,
  formatHtml,
  formatReport,
  formatSarif,
} from '../src/index.js';
import { buildReport } from '../src/report.js';
import { compliantApp } from './fixtures/compliant-app.js';
import { plainExpressApp } from './fixtures/plain-express.js';

/**
 * What a team that gates merges on the checker relies on: findings grouped
 * by cause with the fix, severities from the rule's wording, `--fail-on`
 * and its exit codes, `--ignore` patterns, a baseline that round-trips
 * (accept, a new finding fails, a fixed one is reported), SARIF that
 * validates against the SARIF 2.1.0 schema, and an HTML page a person opens.
 */

/** SARIF 2.1.0 as Microsoft's SARIF SDK ships it (a JSON Schema 2020-12 rendering of the OASIS schema). */
const SARIF_SCHEMA = JSON.parse(
  // The package's exports map leaves its assets out: read the file where npm installs it.
  readFileSync(
    join(__dirname, '..', '..', 'node_modules', '@microsoft', 'sarif-multitool-ts', 'assets', 'sarif-2.1.0.schema.json'),
    'utf8',
  ),
) as Record<string, unknown>;

// ajv-formats is CommonJS with `exports.default`: one shape under ts-jest, another under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

function sarifValidator() {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  return ajv.compile(SARIF_SCHEMA);
}

describe('findings of a plain Express app, grouped by cause', () => {
  let report: ConformanceReport;
  beforeAll(async () => {
    report = await checkConventions(plainExpressApp(), { resource: '/v1/users/1', paths: ['/v1/users'] });
  });

  it('puts the eleven security-header failures under the one missing securityHeaders()', () => {
    const cause = report.causes.find((group) => group.id === 'security-headers');
    expect(cause?.checks).toEqual([
      'security.hsts',
      'security.csp',
      'security.nosniff',
      'security.frame-options',
      'security.referrer-policy',
      'security.cross-domain-policies',
      'security.dns-prefetch-control',
      'security.coop',
      'security.corp',
      'security.coep',
      'security.cache-control',
    ]);
    expect(cause?.severity).toBe('must');
    expect(cause?.fix).toContain('`securityHeaders()`');
    expect(cause?.elsewhere).toContain('`X-Content-Type-Options: nosniff`');
  });

  it('puts the failures of the HTML error pages under one cause, with the fix for either kind of service', () => {
    const cause = report.causes.find((group) => group.id === 'json-errors');
    expect(cause?.checks).toEqual(
      expect.arrayContaining(['errors.not-found.json', 'errors.json-bodies', 'errors.not-found.body', 'errors.body-shape']),
    );
    expect(cause?.fix).toContain('`notFound()` and `errorHandler()`');
    expect(cause?.elsewhere).toContain('never an HTML page');
  });

  it('groups every counted failure exactly once, MUST-level causes first', () => {
    expect(report.causes.flatMap((group) => group.checks).sort()).toEqual(report.failures.map((f) => f.id).sort());
    const order = report.causes.map((group) => ['must', 'should', 'advice'].indexOf(group.severity));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it('rates each failure by the wording of its rule', () => {
    const severity = (id: string) => report.results.find((result) => result.id === id)?.severity;
    // "A top-level array is never returned", "JSON is never served as text/html", "`nosniff` is sent".
    expect([severity('common.top-level-object'), severity('errors.not-found.json'), severity('security.nosniff')]).toEqual([
      'must',
      'must',
      'must',
    ]);
    // "Example body shape"; "Nested objects ... by default"; plural nouns judged by an English word list.
    expect([severity('errors.body-shape'), severity('resource.flat'), severity('paths.plural-nouns')]).toEqual([
      'should',
      'advice',
      'should',
    ]);
  });

  it('prints the causes with their fix, each failing check beneath with its evidence', () => {
    const text = formatReport(report);
    const block = text.slice(text.indexOf('What to fix:'));
    expect(block).toMatch(
      /^What to fix: \d+ failing checks from \d+ causes\n\nMUST {2}The security response headers of the conventions/,
    );
    expect(block).toContain('  fix:        Mount `securityHeaders()`');
    expect(block).toContain('  elsewhere:  Send on every response:');
    expect(block).toContain(
      [
        '  FAIL  errors.not-found.json  [MUST]  The 404 of an unknown route is `application/json; charset=utf-8`, never HTML',
        '        request:  GET /v1/express-api-conventions-no-such-route -> 404',
      ].join('\n'),
    );
    expect(text).toMatch(/\nFAILS --fail-on must: \d+ MUST, \d+ SHOULD(, \d+ ADVICE)? findings\n/);
  });

  it('keeps the exchange that showed each failure, without cookie values or tokens', () => {
    const failure = report.failures.find((f) => f.id === 'errors.not-found.json');
    expect(failure?.exchange).toMatchObject({
      method: 'GET',
      path: '/v1/express-api-conventions-no-such-route',
      status: 404,
      headers: expect.objectContaining({ 'content-type': 'text/html; charset=utf-8' }),
    });
    expect(failure?.exchange?.body).toContain('Cannot GET');
  });

  it('writes SARIF 2.1.0 that validates against the schema: a rule per check, a result per finding', () => {
    const sarif = JSON.parse(formatSarif(report, { version: '0.1.0', artifact: 'docs/openapi.yaml' }));
    const validate = sarifValidator();
    expect(validate(sarif) ? [] : validate.errors).toEqual([]);
    const run = sarif.runs[0];
    expect(run.tool.driver.rules.map((rule: { id: string }) => rule.id)).toEqual(CONFORMANCE_CHECK_IDS);
    for (const rule of run.tool.driver.rules) {
      expect(rule.helpUri).toMatch(/^https:\/\/github\.com\/.+\/docs\/[a-z0-9-]+\.md$/);
      expect(rule.help.text).toContain('Fix: ');
    }
    expect(run.results.map((result: { ruleId: string }) => result.ruleId)).toEqual(report.failures.map((f) => f.id));
    const nosniff = run.results.find((result: { ruleId: string }) => result.ruleId === 'security.nosniff');
    expect(nosniff).toMatchObject({
      level: 'error',
      locations: [{ physicalLocation: { artifactLocation: { uri: 'docs/openapi.yaml' } } }],
      webRequest: { method: 'GET' },
    });
    const bodyShape = run.results.find((result: { ruleId: string }) => result.ruleId === 'errors.body-shape');
    expect(bodyShape.level).toBe('warning');
  });

  it('the schema does refuse a SARIF log that breaks it (the validation is not vacuous)', () => {
    const sarif = JSON.parse(formatSarif(report));
    sarif.runs[0].results[0].level = 'fatal';
    expect(sarifValidator()(sarif)).toBe(false);
  });
});

describe('the exit code says which severity failed the run', () => {
  const results = (severityOf: string) =>
    CONFORMANCE_CHECK_IDS.map((id) => ({
      id,
      section: 'Errors' as const,
      title: id,
      rule: 'r',
      status: id === severityOf ? ('fail' as const) : ('pass' as const),
      ...(id === severityOf ? { evidence: { expected: 'x', seen: 'y' } } : {}),
    }));
  it.each([
    ['security.nosniff', 'must', 1],
    ['errors.body-shape', 'must', 0],
    ['errors.body-shape', 'should', 4],
    ['resource.flat', 'should', 0],
    ['resource.flat', 'advice', 5],
    ['security.nosniff', 'advice', 1],
  ] as const)('%s failing, --fail-on %s: exit %i', (id, failOn, code) => {
    expect(exitCodeOf(buildReport('http://x/', 1, results(id), { gate: { failOn } }))).toBe(code);
  });
});

/** The compliant fixture, with faults switched on between runs through the headers it sets. */
function faultyApp(faults: Set<string>) {
  const outer = express();
  outer.disable('x-powered-by');
  outer.use((_req, res, next) => {
    const setHeader = res.setHeader;
    res.setHeader = function faultySetHeader(this: typeof res, name: string, value: number | string | readonly string[]) {
      const header = name.toLowerCase();
      if (faults.has('frame') && header === 'x-frame-options') return this;
      if (faults.has('referrer') && header === 'referrer-policy') return this;
      return setHeader.call(this, name, value);
    } as typeof res.setHeader;
    // The superseded three-header set, beside the conventions' RateLimit (a SHOULD-level finding).
    if (faults.has('x-ratelimit')) res.setHeader('X-RateLimit-Limit', '100');
    next();
  });
  outer.use(compliantApp());
  return outer;
}

describe('express-api-conventions-checker check: gates, ignores and the baseline, over HTTP', () => {
  const faults = new Set<string>();
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'eac-gate-'));
  });
  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
  });
  beforeEach(() => faults.clear());

  /** One run of the command against a freshly started app (its rate limit counts from zero). */
  async function check(...args: string[]) {
    const { server, url } = await listen(faultyApp(faults));
    let stdout = '';
    let stderr = '';
    try {
      const code = await runCli(['check', url, '--resource', '/v1/users/1', '--path', '/v1/users', '--quiet', ...args], {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
        env: {},
      });
      return { code, stdout, stderr, report: () => JSON.parse(stdout) as ConformanceReport };
    } finally {
      await closeServer(server);
    }
  }

  it('passes the compliant app as it is', async () => {
    const run = await check('--json');
    expect({ code: run.code, failures: run.report().failures }).toEqual({ code: 0, failures: [] });
  });

  it('fails on MUST only by default, and on SHOULD with --fail-on should or any', async () => {
    faults.add('x-ratelimit');
    const byDefault = await check('--json');
    expect(byDefault.code).toBe(0);
    expect(byDefault.report()).toMatchObject({ ok: true, summary: { fail: 1, must: 0, should: 1 } });
    expect((await check('--fail-on', 'should')).code).toBe(4);
    expect((await check('--fail-on', 'any')).code).toBe(4);
    const wrong = await check('--fail-on', 'warning');
    expect({ code: wrong.code, stderr: wrong.stderr.split('\n')[0] }).toEqual({
      code: 2,
      stderr: 'express-api-conventions-checker: --fail-on must be one of must, should, any; received "warning".',
    });
  });

  it('--ignore takes patterns, and lists each ignored finding with its evidence', async () => {
    faults.add('frame');
    const run = await check('--ignore', 'security.*', '--json');
    expect(run.code).toBe(0);
    expect(run.report().ignored).toEqual([
      expect.objectContaining({
        id: 'security.frame-options',
        status: 'fail',
        suppressed: { by: 'ignore', pattern: 'security.*' },
        evidence: expect.objectContaining({ seen: 'x-frame-options (absent)' }),
      }),
    ]);
    const text = await check('--ignore', 'security.*');
    expect(text.stdout).toContain(
      'Ignored (1): listed so that nothing is hidden\n  security.frame-options  [MUST]  ignored by --ignore security.*',
    );
    const typo = await check('--ignore', 'securty.*');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('--ignore names no check: "securty.*".');
  });

  it('round-trips a baseline: accept, a new finding fails, a fixed one is reported, an expired one fails again', async () => {
    const file = join(scratch, 'conformance-baseline.json');
    // 1. Accept what fails today.
    faults.add('frame');
    const written = await check('--baseline', file, '--update-baseline');
    expect(written.code).toBe(0);
    expect(written.stderr).toContain(`wrote 1 accepted finding to ${file}`);
    const baseline = JSON.parse(readFileSync(file, 'utf8'));
    expect(baseline).toEqual({
      version: 1,
      accepted: [{ id: 'security.frame-options', seen: 'x-frame-options (absent)' }],
    });
    // The team gives it a reason and an expiry date.
    baseline.accepted[0] = { ...baseline.accepted[0], reason: 'set by the CDN in front', expires: '2999-12-31' };
    writeFileSync(file, JSON.stringify(baseline));

    // 2. The same finding is accepted, not failed, and still listed.
    const accepted = await check('--baseline', file, '--json');
    expect(accepted.code).toBe(0);
    expect(accepted.report().accepted.map((r) => [r.id, r.suppressed])).toEqual([
      ['security.frame-options', { by: 'baseline', reason: 'set by the CDN in front', expires: '2999-12-31' }],
    ]);
    const text = await check('--baseline', file);
    expect(text.stdout).toContain(
      '  security.frame-options  [MUST]  accepted by the baseline until 2999-12-31: set by the CDN in front',
    );

    // 3. A new finding fails the run; the accepted one stays accepted.
    faults.add('referrer');
    const regressed = await check('--baseline', file, '--json');
    expect(regressed.code).toBe(1);
    expect(regressed.report().failures.map((f) => f.id)).toEqual(['security.referrer-policy']);
    expect(regressed.report().accepted.map((r) => r.id)).toEqual(['security.frame-options']);

    // 4. Fixed: reported, so the baseline shrinks; --update-baseline drops it.
    faults.clear();
    const fixed = await check('--baseline', file, '--json');
    expect(fixed.code).toBe(0);
    expect(fixed.report().baseline?.fixed.map((entry) => entry.id)).toEqual(['security.frame-options']);
    expect((await check('--baseline', file)).stdout).toContain('Fixed since the baseline (1): security.frame-options');
    expect((await check('--baseline', file, '--update-baseline')).code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ version: 1, accepted: [] });

    // 5. An entry past its date no longer accepts the finding.
    faults.add('frame');
    writeFileSync(file, JSON.stringify({ version: 1, accepted: [{ id: 'security.frame-options', expires: '2000-01-01' }] }));
    const expired = await check('--baseline', file, '--json');
    expect(expired.code).toBe(1);
    expect(expired.report().failures.map((f) => f.id)).toEqual(['security.frame-options']);
    expect(expired.report().baseline?.expired.map((entry) => entry.id)).toEqual(['security.frame-options']);
  });

  it('refuses a baseline file it cannot use, before sending anything', async () => {
    const file = join(scratch, 'wrong-baseline.json');
    writeFileSync(file, JSON.stringify({ version: 1, accepted: [{ id: 'security.hst' }] }));
    const wrong = await check('--baseline', file);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr.split('\n')[0]).toBe(
      `express-api-conventions-checker: --baseline ${JSON.stringify(file)}: accepted[0].id must be a check id; received "security.hst".`,
    );
    const missing = await check('--baseline', join(scratch, 'none.json'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('does not exist; write it with --update-baseline.');
  });

  it('--wait waits for a service that is still starting; without it, an API not yet up is exit 3', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const args = ['--resource', '/v1/users/1', '--path', '/v1/users', '--quiet', '--json'];
    const io = (into: { out: string }) => ({
      stdout: { write: (text: string) => (into.out += text) },
      stderr: { write: () => true },
      env: {},
    });
    expect(await runCli(['check', base, ...args], io({ out: '' }))).toBe(3);
    let server: Server | undefined;
    const starting = setTimeout(() => {
      server = faultyApp(faults).listen(port, '127.0.0.1');
    }, 700);
    try {
      const into = { out: '' };
      expect(await runCli(['check', base, '--wait', '10', ...args], io(into))).toBe(0);
      expect(JSON.parse(into.out).failures).toEqual([]);
    } finally {
      clearTimeout(starting);
      if (server) await closeServer(server);
    }
  });

  it('writes SARIF and HTML beside the text report', async () => {
    faults.add('frame');
    const sarif = join(scratch, 'report.sarif');
    const html = join(scratch, 'report.html');
    const run = await check('--sarif', sarif, '--html', html);
    expect(run.code).toBe(1);
    const log = JSON.parse(readFileSync(sarif, 'utf8'));
    expect(sarifValidator()(log)).toBe(true);
    expect(log.runs[0].results.map((result: { ruleId: string }) => result.ruleId)).toEqual(['security.frame-options']);
    expect(readFileSync(html, 'utf8')).toContain('<code>security.frame-options</code>');
  });
});

describeWith(CHROMIUM, 'the HTML report, as a person opens it', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('shows the verdict, the causes with their fix, and the exchange of each check', async () => {
    const report = await checkConventions(plainExpressApp(), { resource: '/v1/users/1', paths: ['/v1/users'] });
    const page = await browser.newPage();
    // The report's own body text holds markup (an HTML 404 page): it must show as text, never run.
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.setContent(formatHtml(report), { waitUntil: 'load' });
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what a person reads
    expect(await page.locator('.verdict').innerText()).toBe('The run fails (fails on must).');
    const causes = await page.locator('section.cause h3').allInnerTexts();
    expect(causes[0]).toBe('MUST The security response headers of the conventions are missing or differ (11)');
    await page.locator('section.cause').filter({ hasText: 'errors' }).first().locator('details summary').first().click();
    // biome-ignore lint/performance/useDomNodeTextContent: shown only once the details are opened, as a person opens them
    const exchange = await page.locator('section.cause details[open] pre').first().innerText();
    expect(exchange).toMatch(/^GET \/v1\/express-api-conventions-no-such-route HTTP\/1\.1/);
    expect(exchange).toContain('<!DOCTYPE html>');
    expect(await page.locator('script').count()).toBe(0);
    expect(dialogs).toEqual([]);
    await page.close();
  });
});
