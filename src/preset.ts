import type { RequestHandler } from 'express';
import { type CachingOptions, caching } from './caching/cache-control.js';
import { ConfigurationError } from './config/configuration-error.js';
import { didYouMean, invalidOption, isProductionEnvironment, type OptionHints, readOptions } from './config/options.js';
import { corsPolicy } from './cors/cors-policy.js';
import type { CorsPolicyOptions } from './cors/options.js';
import { isReportOnly } from './errors/adoption.js';
import { answerHeldRefusal, holdRefusals, REFUSAL_HELD } from './errors/refuse.js';
import { type ReportOnlyMode, type ReportOnlyOptions, readReportOnly, reportOnlyMarker } from './errors/report-only.js';
import { toDictionary } from './http/dictionary-mode.js';
import { keepFastProperties } from './http/response-state.js';
import { declareInnerMiddlewares } from './http/router-stack.js';
import { type JsonResponsesOptions, jsonResponses } from './json/json-responses.js';
import { type ResponseLinterOptions, responseLinter } from './lint/response-linter.js';
import type { BearerAuthOptions } from './oauth2/bearer-auth-options.js';
import { isTokenService, type TokenService } from './oauth2/token-service.js';
import type { RateLimitOptions } from './rate-limit/options.js';
import { rateLimit } from './rate-limit/rate-limit.js';
import { type ParseBodiesOptions, parseBodies } from './request/body-parsers.js';
import { type MethodOverrideOptions, methodOverride } from './request/method-override.js';
import { type SecureCookiesOptions, secureCookies } from './security/cookies.js';
import { type CrossSiteProtectionOptions, crossSiteProtection } from './security/cross-site.js';
import { type CsrfProtectionOptions, csrfProtection } from './security/csrf.js';
import { reportOnlySecurityHeaders } from './security/report-only-headers.js';
import { type SecurityHeadersOptions, securityHeaders } from './security/security-headers.js';
import { type CommonHeadersOptions, commonHeaders } from './service/common-headers.js';
import { type MaintenanceOptions, maintenance } from './service/maintenance.js';
import {
  CONVENTIONS_OPTION_NAMES,
  STAGE_DEFAULTS,
  STAGE_NAMES,
  STAGE_TABLE,
  type StageDefault,
  type StageName,
} from './stage-names.js';

/**
 * When a stage runs if its option is not given: `on` (with the factory's
 * defaults), `off` (it needs configuration: give its options to turn it
 * on), or `outside production` (on unless `NODE_ENV` is `production`).
 */

/** conventions()'s options as given, by key: what a stage may derive its own option from. */
type GivenOptions = Readonly<Partial<Record<string, unknown>>>;

/** What a stage knows beyond its place: how it takes part in the preset's shared mechanisms. */
interface StageRole<Options> {
  /**
   * Its refusals wait until the counting stage has counted the request
   * (a refused preflight, a bad bearer token): refusals are not free.
   */
  readonly refusalsCountedFirst?: true;
  /** It counts requests: the refusals held before it are answered right after it. */
  readonly counts?: true;
  /** Its middleware in report-only mode, made once by conventions() in place of the factory's. */
  reportOnly?(options: Options | undefined, mode: ReportOnlyMode): RequestHandler;
  /** Its option is middleware another package made (the authorization server's), not an options object: its factory checks it. */
  readonly takesMiddleware?: true;
  /** Its option when another stage's implies it: given the option as written (absent, `false`, options) and every option. */
  derive?(own: Options | false | undefined, given: GivenOptions): Options | false | undefined;
}

/** What the preset does for one stage: its factory, what must run before it and why. */
interface StageBehaviour<Options = never> extends StageRole<Options> {
  /** Makes the stage's middleware from its options (`undefined`: not configured, on by default). */
  readonly factory: (options: Options | undefined) => RequestHandler | readonly RequestHandler[];
  /** Stages that must run before this one (when they are on): checked against the table's order. */
  readonly runsAfter: readonly string[];
  /** Why it is where it is. */
  readonly why: string;
}

