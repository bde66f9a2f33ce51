import { writeFileSync } from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { ConfigurationError } from '../config/configuration-error.js';
import { didYouMean } from '../config/options.js';
import { PATH_RULES, type PathExceptions, type PathRule } from '../lint/path-rules.js';
import { CONFORMANCE_CHECK_IDS } from './catalogue.js';
import { checkConventions } from './check-conventions.js';
import type { ConformanceCredentials, ConformanceOptions } from './options.js';
import { CONFORMANCE_DEFAULT_REQUESTS, CONFORMANCE_REQUEST_CAP } from './probe.js';
import { type ConformanceReport, formatJunit, formatReport } from './report.js';

/** Exit codes of `express-api-conventions check`. */
export const EXIT = {
  /** Every check passed or was skipped. */
  pass: 0,
  /** At least one check failed. */
  fail: 1,
  /** The command line or an option was wrong: nothing was sent. */
  usage: 2,
  /** The API could not be reached or a request failed (refused, timed out). */
  unreachable: 3,
} as const;

/** Environment variables that carry the token-endpoint credentials; their values are never printed. */
export const CREDENTIAL_VARIABLES = {
  clientId: 'EAC_CLIENT_ID',
  clientSecret: 'EAC_CLIENT_SECRET',
  username: 'EAC_USERNAME',
  password: 'EAC_PASSWORD',
  limitedUsername: 'EAC_LIMITED_USERNAME',
  limitedPassword: 'EAC_LIMITED_PASSWORD',
} as const satisfies Record<keyof ConformanceCredentials, string>;

export const USAGE = `Usage: express-api-conventions check <base-url> [options]

Probes a running API over HTTP and reports, check by check and grouped by
section of the API conventions (docs/conventions.md), what holds and what does
not, each rule cited by its row in
docs/spec-coverage.md. Exits 0 when no check fails,
1 when one does, 2 on a wrong command line, 3 when the API cannot be reached.

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
                             checkRoutes()'s exceptions: plural:me (repeatable)
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
  --timeout <ms>             per-request timeout, 100 to 120000 (default 10000)
  --preflight-method <m>     method asked in the CORS preflight (default GET)
  --preflight-headers <list> headers asked in the preflight (default Authorization)
  --ignore <id>              report a check as skipped (repeatable, or a comma list)
Output:
  --format <text|json|junit> the report on stdout (default text)
  --json                     the same as --format json
  --junit <file>             also write the report as JUnit XML to <file>
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
  npx express-api-conventions check http://127.0.0.1:3000 \\
    --openapi docs/openapi.yaml --origin http://localhost:5173 --allow-writes
`;

export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown; isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The package's version for `--version`: the bin reads it from package.json when asked. */
  readonly version?: () => string;
  /** Writes the `--junit` file. Default: node:fs writeFileSync. */
  readonly writeFile?: (path: string, text: string) => void;
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
  timeout: { type: 'string' },
  'preflight-method': { type: 'string' },
  'preflight-headers': { type: 'string' },
  ignore: { type: 'string', multiple: true },
  format: { type: 'string' },
  json: { type: 'boolean' },
  junit: { type: 'string' },
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
  timeoutMs: '--timeout',
  preflightMethod: '--preflight-method',
  preflightHeaders: '--preflight-headers',
  ignore: '--ignore',
};

/**
 * A ConfigurationError of checkConventions() in the command's terms:
 * "checkConventions(options): `maxRequests` must be ..." becomes
 * "--max-requests must be ...", without the API's documentation anchor.
 */
export function inCliTerms(message: string): string {
  const match =
    /^checkConventions(?:\(options\))?(?: credentials)?: `([A-Za-z]+)(?:\[\d+\]|\.[A-Za-z]+)?` (.*?)(?: \[EAC_[A-Z_]+: see [^\]]+\])?$/s.exec(
      message,
    );
  if (!match) return message.replace(/ \[EAC_[A-Z_]+: see [^\]]+\]$/, '');
  return `${FLAG_OF_OPTION[match[1] as string] ?? match[1]} ${match[2]}`;
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

const FORMATS = ['text', 'json', 'junit'] as const;

function pathExceptions(values: readonly string[] | undefined): PathExceptions | undefined {
  if (values === undefined) return undefined;
  const result: Partial<Record<PathRule, string[]>> = {};
  for (const value of values) {
    const [rule, segment] = value.split(':', 2) as [string, string | undefined];
    if (!Object.hasOwn(PATH_RULES, rule) || !segment)
      throw new UsageError(
        `--path-exception must be <rule>:<segment>, such as plural:me; received ${JSON.stringify(value)}.${Object.hasOwn(PATH_RULES, rule) ? '' : didYouMean(rule, Object.keys(PATH_RULES), 'Rules')}`,
      );
    result[rule as PathRule] = [...(result[rule as PathRule] ?? []), segment];
  }
  return result;
}

