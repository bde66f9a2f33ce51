import { readFileSync, writeFileSync } from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { ConfigurationError } from 'express-api-conventions';
import { didYouMean, PATH_RULES } from 'express-api-conventions/extend';
import type { PathExceptions, PathRule } from 'express-api-conventions/lint';
import { CONFORMANCE_CHECK_IDS } from './catalogue.js';
import type { Severity } from './causes.js';
import { checkConventions } from './check-conventions.js';
import { type ConformanceBaseline, gates, ignorePattern, readBaseline, updatedBaseline } from './gate.js';
import { formatHtml } from './html.js';
import type { ConformanceCredentials, ConformanceOptions } from './options.js';
import { CONFORMANCE_DEFAULT_REQUESTS, CONFORMANCE_REQUEST_CAP } from './probe.js';
import { buildReport, type ConformanceReport, formatJunit, formatReport } from './report.js';
import { formatSarif } from './sarif.js';

/** The command, as package.json `bin` names it after the package, so that `npx express-api-conventions-checker` finds it. */
export const COMMAND = 'express-api-conventions-checker';

/** Exit codes of `express-api-conventions-checker check`. */
export const EXIT = {
  /** No finding at or above `--fail-on` counts (accepted and ignored ones do not). */
  pass: 0,
  /** A MUST-level finding fails the run. */
  fail: 1,
  /** The command line, an option or the baseline file was wrong: nothing was sent. */
  usage: 2,
  /** The API could not be reached or a request failed (refused, timed out). */
  unreachable: 3,
  /** A SHOULD-level finding fails the run (`--fail-on should` or `any`), and no MUST-level one. */
  failShould: 4,
  /** Only advice fails the run (`--fail-on any`). */
  failAdvice: 5,
} as const;

/** The exit code of a finished run: which severity failed it. */
export function exitCodeOf(report: ConformanceReport): number {
  if (report.ok) return EXIT.pass;
  const failing = report.failures.filter((failure) => gates(failure.severity, report.failOn));
  if (failing.some((failure) => failure.severity === 'must')) return EXIT.fail;
  if (failing.some((failure) => failure.severity === 'should')) return EXIT.failShould;
  return EXIT.failAdvice;
}

/** Environment variables that carry the token-endpoint credentials; their values are never printed. */
export const CREDENTIAL_VARIABLES = {
  clientId: 'EAC_CLIENT_ID',
  clientSecret: 'EAC_CLIENT_SECRET',
  username: 'EAC_USERNAME',
  password: 'EAC_PASSWORD',
  limitedUsername: 'EAC_LIMITED_USERNAME',
  limitedPassword: 'EAC_LIMITED_PASSWORD',
} as const satisfies Record<keyof ConformanceCredentials, string>;