/** One stage of the preset: a row of the stage table (src/stage-names.ts) with its behaviour. */
interface PresetStage<Name extends string = string, Options = never> extends StageBehaviour<Options> {
  /** The factory the stage calls; also its option key in conventions(). */
  readonly name: Name;
  /** Whether it runs when its option is not given. */
  readonly default: StageDefault;
}

const stage = <Options>(
  factory: (options: Options | undefined) => RequestHandler | readonly RequestHandler[],
  runsAfter: readonly StageName[],
  why: string,
  role: StageRole<Options> = {},
): StageBehaviour<Options> => ({ ...role, factory, runsAfter, why });

/** A factory whose options are required: a stage that is off by default is only built with them. */
const configured =
  <Options>(factory: (options: Options) => RequestHandler | readonly RequestHandler[]) =>
  (options: Options | undefined) =>
    factory(options as Options);

// bearerAuth() (jsonwebtoken and its modules) is loaded when its stage is
// built, never when the preset loads: an app that does not configure it never
// loads it (docs/architecture.md).
const bearerAuthModule = () => require('./oauth2/bearer-auth.js') as typeof import('./oauth2/bearer-auth.js');

/**
 * The token service is its own package: the preset's token stages take the
 * middleware that package makes, and an options object is refused with the
 * call to write instead.
 */
const TOKEN_PACKAGE = 'express-api-conventions-authorization-server';

function tokenRouterStage(router: unknown): RequestHandler {
  if (isTokenService(router)) return router;
  throw new ConfigurationError(
    'EAC_OPTION_INVALID',
    `${FACTORY}(options): \`tokenRouter\` takes the router of ${TOKEN_PACKAGE} (npm install ${TOKEN_PACKAGE}), ` +
      `not its options: write \`tokenRouter: tokenRouter({ keys, issuer, audience, users, clients })\` with ` +
      `\`import { tokenRouter } from '${TOKEN_PACKAGE}'\`.`,
    { option: 'tokenRouter', problem: `must be the router ${TOKEN_PACKAGE}'s tokenRouter() returns` },
  );
}

function tokenEndpointErrorsStage(middleware: unknown): RequestHandler {
  if (typeof middleware === 'function' && !isTokenService(middleware)) return middleware as RequestHandler;
  throw new ConfigurationError(
    'EAC_OPTION_INVALID',
    `${FACTORY}(options): \`tokenEndpointErrors\` takes the middleware of ${TOKEN_PACKAGE}'s tokenEndpointErrors(), ` +
      'or false; by default it follows `tokenRouter`, at its paths.',
    { option: 'tokenEndpointErrors', problem: `must be the middleware ${TOKEN_PACKAGE}'s tokenEndpointErrors() returns` },
  );
}

/** The token endpoint's error shape follows the token endpoint, at its paths, unless given. */
function tokenEndpointErrorsOfRouter(
  own: RequestHandler | false | undefined,
  given: GivenOptions,
): RequestHandler | false | undefined {
  const router = given.tokenRouter;
  if (own !== undefined || router === undefined || router === false) return own;
  return (tokenRouterStage(router) as TokenService).tokenEndpointErrors;
}

/**
 * The origins CORS lets call with credentials are the other sites whose
 * state-changing requests are legitimate ('*' trusts none: it carries no
 * cookies), unless `trustedOrigins` is given.
 */
function crossSiteProtectionOfCors(
  own: CrossSiteProtectionOptions | false | undefined,
  given: GivenOptions,
): CrossSiteProtectionOptions | false | undefined {
  const cors = given.corsPolicy as Partial<CorsPolicyOptions> | false | undefined;
  if (!cors || !Array.isArray(cors.origins)) return own;
  if (own !== undefined && (typeof own !== 'object' || own === null || own.trustedOrigins !== undefined)) return own;
  return { ...own, trustedOrigins: cors.origins };
}