/** Runs the command line; resolves to the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const usageError = (message: string) => {
    io.stderr.write(`express-api-conventions: ${message}\nRun "express-api-conventions --help" for the options.\n`);
    return EXIT.usage;
  };
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    return usageError(parseProblem(error as Error & { code?: string }));
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
    io.stderr.write(`express-api-conventions: expected "check <base-url>"\n\n${USAGE}`);
    return EXIT.usage;
  }
  const credentials: ConformanceCredentials = {};
  for (const [key, variable] of Object.entries(CREDENTIAL_VARIABLES) as [keyof ConformanceCredentials, string][]) {
    const value = io.env[variable];
    if (value !== undefined && value !== '') credentials[key] = value;
  }
  let options: ConformanceOptions;
  let format: (typeof FORMATS)[number];
  const target = positionals[1] as string;
  try {
    let base: URL | undefined;
    try {
      base = new URL(target);
    } catch {
      base = undefined;
    }
    if (!base || (base.protocol !== 'http:' && base.protocol !== 'https:'))
      throw new UsageError(
        `<base-url> must be an http(s) URL such as http://127.0.0.1:3000; received ${JSON.stringify(target)}.`,
      );
    if (values.format !== undefined && !(FORMATS as readonly string[]).includes(values.format))
      throw new UsageError(`--format must be one of ${FORMATS.join(', ')}; received ${JSON.stringify(values.format)}.`);
    if (values.json && values.format !== undefined && values.format !== 'json')
      throw new UsageError(`--json and --format ${values.format} ask for two formats; give one.`);
    format = values.json ? 'json' : ((values.format as (typeof FORMATS)[number] | undefined) ?? 'text');
    for (const flag of ['resource', 'path', 'protected', 'token-endpoint', 'reflect'] as const) {
      const given = values[flag];
      for (const path of typeof given === 'string' ? [given] : (given ?? [])) {
        if (path.startsWith('/')) continue;
        if (!/^https?:\/\//.test(path))
          throw new UsageError(`--${flag} must be a path starting with "/" or an http(s) URL; received ${JSON.stringify(path)}.`);
        if (new URL(path).origin !== base.origin)
          throw new UsageError(
            `--${flag} must be on the <base-url>'s origin (${base.origin}); received ${JSON.stringify(path)}.`,
          );
      }
    }
    const ignore = commaList(values.ignore) ?? [];
    for (const id of ignore) {
      if (!(CONFORMANCE_CHECK_IDS as readonly string[]).includes(id))
        throw new UsageError(`--ignore names no check: ${JSON.stringify(id)}.${didYouMean(id, CONFORMANCE_CHECK_IDS, 'Checks')}`);
    }
    if ((credentials.clientId === undefined) !== (credentials.clientSecret === undefined))
      throw new UsageError(
        `${CREDENTIAL_VARIABLES.clientId} and ${CREDENTIAL_VARIABLES.clientSecret} go together: set both or neither.`,
      );
    const preflightHeaders = commaList(values['preflight-headers'] === undefined ? undefined : [values['preflight-headers']]);
    const exceptions = pathExceptions(values['path-exception']);
    const progress = !values.quiet && format === 'text';
    const tty = io.stderr.isTTY === true;
    options = {
      origin: values.origin,
      resource: values.resource,
      paths: values.path ?? [],
      protected: values.protected,
      tokenEndpoint: values['token-endpoint'],
      reflect: values.reflect,
      forbidden: values.forbidden,
      limitedScope: values['limited-scope'],
      disposable: values.disposable,
      change: jsonObject('change', values.change),
      credentials,
      allowWrites: values['allow-writes'] ?? false,
      maxRequests: integer('--max-requests', values['max-requests'], 1, CONFORMANCE_REQUEST_CAP),
      timeoutMs: integer('--timeout', values.timeout, 100, 120_000),
      preflightMethod: values['preflight-method'],
      preflightHeaders,
      ignore,
      openapi: values.openapi,
      explore: !values['no-explore'],
      ...(exceptions ? { pathExceptions: exceptions } : {}),
      onProgress: progress
        ? (sent, planned, request) =>
            io.stderr.write(`${tty ? '\r\x1b[2K' : ''}checking [${sent}/${planned}] ${request}${tty ? '' : '\n'}`)
        : undefined,
    };
  } catch (error) {
    if (error instanceof UsageError) return usageError(error.message);
    throw error;
  }
  const tty = io.stderr.isTTY === true && options.onProgress !== undefined;
  try {
    const report = await checkConventions(target, options);
    if (tty) io.stderr.write('\r\x1b[2K');
    const formats = { text: formatReport, json: (r: ConformanceReport) => `${JSON.stringify(r, null, 2)}\n`, junit: formatJunit };
    io.stdout.write(formats[format](report));
    if (values.junit !== undefined) {
      try {
        (io.writeFile ?? ((path, text) => writeFileSync(path, text)))(values.junit, formatJunit(report));
      } catch (error) {
        return usageError(`--junit could not write ${JSON.stringify(values.junit)}: ${(error as Error).message}`);
      }
    }
    return report.ok ? EXIT.pass : EXIT.fail;
  } catch (error) {
    if (tty) io.stderr.write('\n');
    if (error instanceof ConfigurationError) return usageError(inCliTerms(error.message));
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code;
    io.stderr.write(
      `express-api-conventions: the API could not be reached: ${(error as Error).message}${cause ? ` (${cause})` : ''}\n`,
    );
    return EXIT.unreachable;
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: FLAGS });
}