export const USAGE = `Usage: ${COMMAND} check <base-url> [options]

Probes a running API over HTTP and reports, check by check and grouped by
section of the API conventions (docs/conventions.md), what holds and what does
not, each rule cited by its row in
docs/spec-coverage.md; failures are then grouped by cause, each with its fix.
Exit codes: 0 nothing fails the run; 1 a MUST-level finding does; 4 a SHOULD-level
one does (and no MUST); 5 only advice does; 2 a wrong command line or baseline
file; 3 the API cannot be reached.

Where to look (each names what the checker cannot guess; without them it
follows what the API links, and a check that still lacks a path is skipped
and says which option it needs):
  --openapi <file|url>       an OpenAPI 3 document (JSON or YAML): the paths,
                             a resource, the protected operations, the token
                             endpoint and a search are taken from it
  --origin <origin>          an origin the API allows (CORS checks)
  --resource <path>          one existing resource with ETag/Last-Modified,
                             e.g. /v1/users/1 (caching, 405, CORS path)
  --path <path>              another path to GET and lint (repeatable)
  --protected <path>         a path that needs a bearer token (invalid_token)
  --token-endpoint <path>    e.g. /v1/oauth2/token (needs --allow-writes)
  --reflect <path>           a GET that writes a value back into its JSON,
                             with {probe} where it goes:
                             "/v1/users/search?q={probe}"
  --path-exception <r>:<s>   a segment allowed to break one path rule, as
                             checkRoutes()'s exceptions: plural:health (repeatable)
  --no-explore               do not follow the API's links
  --forbidden <path>         a GET path a limited token may not use (403)
  --limited-scope <scope>    the scope of that limited token, asked in the
                             password grant (or set EAC_LIMITED_*)
  --disposable <path>        an existing resource the run may change, and
                             which a faulty method override could delete
  --change <json>            the fields a PATCH of --disposable sets:
                             '{"name":"Conformance probe"}'
How much to send:
  --allow-writes             allow POST to the token endpoint and PATCH/POST
                             to --disposable; without it only GET, HEAD,
                             OPTIONS and TRACE are sent
  --max-requests <n>         request budget, 1 to ${CONFORMANCE_REQUEST_CAP} (default ${CONFORMANCE_DEFAULT_REQUESTS})
  --probe-limit <n>          send up to n GETs of --resource until one answers
                             429, and check its Retry-After (off by default)
  --timeout <ms>             per-request timeout, 100 to 120000 (default 10000)
  --wait <seconds>           wait up to this long for the API to answer at all
                             before checking, 0 to 600 (default 0): for CI,
                             right after starting the service
  --preflight-method <m>     method asked in the CORS preflight (default GET)
  --preflight-headers <list> headers asked in the preflight (default Authorization)
Gate:
  --fail-on <must|should|any>  the least severity that fails the run (default must)
  --ignore <id|pattern>      a check whose failure does not count, by id or
                             pattern (security.*); still run and listed
                             (repeatable, or a comma list)
  --baseline <file>          accepted findings (JSON: {"version":1,"accepted":
                             [{"id","reason","expires"}]}): listed as accepted,
                             not failed; a new finding still fails; an entry
                             that passes now is reported as fixed
  --update-baseline          write the --baseline file from this run (keeps the
                             reasons and expiry dates already there)
Output:
  --format <text|json|junit|sarif|html>  the report on stdout (default text)
  --json                     the same as --format json
  --junit <file>             also write the report as JUnit XML to <file>
  --sarif <file>             also write the report as SARIF 2.1.0 to <file>
  --html <file>              also write the report as an HTML page to <file>
  --quiet                    no progress line on stderr
  -v, --version              the package's version
  -h, --help                 this text

Credentials for the token checks come from the environment, never from the
command line, and are never printed:
  ${CREDENTIAL_VARIABLES.clientId}, ${CREDENTIAL_VARIABLES.clientSecret}   the registered application (optional)
  ${CREDENTIAL_VARIABLES.username}, ${CREDENTIAL_VARIABLES.password}      a user for the password grant
  ${CREDENTIAL_VARIABLES.limitedUsername}, ${CREDENTIAL_VARIABLES.limitedPassword}
                                        a second user, without the right to use --forbidden

Example:
  npx ${COMMAND} check http://127.0.0.1:3000 \\
    --openapi docs/openapi.yaml --origin http://localhost:5173 --allow-writes
`;

export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown; isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The package's version for `--version`: the bin reads it from package.json when asked. */
  readonly version?: () => string;
  /** Writes the `--junit`, `--sarif`, `--html` and `--update-baseline` files. Default: node:fs writeFileSync. */
  readonly writeFile?: (path: string, text: string) => void;
  /** Reads the `--baseline` file; undefined when it does not exist. Default: node:fs readFileSync. */
  readonly readFile?: (path: string) => string | undefined;
}

/**
 * Waits until the API answers anything (any status), or the time is up;
 * the run that follows then reports an unreachable API in its own words.
 */