/**
 * Security headers in report-only mode: the `-Report-Only` variants of CSP
 * and COEP for the requests report-only applies to, the enforced headers
 * for the others. Both are configured once, here.
 */
function securityHeadersReportOnly(options: SecurityHeadersOptions | undefined, mode: ReportOnlyMode): RequestHandler {
  const softened = reportOnlySecurityHeaders(options);
  if (mode.when === undefined) return softened;
  const enforced = securityHeaders(options);
  // The preset's first module decided, with `when`, once per request.
  return function securityHeadersStageMiddleware(req, res, next) {
    if (isReportOnly(res)) softened(req, res, next);
    else enforced(req, res, next);
  };
}

/** What each stage of the table does, by name; docs/preset.md shows them in the table's order. */
const STAGE_BEHAVIOUR = {
  tokenEndpointErrors: stage(
    configured((o: RequestHandler) => tokenEndpointErrorsStage(o)),
    [],
    'First, so that every error on the token path (a 413 of the body parsers, a 429 of the rate limiter, a 503 of a store) keeps RFC 6749’s shape. On whenever `tokenRouter` is, at its paths.',
    { derive: tokenEndpointErrorsOfRouter, takesMiddleware: true },
  ),
  commonHeaders: stage((o: CommonHeadersOptions | undefined) => commonHeaders(o), [], 'Every answer, errors too.'),
  securityHeaders: stage(
    (o: SecurityHeadersOptions | undefined) => securityHeaders(o),
    [],
    'Every answer, errors and preflights too.',
    { reportOnly: securityHeadersReportOnly },
  ),
  caching: stage(
    (o: CachingOptions | undefined) => caching(o),
    [],
    'Before CORS, whose preflight answer ends the request: it too carries `Cache-Control: no-store, max-age=0`.',
  ),
  corsPolicy: stage(
    configured((o: CorsPolicyOptions) => corsPolicy(o)),
    ['caching'],
    'Before anything that can fail: an error answer carries the CORS headers, or the calling script cannot read it. Needs `origins`.',
    { refusalsCountedFirst: true },
  ),
  secureCookies: stage((o: SecureCookiesOptions | undefined) => secureCookies(o), [], 'Before any route sets a cookie.'),
  jsonResponses: stage((o: JsonResponsesOptions | undefined) => jsonResponses(o), [], 'Before any route writes JSON.'),
  maintenance: stage(
    configured((o: MaintenanceOptions) => maintenance(o)),
    ['corsPolicy'],
    'Stops every request with 503 before it is counted or parsed.',
  ),
  bearerAuth: stage(
    configured((o: Omit<BearerAuthOptions, 'optional'>) => bearerAuthModule().bearerAuth({ ...o, optional: true })),
    ['corsPolicy'],
    'Identifies the caller (optional mode: a request without bearer credentials goes on anonymous; a bad token is a 401) so that the rate limiter counts per user and per application. Needs `issuer` and `audience`; `keys`, or the issuer’s key set (`jwksUri`, or discovery).',
    { refusalsCountedFirst: true },
  ),
  rateLimit: stage(
    (o: RateLimitOptions | undefined) => rateLimit(o),
    ['bearerAuth'],
    'After the identification stage (`req.auth`, `req.verifiedClient`); before the body parsers, so a refused body is never parsed.',
    { counts: true },
  ),
  crossSiteProtection: stage(
    (o: CrossSiteProtectionOptions | undefined) => crossSiteProtection(o),
    ['corsPolicy', 'rateLimit'],
    'Refuses state-changing requests a browser sends for a page of another site (Fetch Metadata, then `Origin`), sign-in doors included; after the rate limiter, which counts the refusal, and before the body parsers, so a refused body is never read. Trusts `corsPolicy`’s origins unless given `trustedOrigins`. Non-browser clients send neither header and pass.',
    { derive: crossSiteProtectionOfCors },
  ),
  parseBodies: stage((o: ParseBodiesOptions | undefined) => parseBodies(o), ['rateLimit'], 'Bounded JSON and form bodies.'),
  methodOverride: stage(
    (o: MethodOverrideOptions | undefined) => methodOverride(o),
    ['parseBodies'],
    'After the body parsers: reads a form body’s `_method`.',
  ),
  csrfProtection: stage(
    configured((o: CsrfProtectionOptions) => csrfProtection(o)),
    ['parseBodies', 'methodOverride'],
    'After the body parsers (the `_csrf` field) and method override (the method it checks). Needs `tokens` and `sessionOf`.',
  ),
  responseLinter: stage(
    (o: ResponseLinterOptions | undefined) => responseLinter(o),
    ['jsonResponses'],
    'Development only by default: in production it is not in the stack at all unless configured.',
  ),
  tokenRouter: stage(
    configured((o: TokenService) => tokenRouterStage(o)),
    ['rateLimit', 'parseBodies'],
    'The token endpoint, last, after every cross-cutting stage. Takes the router of express-api-conventions-authorization-server.',
    { takesMiddleware: true },
  ),
} satisfies Record<StageName, unknown>;

