import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { ConfigurationError } from 'express-api-conventions';
import ts from 'typescript';
import { freePort } from '../../test/support/services.js';
import { parseXml } from '../../test/support/xml.js';
import { inCliTerms } from '../src/cli.js';
import { CONFORMANCE_CHECK_IDS } from '../src/index.js';
import { compliantApp } from './fixtures/compliant-app.js';
import { FIXTURE_OPTIONS } from './fixtures/options.js';
import { plainExpressApp } from './fixtures/plain-express.js';

/**
 * The command as a user runs it: `node bin/express-api-conventions-checker.mjs`,
 * which loads dist/cjs. The sources are transpiled (no type check) into a
 * scratch folder laid out like an installed package (scripts/build.mjs: the
 * checker's src/ under dist/cjs), beside an installed library
 * (node_modules/express-api-conventions, its subpaths transpiled from ../src),
 * so this suite does not depend on `npm run build` having run;
 * check-package.mjs runs the packed bin against the packed library too.
 */
const root = join(__dirname, '..');
/** The dependencies of both packages, as npm installs them for this workspace: hoisted to the repository's node_modules. */
const dependencies = join(root, '..', 'node_modules');
let scratch: string;
let bin: string;

/** CommonJS, as the package's build emits it; its `require()`s of packages honour NODE_PATH. */
function transpileSources(from: string, to: string): void {
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    if (entry.isDirectory()) transpileSources(source, join(to, entry.name));
    else if (entry.name.endsWith('.ts')) {
      const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
        fileName: source,
      });
      const target = join(to, relative(from, source).replace(/\.ts$/, '.js'));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, outputText);
    }
  }
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const run = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { PATH: process.env.PATH ?? '', NODE_PATH: dependencies, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
  });

const serve = (app: ReturnType<typeof compliantApp>): Promise<{ server: Server; url: string }> =>
  new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => {
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    });
  });

const fixtureArgs = [
  '--origin',
  FIXTURE_OPTIONS.origin,
  '--resource',
  FIXTURE_OPTIONS.resource,
  '--path',
  '/v1/users',
  '--protected',
  FIXTURE_OPTIONS.protected,
  '--token-endpoint',
  FIXTURE_OPTIONS.tokenEndpoint,
  '--reflect',
  FIXTURE_OPTIONS.reflect,
  '--forbidden',
  FIXTURE_OPTIONS.forbidden,
  '--limited-scope',
  FIXTURE_OPTIONS.limitedScope,
  '--disposable',
  FIXTURE_OPTIONS.disposable,
  '--change',
  JSON.stringify(FIXTURE_OPTIONS.change),
  '--allow-writes',
];

