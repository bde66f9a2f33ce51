import { parseArgs } from 'node:util';
import { ConfigurationError } from '../config/configuration-error.js';
import { checkConventions } from './check-conventions.js';
import type { ConformanceCredentials, ConformanceOptions } from './options.js';
import { CONFORMANCE_DEFAULT_REQUESTS, CONFORMANCE_REQUEST_CAP } from './probe.js';
import { formatReport } from './report.js';

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
SPEC.md section, what holds and what does not, each rule cited by its row in
docs/spec-coverage.md. Exits 0 when no check fails,
1 when one does, 2 on a wrong command line, 3 when the API cannot be reached.

Options (each names what the checker cannot guess; a check that needs a
missing option is skipped, and says which option it needs):
  --origin <origin>          an origin the API allows (CORS checks)
  --resource <path>          one existing resource with ETag/Last-Modified,
                             e.g. /v1/users/1 (caching, 405, CORS path)
  --path <path>              another path to GET and lint (repeatable)
  --protected <path>         a path that needs a bearer token (invalid_token)
  --token-endpoint <path>    e.g. /v1/oauth2/token (needs --allow-writes)
  --reflect <path>           a GET that writes a value back into its JSON,
                             with {probe} where it goes:
                             "/v1/users/search?q={probe}"
  --forbidden <path>         a GET path a limited token may not use (403)
  --limited-scope <scope>    the scope of that limited token, asked in the
                             password grant (or set EAC_LIMITED_*)
  --disposable <path>        an existing resource the run may change, and
                             which a faulty method override could delete
  --change <json>            the fields a PATCH of --disposable sets:
                             '{"name":"Conformance probe"}'
  --allow-writes             allow POST to the token endpoint and PATCH/POST
                             to --disposable; without it only GET, HEAD,
                             OPTIONS and TRACE are sent
  --max-requests <n>         request budget, 1 to ${CONFORMANCE_REQUEST_CAP} (default ${CONFORMANCE_DEFAULT_REQUESTS})
  --timeout <ms>             per-request timeout (default 10000)
  --preflight-method <m>     method asked in the CORS preflight (default GET)
  --preflight-headers <list> headers asked in the preflight (default Authorization)
  --ignore <id>              report a check as skipped (repeatable, or a comma list)
  --json                     write the report as JSON on stdout
  --quiet                    no progress line on stderr
  -h, --help                 this text

Credentials for the token checks come from the environment, never from the
command line, and are never printed:
  ${CREDENTIAL_VARIABLES.clientId}, ${CREDENTIAL_VARIABLES.clientSecret}   the registered application (optional)
  ${CREDENTIAL_VARIABLES.username}, ${CREDENTIAL_VARIABLES.password}      a user for the password grant
  ${CREDENTIAL_VARIABLES.limitedUsername}, ${CREDENTIAL_VARIABLES.limitedPassword}
                                        a second user, without the right to use --forbidden

Example:
  npx express-api-conventions check http://127.0.0.1:3000 \\
    --origin http://localhost:5173 --resource /v1/users/1 --protected /v1/me
`;

export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown; isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
}

const integer = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value))
    throw new ConfigurationError('EAC_OPTION_INVALID', `--${name} must be an integer; received ${JSON.stringify(value)}.`);
  return Number(value);
};

const jsonObject = (name: string, value: string | undefined): Record<string, string | number | boolean> | undefined => {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value) as Record<string, string | number | boolean>;
  } catch {
    throw new ConfigurationError('EAC_OPTION_INVALID', `--${name} must be a JSON object; received ${JSON.stringify(value)}.`);
  }
};

const commaList = (values: readonly string[] | undefined): string[] | undefined =>
  values?.flatMap((value) => value.split(',').map((item) => item.trim())).filter((item) => item !== '');

/** Runs the command line; resolves to the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    io.stderr.write(`express-api-conventions: ${(error as Error).message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(USAGE);
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
  const progress = !values.quiet && !values.json;
  const tty = io.stderr.isTTY === true;
  let options: ConformanceOptions;
  try {
    const preflightHeaders = commaList(values['preflight-headers'] === undefined ? undefined : [values['preflight-headers']]);
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
      maxRequests: integer('max-requests', values['max-requests']),
      timeoutMs: integer('timeout', values.timeout),
      preflightMethod: values['preflight-method'],
      preflightHeaders,
      ignore: commaList(values.ignore) ?? [],
      onProgress: progress
        ? (sent, budget, request) =>
            io.stderr.write(`${tty ? '\r\x1b[2K' : ''}checking [${sent}/${budget}] ${request}${tty ? '' : '\n'}`)
        : undefined,
    };
  } catch (error) {
    io.stderr.write(`express-api-conventions: ${(error as Error).message}\n`);
    return EXIT.usage;
  }
  try {
    const report = await checkConventions(positionals[1] as string, options);
    if (progress && tty) io.stderr.write('\r\x1b[2K');
    io.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
    return report.ok ? EXIT.pass : EXIT.fail;
  } catch (error) {
    if (progress && tty) io.stderr.write('\n');
    if (error instanceof ConfigurationError) {
      io.stderr.write(`express-api-conventions: ${error.message}\n`);
      return EXIT.usage;
    }
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code;
    io.stderr.write(
      `express-api-conventions: the API could not be reached: ${(error as Error).message}${cause ? ` (${cause})` : ''}\n`,
    );
    return EXIT.unreachable;
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
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
      'allow-writes': { type: 'boolean' },
      'max-requests': { type: 'string' },
      timeout: { type: 'string' },
      'preflight-method': { type: 'string' },
      'preflight-headers': { type: 'string' },
      ignore: { type: 'string', multiple: true },
      json: { type: 'boolean' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