async function waitForAnswer(target: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      const answer = await fetch(target, { redirect: 'manual', signal: AbortSignal.timeout(Math.min(2000, ms)) });
      await answer.body?.cancel();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** A file's text, or undefined when there is no such file. */
function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** A wrong command line, said in the command's own terms (flags, not API option names). */
class UsageError extends Error {}

const FLAGS = {
  openapi: { type: 'string' },
  origin: { type: 'string' },
  resource: { type: 'string' },
  path: { type: 'string', multiple: true },
  protected: { type: 'string' },
  'token-endpoint': { type: 'string' },
  reflect: { type: 'string' },
  forbidden: { type: 'string' },
  'limited-scope': { type: 'string' },
  disposable: { type: 'string' },
  change: { type: 'string' },
  'path-exception': { type: 'string', multiple: true },
  'no-explore': { type: 'boolean' },
  'allow-writes': { type: 'boolean' },
  'max-requests': { type: 'string' },
  'probe-limit': { type: 'string' },
  timeout: { type: 'string' },
  wait: { type: 'string' },
  'preflight-method': { type: 'string' },
  'preflight-headers': { type: 'string' },
  ignore: { type: 'string', multiple: true },
  'fail-on': { type: 'string' },
  baseline: { type: 'string' },
  'update-baseline': { type: 'boolean' },
  format: { type: 'string' },
  json: { type: 'boolean' },
  junit: { type: 'string' },
  sarif: { type: 'string' },
  html: { type: 'string' },
  quiet: { type: 'boolean' },
  version: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

const FLAG_NAMES = Object.keys(FLAGS).map((name) => `--${name}`);

/** The flag (or environment variables) that sets each checkConventions() option, for messages. */
const FLAG_OF_OPTION: Readonly<Record<string, string>> = {
  target: '<base-url>',
  openapi: '--openapi',
  origin: '--origin',
  resource: '--resource',
  paths: '--path',
  protected: '--protected',
  tokenEndpoint: '--token-endpoint',
  reflect: '--reflect',
  forbidden: '--forbidden',
  limitedScope: '--limited-scope',
  disposable: '--disposable',
  change: '--change',
  pathExceptions: '--path-exception',
  credentials: `${CREDENTIAL_VARIABLES.clientId} and ${CREDENTIAL_VARIABLES.clientSecret}`,
  maxRequests: '--max-requests',
  probeLimit: '--probe-limit',
  timeoutMs: '--timeout',
  preflightMethod: '--preflight-method',
  preflightHeaders: '--preflight-headers',
  ignore: '--ignore',
  failOn: '--fail-on',
  baseline: '--baseline',
};

/**
 * A ConfigurationError of checkConventions() in the command's terms, from the
 * option it names: `maxRequests` "must be ..." becomes "--max-requests must
 * be ...", without the API's documentation anchor.
 */
export function inCliTerms(error: ConfigurationError): string {
  if (error.option === undefined || error.problem === undefined) return error.statement;
  // A credential is set by its own variable; `paths[0]` by the flag of `paths`.
  const credential = /^credentials\.(\w+)$/.exec(error.option)?.[1];
  if (credential !== undefined && Object.hasOwn(CREDENTIAL_VARIABLES, credential)) {
    return `${CREDENTIAL_VARIABLES[credential as keyof typeof CREDENTIAL_VARIABLES]} ${error.problem}`;
  }
  const option = error.option.split(/[.[]/, 1)[0] as string;
  return `${FLAG_OF_OPTION[option] ?? option} ${error.problem}`;
}

/** A baseline ConfigurationError in the file's terms: `baseline.accepted[0].id` "must be ..." becomes "accepted[0].id must be ...". */
function inFileTerms(error: ConfigurationError): string {
  if (error.option === undefined || error.problem === undefined) return error.statement;
  const entry = error.option.startsWith('baseline.') ? error.option.slice('baseline.'.length) : 'the file';
  return `${entry} ${error.problem}`;
}

const integer = (flag: string, value: string | undefined, min: number, max: number): number | undefined => {
  if (value === undefined) return undefined;
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(number >= min && number <= max))
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}; received ${JSON.stringify(value)}.`);
  return number;
};

const jsonObject = (name: string, value: string | undefined): Record<string, string | number | boolean> | undefined => {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value) as Record<string, string | number | boolean>;
  } catch {
    throw new UsageError(`--${name} must be a JSON object; received ${JSON.stringify(value)}.`);
  }
};

const commaList = (values: readonly string[] | undefined): string[] | undefined =>
  values?.flatMap((value) => value.split(',').map((item) => item.trim())).filter((item) => item !== '');

/** parseArgs's errors in the command's terms, with a "did you mean" for a mistyped flag. */
function parseProblem(error: Error & { code?: string }): string {
  const flag = /'(-[^' ]+)/.exec(error.message)?.[1];
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag) {
    const name = flag.includes('=') ? flag.slice(0, flag.indexOf('=')) : flag;
    return `unknown option ${name}.${didYouMean(name, FLAG_NAMES, 'Options')}`;
  }
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag) {
    return /argument missing/.test(error.message) ? `${flag} needs a value.` : `${flag} takes no value.`;
  }
  return error.message;
}

const FORMATS = ['text', 'json', 'junit', 'sarif', 'html'] as const;
const FAIL_ON = { must: 'must', should: 'should', any: 'advice' } as const satisfies Record<string, Severity>;

function pathExceptions(values: readonly string[] | undefined): PathExceptions | undefined {
  if (values === undefined) return undefined;
  const result: Partial<Record<PathRule, string[]>> = {};
  for (const value of values) {
    const [rule, segment] = value.split(':', 2) as [string, string | undefined];
    if (!Object.hasOwn(PATH_RULES, rule) || !segment)
      throw new UsageError(
        `--path-exception must be <rule>:<segment>, such as plural:health; received ${JSON.stringify(value)}.${Object.hasOwn(PATH_RULES, rule) ? '' : didYouMean(rule, Object.keys(PATH_RULES), 'Rules')}`,
      );
    result[rule as PathRule] = [...(result[rule as PathRule] ?? []), segment];
  }
  return result;
}

type Flags = ReturnType<typeof parse>['values'];
type Format = (typeof FORMATS)[number];

/** A command line, checked: what to run, and what to do with the report. */
interface Invocation {
  readonly target: string;
  readonly flags: Flags;
  readonly options: ConformanceOptions;
  readonly format: Format;
  readonly waitSeconds: number;
  readonly baselineFile: string | undefined;
  readonly baseline: ConformanceBaseline | undefined;
}

function usageError(io: CliIo, message: string): number {
  io.stderr.write(`${COMMAND}: ${message}\nRun "${COMMAND} --help" for the options.\n`);
  return EXIT.usage;
}

/** Runs the command line; resolves to the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const command = readCommand(argv, io);
  if (typeof command === 'number') return command;
  let invocation: Invocation;
  try {
    invocation = readInvocation(command.flags, command.target, io);
  } catch (error) {
    if (error instanceof UsageError) return usageError(io, error.message);
    throw error;
  }
  return run(invocation, io);
}

/** The flags and the base URL of `check <base-url>`, or the exit code of a line that asked for help, the version, or nothing right. */
function readCommand(argv: readonly string[], io: CliIo): { flags: Flags; target: string } | number {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    return usageError(io, parseProblem(error as Error & { code?: string }));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(USAGE);
    return EXIT.pass;
  }
  if (values.version) {
    io.stdout.write(`${io.version?.() ?? 'unknown'}\n`);
    return EXIT.pass;
  }
  if (positionals[0] !== 'check' || positionals.length !== 2) {
    io.stderr.write(`${COMMAND}: expected "check <base-url>"\n\n${USAGE}`);
    return EXIT.usage;
  }
  return { flags: values, target: positionals[1] as string };
}

/** Checks the flags one after another: the first wrong one throws a UsageError that names it. */
function readInvocation(flags: Flags, target: string, io: CliIo): Invocation {
  const base = baseUrlOf(target);
  const format = formatOf(flags);
  checkPathFlags(flags, base);
  const ignore = ignoreOf(flags.ignore);
  const waitSeconds = integer('--wait', flags.wait, 0, 600) ?? 0;
  const failOn = failOnOf(flags['fail-on']);
  if (flags['update-baseline'] && flags.baseline === undefined)
    throw new UsageError('--update-baseline writes the --baseline file: give --baseline <file>.');
  const baselineFile = flags.baseline;
  const baseline = baselineFile === undefined ? undefined : readBaselineFile(baselineFile, flags['update-baseline'] === true, io);
  const credentials = credentialsOf(io.env);
  const onProgress = !flags.quiet && format === 'text' ? progressLine(io) : undefined;
  const options = optionsOf(flags, { credentials, ignore, failOn, baseline, onProgress });
  return { target, flags, options, format, waitSeconds, baselineFile, baseline };
}

function baseUrlOf(target: string): URL {
  let base: URL | undefined;
  try {
    base = new URL(target);
  } catch {
    base = undefined;
  }
  if (!base || (base.protocol !== 'http:' && base.protocol !== 'https:'))
    throw new UsageError(`<base-url> must be an http(s) URL such as http://127.0.0.1:3000; received ${JSON.stringify(target)}.`);
  return base;
}

function formatOf(flags: Flags): Format {
  if (flags.format !== undefined && !(FORMATS as readonly string[]).includes(flags.format))
    throw new UsageError(`--format must be one of ${FORMATS.join(', ')}; received ${JSON.stringify(flags.format)}.`);
  if (flags.json && flags.format !== undefined && flags.format !== 'json')
    throw new UsageError(`--json and --format ${flags.format} ask for two formats; give one.`);
  return flags.json ? 'json' : ((flags.format as Format | undefined) ?? 'text');
}

/** The flags that name a path: each a path, or a URL on the base URL's origin. */
function checkPathFlags(flags: Flags, base: URL): void {
  for (const flag of ['resource', 'path', 'protected', 'token-endpoint', 'reflect'] as const) {
    const given = flags[flag];
    for (const path of typeof given === 'string' ? [given] : (given ?? [])) {
      if (path.startsWith('/')) continue;
      if (!/^https?:\/\//.test(path))
        throw new UsageError(`--${flag} must be a path starting with "/" or an http(s) URL; received ${JSON.stringify(path)}.`);
      if (new URL(path).origin !== base.origin)
        throw new UsageError(`--${flag} must be on the <base-url>'s origin (${base.origin}); received ${JSON.stringify(path)}.`);
    }
  }
}

function ignoreOf(values: readonly string[] | undefined): string[] {
  const ignore = commaList(values) ?? [];
  for (const pattern of ignore) {
    const matcher = ignorePattern(pattern);
    if (!CONFORMANCE_CHECK_IDS.some((id) => matcher.test(id)))
      throw new UsageError(
        `--ignore names no check: ${JSON.stringify(pattern)}.${pattern.includes('*') ? ' Patterns use * for any characters, such as security.*.' : didYouMean(pattern, CONFORMANCE_CHECK_IDS, 'Checks')}`,
      );
  }
  return ignore;
}

function failOnOf(flag: string | undefined): Severity {
  if (flag !== undefined && !Object.hasOwn(FAIL_ON, flag))
    throw new UsageError(`--fail-on must be one of must, should, any; received ${JSON.stringify(flag)}.`);
  return FAIL_ON[(flag ?? 'must') as keyof typeof FAIL_ON];
}

/** The `--baseline` file, checked; undefined when it does not exist yet and this run is to write it. */
function readBaselineFile(file: string, updating: boolean, io: CliIo): ConformanceBaseline | undefined {
  let text: string | undefined;
  try {
    text = (io.readFile ?? readIfPresent)(file);
  } catch (error) {
    throw new UsageError(`--baseline could not read ${JSON.stringify(file)}: ${(error as Error).message}`);
  }
  // A missing file is an empty baseline only when this run is to write it.
  if (text === undefined && !updating)
    throw new UsageError(`--baseline ${JSON.stringify(file)} does not exist; write it with --update-baseline.`);
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--baseline ${JSON.stringify(file)} is not JSON: ${(error as Error).message}`);
  }
  try {
    return readBaseline(parsed);
  } catch (error) {
    if (error instanceof ConfigurationError) throw new UsageError(`--baseline ${JSON.stringify(file)}: ${inFileTerms(error)}`);
    throw error;
  }
}

/** The credentials the `EAC_*` variables give (an empty one is not given). */
function credentialsOf(env: CliIo['env']): ConformanceCredentials {
  const credentials: ConformanceCredentials = {};
  for (const [key, variable] of Object.entries(CREDENTIAL_VARIABLES) as [keyof ConformanceCredentials, string][]) {
    const value = env[variable];
    if (value !== undefined && value !== '') credentials[key] = value;
  }
  // The pairs checkConventions() wants whole, named here by their variables.
  for (const [first, second] of [
    ['clientId', 'clientSecret'],
    ['limitedUsername', 'limitedPassword'],
  ] as const) {
    if ((credentials[first] === undefined) !== (credentials[second] === undefined)) {
      throw new UsageError(
        `${CREDENTIAL_VARIABLES[first]} and ${CREDENTIAL_VARIABLES[second]} go together: set both or neither.`,
      );
    }
  }
  return credentials;
}

/** The progress line on stderr: rewritten in place on a terminal, a line a request elsewhere. */
function progressLine(io: CliIo): NonNullable<ConformanceOptions['onProgress']> {
  const tty = io.stderr.isTTY === true;
  return (sent, planned, request, phase) =>
    io.stderr.write(
      `${tty ? '\r\x1b[2K' : ''}${phase === 'exploring' ? `exploring [${sent}]` : `checking [${sent}/${planned}]`} ${request}${tty ? '' : '\n'}`,
    );
}

/** checkConventions()'s options from the flags; what only it can judge (an origin, a scope) it judges. */
function optionsOf(
  flags: Flags,
  read: Pick<ConformanceOptions, 'credentials' | 'ignore' | 'failOn' | 'baseline' | 'onProgress'>,
): ConformanceOptions {
  const preflightHeaders = commaList(flags['preflight-headers'] === undefined ? undefined : [flags['preflight-headers']]);
  const exceptions = pathExceptions(flags['path-exception']);
  return {
    origin: flags.origin,
    resource: flags.resource,
    paths: flags.path ?? [],
    protected: flags.protected,
    tokenEndpoint: flags['token-endpoint'],
    reflect: flags.reflect,
    forbidden: flags.forbidden,
    limitedScope: flags['limited-scope'],
    disposable: flags.disposable,
    change: jsonObject('change', flags.change),
    credentials: read.credentials,
    allowWrites: flags['allow-writes'] ?? false,
    maxRequests: integer('--max-requests', flags['max-requests'], 1, CONFORMANCE_REQUEST_CAP),
    probeLimit: integer('--probe-limit', flags['probe-limit'], 1, CONFORMANCE_REQUEST_CAP),
    timeoutMs: integer('--timeout', flags.timeout, 100, 120_000),
    preflightMethod: flags['preflight-method'],
    preflightHeaders,
    ignore: read.ignore,
    failOn: read.failOn,
    ...(read.baseline ? { baseline: read.baseline } : {}),
    openapi: flags.openapi,
    explore: !flags['no-explore'],
    ...(exceptions ? { pathExceptions: exceptions } : {}),
    onProgress: read.onProgress,
  };
}

/** Runs the checks and writes the reports; a wrong option only the run could see is a usage error, a failed request exit 3. */
async function run(invocation: Invocation, io: CliIo): Promise<number> {
  const { target, options } = invocation;
  const tty = io.stderr.isTTY === true && options.onProgress !== undefined;
  if (invocation.waitSeconds > 0) await waitForAnswer(target, invocation.waitSeconds * 1000);
  try {
    const report = await checkConventions(target, options);
    if (tty) io.stderr.write('\r\x1b[2K');
    return writeReports(report, invocation, io);
  } catch (error) {
    if (tty) io.stderr.write('\n');
    if (error instanceof ConfigurationError) return usageError(io, inCliTerms(error));
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code;
    io.stderr.write(`${COMMAND}: the API could not be reached: ${(error as Error).message}${cause ? ` (${cause})` : ''}\n`);
    return EXIT.unreachable;
  }
}

type WriteFile = NonNullable<CliIo['writeFile']>;

/** Writes a file a flag names; a usage error's exit code when it cannot be written. */
function writeFileOf(io: CliIo, write: WriteFile, flag: string, file: string, text: string): number | undefined {
  try {
    write(file, text);
    return undefined;
  } catch (error) {
    return usageError(io, `${flag} could not write ${JSON.stringify(file)}: ${(error as Error).message}`);
  }
}

/** The report on stdout, the `--junit`, `--sarif` and `--html` files, and the `--update-baseline` file; resolves to the exit code. */
function writeReports(report: ConformanceReport, invocation: Invocation, io: CliIo): number {
  const { flags } = invocation;
  const artifact = typeof flags.openapi === 'string' && !/^https?:/.test(flags.openapi) ? flags.openapi : undefined;
  const formats = {
    text: formatReport,
    json: (r: ConformanceReport) => `${JSON.stringify(r, null, 2)}\n`,
    junit: formatJunit,
    sarif: (r: ConformanceReport) => formatSarif(r, { version: io.version?.(), artifact }),
    html: formatHtml,
  };
  io.stdout.write(formats[invocation.format](report));
  const write: WriteFile = io.writeFile ?? ((path, text) => writeFileSync(path, text));
  for (const side of ['junit', 'sarif', 'html'] as const) {
    const file = flags[side];
    if (file === undefined) continue;
    const failed = writeFileOf(io, write, `--${side}`, file, formats[side](report));
    if (failed !== undefined) return failed;
  }
  if (flags['update-baseline'] && invocation.baselineFile !== undefined)
    return writeBaseline(report, invocation, invocation.baselineFile, write, io);
  return exitCodeOf(report);
}

/** Writes the baseline of this run; resolves to the exit code the next run with it will have. */
function writeBaseline(report: ConformanceReport, invocation: Invocation, file: string, write: WriteFile, io: CliIo): number {
  const next = updatedBaseline(report.results, invocation.baseline);
  const failed = writeFileOf(io, write, '--update-baseline', file, `${JSON.stringify(next, null, 2)}\n`);
  if (failed !== undefined) return failed;
  io.stderr.write(
    `${COMMAND}: wrote ${next.accepted.length} accepted ${next.accepted.length === 1 ? 'finding' : 'findings'} to ${file}; give each a reason.\n`,
  );
  // What the next run with this baseline will say: only expired entries still fail.
  return exitCodeOf(
    buildReport(report.target, report.requests, report.results, {
      gate: { ignore: invocation.options.ignore ?? [], failOn: report.failOn, baseline: next },
      openapi: report.openapi,
    }),
  );
}

function parse(argv: readonly string[]) {
  return parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: FLAGS });
}