/**
 * The preset, in the order its stages run: the stage table's rows
 * (src/stage-names.ts, the one place that order and the defaults are
 * written) with their behaviour. conventions() is built from it.
 */
export const PRESET_STAGES: readonly PresetStage<StageName, unknown>[] = STAGE_TABLE.map((row) => ({
  ...(STAGE_BEHAVIOUR[row.name] as StageBehaviour<unknown>),
  name: row.name,
  default: STAGE_DEFAULTS[row.name],
}));

type OptionsOf<Name extends StageName> =
  (typeof STAGE_BEHAVIOUR)[Name] extends StageBehaviour<infer O> ? Exclude<O, undefined> : never;

/** Middleware a service puts at a named point of the preset: one handler or several, in order. */
export type Insertion = RequestHandler | readonly RequestHandler[];
/** Insertion points by stage name; the point exists whether that stage is on or off. */
export type Insertions = { readonly [Name in StageName]?: Insertion };

/**
 * Names a reader might try for a stage, each refused with the key to use
 * (the keys are named after the factory they configure).
 */
const STAGE_KEY_HINTS: OptionHints = {
  cors: 'It is `corsPolicy`, after the factory it configures.',
  cookies: 'It is `secureCookies`, after the factory it configures.',
  json: 'It is `jsonResponses`, after the factory it configures.',
  authentication: 'It is `bearerAuth`, after the factory it configures.',
  bodies: 'It is `parseBodies`, after the factory it configures.',
  csrf: 'It is `csrfProtection`, after the factory it configures.',
  tokenEndpoint: 'It is `tokenRouter`, after the factory it configures.',
};

/**
 * Options of conventions(): one key per stage, named after the factory it
 * configures. Absent: the stage's default (PRESET_STAGES). `false`: off.
 * An object: on, with these options.
 */
export type ConventionsOptions = { [Name in StageName]?: OptionsOf<Name> | false } & {
  /** Middleware to run just before a stage, e.g. `{ rateLimit: [sessionLookup] }`. Default: none. */
  before?: Insertions;
  /** Middleware to run just after a stage. Default: none. */
  after?: Insertions;
  /**
   * Report-only mode (docs/preset.md#report-only): what the stages would
   * refuse or change for breaking a convention is reported instead, and the
   * request goes on; CSP and COEP are sent as their `-Report-Only` variants.
   * `true` for every request, or `{ log, when }` (a reporter; which
   * requests). Default: `false` (enforced).
   */
  reportOnly?: boolean | ReportOnlyOptions;
  /**
   * Whether the request and the response of an Express app have their
   * properties moved into a V8 dictionary when they enter the preset
   * (docs/performance.md, "The request and the response as dictionaries"):
   * Express gives them a new prototype on every request, after which every
   * property added to them makes a hidden class of its own. It only acts on
   * objects that carry their app's prototypes and on Node's own
   * `req.complete` / `res.sendDate` (taken off and put back: that key then
   * comes last in `Object.keys()`). `false`: nothing is taken off. Default: `true`.
   */
  dictionaryMode?: boolean;
};

