import type { Request, Response } from 'express';
import { pathWithoutQuery } from '../http/paths.js';
import { localsOf } from '../http/response-state.js';

/**
 * What an existing app needs to take the conventions one step at a time:
 * a response can be in report-only mode (a convention it breaks is reported,
 * nothing it wrote is refused or changed) and can carry exceptions (one
 * convention not applied to it, each with the reason). Kept under its own
 * symbol in `res.locals`, apart from the per-response state every request
 * has (response-state.ts): only apps that use these pay for it.
 */

/** A convention a response broke, while report-only let it through. */
export interface ConventionReport {
  /** The rule's number in docs/conventions.md, e.g. `'2.1'`. */
  readonly rule: string;
  /** The middleware that would have refused or changed the response. */
  readonly middleware: string;
  /** What enforcing would have done, e.g. `'answered 403 (code 40302)'`. */
  readonly enforced: string;
  /** What was wrong, and how to fix it. */
  readonly message: string;
  /** For a refusal: the status and code enforcing would have answered. */
  readonly status?: number;
  readonly code?: number;
  /** For a refusal: what to change so that enforcing lets the request through, when the library knows it. */
  readonly fix?: string;
  readonly method: string;
  readonly path: string;
}

/** Receives each report: a logger, a metrics counter, or both. */
export type ConventionReporter = (report: ConventionReport) => void;

/** The exceptions a route may take, each with the reason it is kept. */
export interface ConventionExceptions {
  /**
   * `res.json()` may send a top-level array (rule 2.1): for an old client
   * that reads one. Still escaped and typed as JSON.
   */
  readonly topLevelArray?: string;
  /** responseLinter() does not read this route's bodies (rules 2.3 to 2.9). */
  readonly responseLint?: string;
}

export type ExceptionName = keyof ConventionExceptions;
export const EXCEPTION_NAMES: readonly ExceptionName[] = ['topLevelArray', 'responseLint'];

interface Adoption {
  reporter: ConventionReporter | undefined;
  exceptions: ConventionExceptions | undefined;
}

// Private, as every state of the package (docs/architecture.md, "Symbols").
const ADOPTION = Symbol('express-api-conventions.adoption');
type Holder = { [ADOPTION]?: Adoption };

const holderOf = (res: Response): Holder => localsOf(res) as Holder;

const adoptionOf = (res: Response): Adoption => {
  const holder = holderOf(res);
  let adoption = holder[ADOPTION];
  if (adoption === undefined) {
    adoption = { reporter: undefined, exceptions: undefined };
    holder[ADOPTION] = adoption;
  }
  return adoption;
};

/** Puts the response in report-only mode, reporting to `reporter`. */
export function setReportOnly(res: Response, reporter: ConventionReporter): void {
  adoptionOf(res).reporter = reporter;
}

/** Whether the response is in report-only mode (setReportOnly() ran for it). */
export function isReportOnly(res: Response): boolean {
  return holderOf(res)[ADOPTION]?.reporter !== undefined;
}

/** Adds exceptions to the response (later ones win for the same name). */
export function addExceptions(res: Response, exceptions: ConventionExceptions): void {
  const adoption = adoptionOf(res);
  adoption.exceptions = { ...adoption.exceptions, ...exceptions };
}

/** The reason the response is excepted from `name`, if it is. */
export function exceptionOf(res: Response, name: ExceptionName): string | undefined {
  return holderOf(res)[ADOPTION]?.exceptions?.[name];
}

/**
 * In report-only mode, reports the broken convention and returns true: the
 * caller then lets the response through unchanged. Otherwise returns false
 * and the caller enforces.
 */
export function reportInstead(req: Request, res: Response, broken: Omit<ConventionReport, 'method' | 'path'>): boolean {
  const reporter = holderOf(res)[ADOPTION]?.reporter;
  if (reporter === undefined) return false;
  try {
    reporter({ ...broken, method: req.method, path: pathWithoutQuery(req) });
  } catch {
    // A failing metrics hook must not turn a report into an error answer.
  }
  return true;
}

/** The default reporter: one JSON line on stderr per broken convention, `event: 'convention_report_only'`. */
export const logConventionReport: ConventionReporter = (report) => {
  process.stderr.write(`${JSON.stringify({ level: 'warn', event: 'convention_report_only', ...report })}\n`);
};