const credentials = {
  EAC_CLIENT_ID: FIXTURE_OPTIONS.credentials.clientId,
  EAC_CLIENT_SECRET: FIXTURE_OPTIONS.credentials.clientSecret,
  EAC_USERNAME: 'alice',
  EAC_PASSWORD: 'wonderland',
};

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'eac-cli-'));
  // The command's whole import graph: the package's own src/, and the library as its peer dependency.
  transpileSources(join(root, 'src'), join(scratch, 'dist/cjs'));
  writeFileSync(join(scratch, 'dist/cjs/package.json'), '{ "type": "commonjs" }\n');
  const library = join(scratch, 'node_modules/express-api-conventions');
  transpileSources(join(root, '..', 'src'), library);
  writeFileSync(
    join(library, 'package.json'),
    JSON.stringify({ name: 'express-api-conventions', type: 'commonjs', exports: { '.': './index.js', './*': './*/index.js' } }),
  );
  mkdirSync(join(scratch, 'bin'));
  bin = join(scratch, 'bin/express-api-conventions-checker.mjs');
  copyFileSync(join(root, 'bin/express-api-conventions-checker.mjs'), bin);
  // The bin reads --version from the package.json beside it, as in an installed package.
  writeFileSync(
    join(scratch, 'package.json'),
    JSON.stringify({ name: 'express-api-conventions-checker', version: '9.8.7-scratch' }),
  );
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('express-api-conventions-checker check <base-url>', () => {
  describe('against an API that follows the conventions', () => {
    let server: Server;
    let url: string;
    let result: Run;
    const started = () => url;
    beforeAll(async () => {
      ({ server, url } = await serve(compliantApp()));
      result = await run(['check', url, ...fixtureArgs], credentials);
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('exits 0 and prints the table grouped by section', () => {
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(
        /^Conformance of http:\/\/127\.0\.0\.1:\d+\/ to the API conventions \(docs\/conventions\.md\)\n\nCommon response behaviour\n {2}pass {2}common\.date /,
      );
      expect(result.stdout).toContain('\nSecurity response headers\n  pass  security.hsts ');
      expect(result.stdout.trimEnd().split('\n').pop()).toBe('checks: 92 pass, 0 fail, 6 skip; 33 requests sent');
    });

    it('writes a progress line per request on stderr', () => {
      // Counted against the 33 requests the run plans, not against the budget of 60.
      expect(result.stderr.split('\n')[0]).toBe('checking [1/33] GET /v1/express-api-conventions-no-such-route');
      expect(result.stderr.trimEnd().split('\n').pop()).toMatch(/^checking \[33\/33\] /);
      expect(result.stderr).not.toContain('/60]');
    });

    it('never prints the credentials it was given', () => {
      expect(`${result.stdout}${result.stderr}`).not.toContain('wonderland');
      expect(`${result.stdout}${result.stderr}`).not.toContain('web-app-secret');
    });

    it('says "1 request sent", in the singular, when one was', async () => {
      const one = await run(['check', started(), '--max-requests', '1', '--quiet']);
      expect(one.stdout.trimEnd().split('\n').pop()).toMatch(/; 1 request sent$/);
    });

    it('writes the checks as JUnit test cases with --format junit, and to a file with --junit', async () => {
      const file = join(scratch, 'report.xml');
      const junit = await run(['check', started(), ...fixtureArgs, '--format', 'junit', '--junit', file], credentials);
      expect(junit.code).toBe(0);
      expect(junit.stderr).toBe('');
      expect(readFileSync(file, 'utf8')).toBe(junit.stdout);
      const suites = parseXml(junit.stdout);
      expect(suites.name).toBe('testsuites');
      const cases = suites.children.flatMap((suite) => suite.children);
      expect(cases.map((testcase) => testcase.attributes.name).sort()).toEqual([...CONFORMANCE_CHECK_IDS].sort());
      expect(suites.attributes).toMatchObject({ tests: String(CONFORMANCE_CHECK_IDS.length), failures: '0' });
      const skipped = cases.filter((testcase) => testcase.children[0]?.name === 'skipped');
      expect(suites.attributes.skipped).toBe(String(skipped.length));
      expect(skipped.length).toBeGreaterThan(0);
      expect(skipped.every((testcase) => (testcase.children[0]?.attributes.message ?? '').length > 0)).toBe(true);
      expect(suites.children.map((suite) => suite.attributes.name)).toContain('Security response headers');
    });
  });

  describe('against a plain Express app', () => {
    let server: Server;
    let url: string;
    beforeAll(async () => {
      ({ server, url } = await serve(plainExpressApp()));
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('exits 1 and prints the evidence of each failure', async () => {
      const result = await run(['check', url, '--resource', '/v1/users/1', '--quiet']);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain(
        [
          '  FAIL  common.no-x-powered-by  [SHOULD]  No `X-Powered-By`: the implementation technology is not revealed',
          '        request:  GET /v1/express-api-conventions-no-such-route -> 404 (and 6 more of 7 responses)',
          '        expected: no X-Powered-By',
          '        seen:     X-Powered-By "Express"',
          '        rule:     docs/spec-coverage.md#endpoints-path-rules "8"',
        ].join('\n'),
      );
    });

    it('writes the same report as JSON with --json', async () => {
      const result = await run(['check', `${url}/`, '--resource', '/v1/users/1', '--json']);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe('');
      const report = JSON.parse(result.stdout);
      expect(report).toMatchObject({ ok: false, target: `${url}/`, requests: 7 });
      expect(report.failures.find((failure: { id: string }) => failure.id === 'errors.method-not-allowed.status')).toEqual({
        id: 'errors.method-not-allowed.status',
        section: 'Errors',
        title: 'A method no route answers on an existing path gets 405',
        rule: 'docs/spec-coverage.md#errors "405"',
        status: 'fail',
        severity: 'should',
        cause: 'method-not-allowed',
        evidence: { request: 'TRACE /v1/users/1 -> 404', expected: 'status 405', seen: 'status 404' },
        exchange: expect.objectContaining({ method: 'TRACE', path: '/v1/users/1', status: 404 }),
      });
      expect(report.summary.fail).toBe(report.failures.length);
    });

    it('writes each failure that fails the run as a JUnit <failure> with its evidence', async () => {
      const below = parseXml((await run(['check', url, '--resource', '/v1/users/1', '--format', 'junit'])).stdout);
      const skippedBelow = below.children
        .flatMap((suite) => suite.children)
        .find((testcase) => testcase.attributes.name === 'errors.method-not-allowed.status');
      // A SHOULD-level finding does not fail a run that fails on MUST: the XML agrees with the exit code.
      expect(skippedBelow?.children.map((child) => [child.name, child.attributes.message])).toEqual([
        ['skipped', 'SHOULD finding below --fail-on must: expected status 405; seen status 404'],
      ]);
      const result = await run(['check', url, '--resource', '/v1/users/1', '--format', 'junit', '--fail-on', 'should']);
      expect(result.code).toBe(1);
      const cases = parseXml(result.stdout).children.flatMap((suite) => suite.children);
      const failing = cases.find((testcase) => testcase.attributes.name === 'errors.method-not-allowed.status');
      expect(failing?.attributes.classname).toBe('conventions.Errors');
      expect(failing?.children.map((child) => [child.name, child.attributes.message])).toEqual([
        ['failure', 'expected status 405; seen status 404'],
      ]);
      expect(failing?.children[0]?.text).toBe(
        [
          'A method no route answers on an existing path gets 405',
          'request:  TRACE /v1/users/1 -> 404',
          'expected: status 405',
          'seen:     status 404',
          'rule:     docs/spec-coverage.md#errors "405"',
        ].join('\n'),
      );
      const json = JSON.parse((await run(['check', url, '--resource', '/v1/users/1', '--json', '--fail-on', 'should'])).stdout);
      expect(cases.filter((testcase) => testcase.children[0]?.name === 'failure')).toHaveLength(json.failures.length);
    });

    it('says, beside the count, how many checks wanted a path or an option', async () => {
      const bare = await run(['check', url, '--quiet', '--no-explore']);
      const tail = bare.stdout.trimEnd().split('\n').slice(-2);
      expect(tail[0]).toMatch(
        /^\d+ checks were skipped for want of a path or an option: give --openapi <file or URL>, or the flag each reason names\.$/,
      );
      const wanting = Number(tail[0]?.split(' ')[0]);
      const json = JSON.parse((await run(['check', url, '--no-explore', '--json'])).stdout);
      expect(wanting).toBe(
        json.results.filter(
          (r: { status: string; reason?: string }) => r.status === 'skip' && /give --|set EAC_/.test(r.reason ?? ''),
        ).length,
      );
      expect(wanting).toBeGreaterThan(10);
      expect(tail[1]).toMatch(/^checks: \d+ pass, \d+ fail, \d+ skip; 1 request sent$/);
    });

    it('exits 0 when the failing checks are ignored', async () => {
      const json = JSON.parse((await run(['check', url, '--json'])).stdout);
      const failing = json.failures.map((failure: { id: string }) => failure.id).join(',');
      const result = await run(['check', url, '--quiet', '--ignore', failing]);
      expect(result.code).toBe(0);
    });
  });

  describe('usage', () => {
    it('prints the usage with --help and exits 0', async () => {
      const result = await run(['--help']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: express-api-conventions-checker check <base-url> \[options\]/);
      expect(result.stdout).toContain('--max-requests <n>         request budget, 1 to 200 (default 60)');
    });

    it.each([
      [['check'], 'expected "check <base-url>"'],
      [['check', 'http://127.0.0.1:9', '--max-requests', '0'], '--max-requests must be an integer from 1 to 200; received "0".'],
      [
        ['check', 'http://127.0.0.1:9', '--max-requests', 'many'],
        '--max-requests must be an integer from 1 to 200; received "many".',
      ],
      [['check', 'http://127.0.0.1:9', '--timeout', '5'], '--timeout must be an integer from 100 to 120000; received "5".'],
      [['check', 'http://127.0.0.1:9', '--bogus'], 'unknown option --bogus. Options: --openapi, --origin, '],
      [['check', 'http://127.0.0.1:9', '--max-request', '5'], 'unknown option --max-request. Did you mean `--max-requests`?'],
      [['check', 'http://127.0.0.1:9', '--orign=http://a.example'], 'unknown option --orign. Did you mean `--origin`?'],
      [['check', 'http://127.0.0.1:9', '--origin'], '--origin needs a value.'],
      [
        ['check', 'http://127.0.0.1:9', '--origin', 'http://a.example/app'],
        '--origin must be an origin: scheme://host[:port], no path',
      ],
      [
        ['check', 'http://127.0.0.1:9', '--ignore', 'security.hst'],
        '--ignore names no check: "security.hst". Did you mean `security.hsts`?',
      ],
      [['check', 'http://127.0.0.1:9', '--resource', 'users/1'], '--resource must be a path starting with "/" or an http(s) URL'],
      [['check', 'http://127.0.0.1:9', '--path', 'http://other.example/v1/users'], "--path must be on the <base-url>'s origin"],
      [
        ['check', 'http://127.0.0.1:9', '--format', 'xml'],
        '--format must be one of text, json, junit, sarif, html; received "xml".',
      ],
      [
        ['check', 'http://127.0.0.1:9', '--path-exception', 'plurals:me'],
        '--path-exception must be <rule>:<segment>, such as plural:health; received "plurals:me". Did you mean `plural`?',
      ],
      [
        ['check', 'http://127.0.0.1:9', '--openapi', 'no-such-openapi.yaml'],
        '--openapi must be a readable file (ENOENT); received "no-such-openapi.yaml".',
      ],
      [['check', 'http://127.0.0.1:9', '--change', '{name'], '--change must be a JSON object; received "{name".'],
      [
        ['check', 'http://127.0.0.1:9', '--disposable', '/v1/users/2'],
        '--change must be the fields a PATCH of `disposable` sets',
      ],
      [['check', 'not a url'], '<base-url> must be an http(s) URL such as http://127.0.0.1:3000; received "not a url".'],
    ])("exits 2 on %j, in the command's own terms", async (args, message) => {
      const result = await run(args);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`express-api-conventions-checker: ${message}`);
      // Neither Node's parseArgs text nor the API's option names and documentation anchors.
      expect(result.stderr).not.toMatch(/To specify a positional argument|checkConventions|maxRequests|timeoutMs|EAC_OPTION/);
    });

    it('names the environment variables when one credential of a pair is missing', async () => {
      const result = await run(['check', 'http://127.0.0.1:9'], { EAC_CLIENT_ID: 'app' });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        'express-api-conventions-checker: EAC_CLIENT_ID and EAC_CLIENT_SECRET go together: set both or neither.',
      );
    });

    it("names the limited user's variables when one of them is missing", async () => {
      const result = await run(['check', 'http://127.0.0.1:9'], { EAC_LIMITED_USERNAME: 'bob' });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        'express-api-conventions-checker: EAC_LIMITED_USERNAME and EAC_LIMITED_PASSWORD go together: set both or neither.',
      );
    });

    it.each([['--version'], ['-v']])('prints the version of the package.json beside the bin with %s', async (flag) => {
      const result = await run([flag]);
      expect(result).toEqual({ code: 0, stdout: '9.8.7-scratch\n', stderr: '' });
    });

    it('exits 3 when the API cannot be reached', async () => {
      const port = await freePort();
      const result = await run(['check', `http://127.0.0.1:${port}`, '--quiet']);
      expect(result.code).toBe(3);
      expect(result.stderr).toContain('express-api-conventions-checker: the API could not be reached');
      expect(result.stderr).toContain('ECONNREFUSED');
    });
  });
});

describe("inCliTerms(): a library error in the command's own words", () => {
  const about = (option: string, problem: string) =>
    new ConfigurationError('EAC_OPTION_INVALID', `checkConventions(options): \`${option}\` ${problem}`, { option, problem });

  it('names the flag of an option, and the variable of a credential', () => {
    expect(inCliTerms(about('maxRequests', 'must be an integer from 1 to 2000; received 0.'))).toBe(
      '--max-requests must be an integer from 1 to 2000; received 0.',
    );
    expect(inCliTerms(about('paths[0]', 'must start with /.'))).toBe('--path must start with /.');
    expect(inCliTerms(about('credentials.username', 'must be a non-empty string; received "".'))).toBe(
      'EAC_USERNAME must be a non-empty string; received "".',
    );
  });

  it('keeps an error about no one option as it is said, without the code and documentation path', () => {
    const error = new ConfigurationError('EAC_OPTIONS_NOT_OBJECT', 'checkConventions(options): options must be an object.');
    expect(inCliTerms(error)).toBe('checkConventions(options): options must be an object.');
  });
});