const FACTORY = 'conventions';

// Each `runsAfter` names a stage earlier in the table, and a stage whose
// refusals are counted first runs before the one stage that counts: checked
// when the module loads.
const COUNTING_AT = PRESET_STAGES.findIndex((entry) => entry.counts);
for (const [index, entry] of PRESET_STAGES.entries()) {
  for (const earlier of entry.runsAfter) {
    const at = STAGE_NAMES.indexOf(earlier as StageName);
    if (at < 0 || at >= index) throw new Error(`PRESET_STAGES: ${entry.name} must run after ${earlier}, which is not before it.`);
  }
  if (entry.refusalsCountedFirst && !(index < COUNTING_AT)) {
    throw new Error(`PRESET_STAGES: ${entry.name}'s refusals are counted first, but no stage after it counts.`);
  }
}

/** The preset's one middleware. `modules` lists what it runs, in order; `stages` names the stages that are on, in order. */
export type ConventionsMiddleware = RequestHandler & {
  readonly modules: readonly RequestHandler[];
  readonly stages: readonly StageName[];
};

/**
 * Runs middlewares one after the other as one middleware, the way Express's
 * router runs its layers: a thrown error or a rejected promise goes to
 * `next`, and so does an error or `'router'` passed to the inner `next`;
 * `'route'` goes on to the next module, as it goes on to the next layer.
 * One router layer instead of one per module: each layer costs its path
 * match and dispatch on every request (docs/performance.md).
 */
function runInOrder(
  stack: readonly RequestHandler[],
  stages: readonly StageName[],
  countingAt: number,
  dictionary: boolean,
): ConventionsMiddleware {
  const count = stack.length;
  const middleware = function conventionsMiddleware(req, res, next) {
    // What Express's router and the stages add to the request from here on is cheap (docs/performance.md).
    if (dictionary) toDictionary(req, 'request');
    else keepFastProperties(res);
    let index = 0;
    const step = (signal?: unknown): void => {
      // As Express's router: 'route' from a middleware means "go on", and
      // anything else that is truthy (an error, 'router') leaves the stack;
      // a refusal held for the counting stage goes straight to it, so that
      // no middleware in between (a service's own) runs for a refused request.
      if (signal && signal !== 'route') {
        if (signal !== REFUSAL_HELD) {
          next(signal);
          return;
        }
        index = countingAt;
      }
      if (index === count) {
        next();
        return;
      }
      const handler = stack[index++] as RequestHandler;
      try {
        const result: unknown = handler(req, res, step);
        if (result instanceof Promise) result.then(undefined, (error: unknown) => step(error || new Error('Rejected promise')));
      } catch (error) {
        step(error);
      }
    };
    step();
  } as ConventionsMiddleware;
  Object.defineProperty(middleware, 'modules', { value: Object.freeze([...stack]), enumerable: true });
  // Routers inside the preset (tokenRouter()) are routes of the app: notFound() finds them for `Allow`.
  declareInnerMiddlewares(middleware, stack);
  return Object.defineProperty(middleware, 'stages', { value: Object.freeze([...stages]), enumerable: true });
}

/** Checks `before` or `after`: stage names (a typo is refused with the closest name) to handlers. */
function readInsertions(key: 'before' | 'after', value: unknown): Map<StageName, readonly RequestHandler[]> {
  const points = new Map<StageName, readonly RequestHandler[]>();
  if (value === undefined) return points;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    invalidOption(FACTORY, key, value, 'an object of stage names to middleware');
  }
  for (const [name, handlers] of Object.entries(value)) {
    if (!(STAGE_NAMES as readonly string[]).includes(name)) {
      throw new ConfigurationError(
        'EAC_OPTION_UNKNOWN',
        `${FACTORY}(options): \`${key}\` names no stage \`${name}\`.${didYouMean(name, STAGE_NAMES, 'Stages')}`,
      );
    }
    const list: unknown[] = Array.isArray(handlers) ? handlers : [handlers];
    list.forEach((handler, index) => {
      if (typeof handler !== 'function') invalidOption(FACTORY, `${key}.${name}[${index}]`, handler, 'a middleware function');
    });
    points.set(name as StageName, list as RequestHandler[]);
  }
  return points;
}

