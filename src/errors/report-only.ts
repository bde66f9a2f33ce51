import type { Request, RequestHandler } from 'express';
import { checkFunction, checkLog, checkString, invalidOption, readOptions } from '../config/options.js';
import {
  addExceptions,
  type ConventionExceptions,
  type ConventionReporter,
  EXCEPTION_NAMES,
  logConventionReport,
  setReportOnly,
} from './adoption.js';

export {
  type ConventionExceptions,
  type ConventionReport,
  type ConventionReporter,
  type ExceptionName,
  logConventionReport,
} from './adoption.js';

/** Options of reportOnly(). */
export interface ReportOnlyOptions {
  /**
   * Receives each convention a response breaks (a metrics counter, your
   * logger); `false` reports nothing. Default: one JSON line on stderr
   * (`logConventionReport`).
   */
  log?: ConventionReporter | false;
  /** Which requests run report-only; the others are enforced. Default: every request that reaches it. */
  when?: (req: Request) => boolean;
}

const REPORT_ONLY_OPTIONS = ['log', 'when'] as const;

/** Reads reportOnly()'s options once: the reporter and the request filter. */
/** Report-only's options, read once: where reports go, and which requests it applies to. */
export interface ReportOnlyMode {
  readonly reporter: ConventionReporter;
  readonly when: ((req: Request) => boolean) | undefined;
}

export function readReportOnly(factory: string, options: Readonly<ReportOnlyOptions> | undefined): ReportOnlyMode {
  const given = readOptions<ReportOnlyOptions>(factory, options, [...REPORT_ONLY_OPTIONS]);
  const reporter = checkLog<ConventionReporter>(factory, given.log, logConventionReport) ?? (() => undefined);
  const when = given.when === undefined ? undefined : checkFunction<(req: Request) => boolean>(factory, 'when', given.when);
  return { reporter, when };
}

/**
 * Report-only mode, in the spirit of `Content-Security-Policy-Report-Only`:
 * for the requests it sees, a convention the library would enforce by
 * refusing or changing the response (a top-level array, a missing CSRF
 * token or `X-Requested-With`, a refused method override, a strict lint) is
 * reported instead, and the request goes on as the route wrote it. Mount it
 * before what it should soften: app-wide with `conventions({ reportOnly })`,
 * or on one route, `app.get('/v1/old', reportOnly(), handler)` (then only
 * what happens in that route, such as `res.json()`, is softened: the
 * preset's own stages have run by then).
 */
export function reportOnly(options?: Readonly<ReportOnlyOptions>): RequestHandler {
  return reportOnlyMarker(readReportOnly('reportOnly', options));
}

/** The middleware that puts the requests `mode` applies to in report-only mode (reportOnly(), the preset's first module). */
export function reportOnlyMarker({ reporter, when }: ReportOnlyMode): RequestHandler {
  return function reportOnlyMiddleware(req, res, next) {
    if (when === undefined || when(req)) setReportOnly(res, reporter);
    next();
  };
}

/**
 * Lets one route keep a behaviour the conventions leave room for during a
 * move, each exception with the reason it is kept (reviewed like
 * `optOutReason` of cookies): `conventionExceptions({ topLevelArray:
 * 'mobile app 2.x reads an array; remove after its end of life' })`. The
 * reason is required and checked at start-up.
 */
export function conventionExceptions(exceptions: Readonly<ConventionExceptions>): RequestHandler {
  const given = readOptions<ConventionExceptions>('conventionExceptions', exceptions, [...EXCEPTION_NAMES]);
  const checked: Record<string, string> = {};
  for (const name of EXCEPTION_NAMES) {
    if (given[name] !== undefined) checked[name] = checkString('conventionExceptions', name, given[name]).trim();
  }
  if (Object.keys(checked).length === 0) {
    invalidOption(
      'conventionExceptions',
      'exceptions',
      exceptions,
      `an object naming at least one exception (${EXCEPTION_NAMES.join(', ')}) with the reason it is kept`,
    );
  }
  const frozen = Object.freeze(checked) as ConventionExceptions;
  return function conventionExceptionsMiddleware(_req, res, next) {
    addExceptions(res, frozen);
    next();
  };
}
