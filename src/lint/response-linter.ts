import type { RequestHandler, Response } from 'express';
import { checkBoolean, checkLog, invalidOption, readOptions } from '../config/options.js';
import { exceptionOf, reportInstead } from '../errors/adoption.js';
import { apiError } from '../errors/api-error.js';
import { ERROR_CATALOGUE } from '../errors/catalogue.js';
import { renderError } from '../errors/error-handler.js';
import { enforcedAnswer } from '../errors/refuse.js';
import { setJsonInspector } from '../http/json-output/writer.js';
import { pathWithoutQuery } from '../http/paths.js';
import { lintBody, PROTOCOL_KEYS, type ResponseFinding, resourceContextOf } from './body-rules.js';

export {
  lintBody,
  PROTOCOL_KEYS,
  RESPONSE_RULES,
  type ResourceContext,
  type ResponseFinding,
  type ResponseRule,
} from './body-rules.js';

/** What the log hook receives for a response that breaks a convention. */
export interface ResponseLintReport {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly findings: readonly ResponseFinding[];
}

/** Options of responseLinter(). */
export interface ResponseLinterOptions {
  /**
   * Fail a response that breaks a convention: it is replaced by a 500 error
   * (code 50002) whose `detail` lists the findings. For tests. Default: `false`.
   */
  strict?: boolean;
  /** Receives the report of each response that breaks a convention; `false` logs nothing. Default: one JSON line on stderr. */
  log?: ((report: ResponseLintReport) => void) | false;
  /** Keys accepted whatever their case. Default: `PROTOCOL_KEYS` (the token endpoint's fields); given keys are added. */
  allowKeys?: readonly string[];
}

const logToStderr = (report: ResponseLintReport): void => {
  process.stderr.write(`${JSON.stringify({ level: 'warn', message: 'The response breaks the API conventions.', ...report })}\n`);
};

/**
 * A development-time check of every JSON response body against the conventions' key
 * and value conventions (camelCase keys, `At` timestamps in RFC 3339, no
 * resource-name prefix, `gender`, large integers with a `_str` sibling, a
 * top-level object). Reports go to `log`; with `strict`, a response that
 * breaks a convention fails with 500 instead, so a test sees it.
 *
 * It reads the JSON text the one JSON writer sends, so it sees bodies from
 * `res.json()` (under jsonResponses()), `sendJson()`, `sendJsonText()`,
 * `sendList()` and `sendItem()` alike, without replacing `res.send()`: a
 * body a route writes with `res.send()` bypasses the writer and is not
 * read. Error bodies rendered by errorHandler() are the library's own and
 * are not read either. conventions()
 * mounts it outside production only: in production it is not in the stack
 * and costs nothing.
 */
export function responseLinter(options?: Readonly<ResponseLinterOptions>): RequestHandler {
  const given = readOptions<ResponseLinterOptions>('responseLinter', options, ['strict', 'log', 'allowKeys']);
  const strict = given.strict === undefined ? false : checkBoolean('responseLinter', 'strict', given.strict);
  const log = checkLog<(report: ResponseLintReport) => void>('responseLinter', given.log, logToStderr);
  const allowKeys = new Set<string>(PROTOCOL_KEYS);
  if (given.allowKeys !== undefined) {
    if (!Array.isArray(given.allowKeys) || given.allowKeys.some((k) => typeof k !== 'string')) {
      invalidOption('responseLinter', 'allowKeys', given.allowKeys, 'an array of key names');
    }
    for (const key of given.allowKeys) allowKeys.add(key);
  }

  // One inspector per linter, made here; a request only hands it to the JSON
  // writer (src/http/json-output/writer.ts), which calls it with the text it
  // is about to send, before the conditional GET: the answer then takes the
  // same path as in production, where the linter is not mounted.
  function lintJson(res: Response, text: string): boolean {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return false;
    }
    if (exceptionOf(res, 'responseLint') !== undefined) return false;
    const req = res.req;
    const context = resourceContextOf(pathWithoutQuery(req));
    // An error answer is never a list result, even on a collection's path (NestJS's `{ "message": [...] }`).
    let findings = lintBody(parsed, res.statusCode >= 400 ? { ...context, list: false } : context, allowKeys);
    // A route excepted from rule 2.1 sends its array on purpose: not a finding.
    if (exceptionOf(res, 'topLevelArray') !== undefined) findings = findings.filter((f) => f.rule !== 'topLevelObject');
    if (findings.length === 0) return false;
    log?.({ method: req.method, path: pathWithoutQuery(req), status: res.statusCode, findings });
    if (!strict) return false;
    const { status, code } = ERROR_CATALOGUE.responseConventionViolated;
    const strictRefusal = {
      rule: '2',
      middleware: 'responseLinter',
      enforced: enforcedAnswer({ status, code }),
      message: findings.map((finding) => finding.message).join(' '),
      status,
      code,
      fix: "Change the body as each finding says, or except the route while it must stay: conventionExceptions({ responseLint: 'why' }).",
    };
    if (reportInstead(req, res, strictRefusal)) return false;
    renderError(res, apiError('responseConventionViolated', { detail: findings }), false);
    return true;
  }

  return function responseLinterMiddleware(_req, res, next) {
    setJsonInspector(res, lintJson);
    next();
  };
}