/** Whether a stage runs: `false` switches it off, an object configures it (on), absent is its default. */
function isOn(entry: PresetStage<StageName, unknown>, option: unknown): boolean {
  if (option === false) return false;
  if (option !== undefined) {
    if (entry.takesMiddleware) return true;
    if (typeof option !== 'object' || option === null || Array.isArray(option)) {
      invalidOption(FACTORY, entry.name, option, 'an object of its options, or false');
    }
    return true;
  }
  return entry.default === 'on' || (entry.default === 'outside production' && !isProductionEnvironment());
}

/** Reads `reportOnly`: off, or the reporter and the request filter. */
function readReportOnlyOption(value: unknown): ReportOnlyMode | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return readReportOnly(FACTORY, undefined);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    invalidOption(FACTORY, 'reportOnly', value, 'true, false, or an object { log, when }');
  }
  return readReportOnly(`${FACTORY}({ reportOnly })`, value as ReportOnlyOptions);
}

/**
 * The whole preset, in the order of PRESET_STAGES. Use it as
 * `app.use(conventions())`, then the routes, then
 * `app.use(notFound(), errorHandler())`. It is one middleware (in an array,
 * for `app.use(...conventions())` too) that runs the stages in order, with
 * the service's own middleware at the points named in `before` and `after`.
 */
export function conventions(options?: Readonly<ConventionsOptions>): ConventionsMiddleware[] {
  const given: Partial<Record<string, unknown>> = readOptions<ConventionsOptions>(
    FACTORY,
    options,
    CONVENTIONS_OPTION_NAMES,
    STAGE_KEY_HINTS,
  );
  const before = readInsertions('before', given.before);
  const after = readInsertions('after', given.after);
  const reportOnlyMode = readReportOnlyOption(given.reportOnly);
  const dictionaryMode = given.dictionaryMode ?? true;
  if (typeof dictionaryMode !== 'boolean') invalidOption(FACTORY, 'dictionaryMode', dictionaryMode, 'true or false');
  const entries = PRESET_STAGES;
  const on = entries.map((entry) => {
    const option = entry.derive ? entry.derive(given[entry.name], given) : given[entry.name];
    return isOn(entry, option) ? { option } : undefined;
  });
  // What the stages before the counting one refuse (a preflight of a refused
  // origin, a bad bearer token) is held until that stage has counted it
  // against the caller's address, then answered (src/errors/refuse.ts).
  const holding =
    COUNTING_AT >= 0 && on[COUNTING_AT] !== undefined && entries.some((entry, index) => entry.refusalsCountedFirst && on[index]);
  const stack: RequestHandler[] = reportOnlyMode ? [reportOnlyMarker(reportOnlyMode)] : [];
  const stages: StageName[] = [];
  let countingAt = -1;
  for (const [index, entry] of entries.entries()) {
    stack.push(...(before.get(entry.name) ?? []));
    const stageOn = on[index];
    if (stageOn !== undefined) {
      const made =
        reportOnlyMode && entry.reportOnly ? entry.reportOnly(stageOn.option, reportOnlyMode) : entry.factory(stageOn.option);
      const handlers = typeof made === 'function' ? [made] : made;
      if (holding && entry.refusalsCountedFirst) {
        stack.push(...handlers.map(holdRefusals));
      } else if (holding && entry.counts) {
        countingAt = stack.length;
        stack.push(...handlers, answerHeldRefusal);
      } else stack.push(...handlers);
      stages.push(entry.name);
    }
    stack.push(...(after.get(entry.name) ?? []));
  }
  return stack.length === 0 ? [] : [runInOrder(stack, stages, countingAt, dictionaryMode)];
}
