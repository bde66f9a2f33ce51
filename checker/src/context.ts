import { type CheckId, CONFORMANCE_CHECKS } from './catalogue.js';
import type { CauseId } from './causes.js';
import type { ConformanceConfiguration } from './options.js';
import { BudgetExhausted, describeExchange, type Exchange, type Probe, type ProbeRequest } from './probe.js';
import type { CheckEvidence, CheckOutcome, ExchangeRecord } from './report.js';
import { JSON_MEDIA_TYPE } from './spec-values.js';

/** What every group of checks works with: the probe, the options, and where results go. */
export class RunContext {
  private readonly results = new Map<CheckId, CheckOutcome>();
  /** Paths the checker was given (by an option) or found (in `Location` or JSON bodies), for the path rules. */
  /** Values that must never appear in the report: credentials and tokens. */
  readonly secrets = new Set<string>();
  budgetSpent = false;
  /** The access token of the password grant, for the writes (never reported). */
  accessToken: string | undefined;

  constructor(
    readonly probe: Probe,
    readonly config: ConformanceConfiguration,
    /** The base URL's path without its trailing slash: `''` or `/api`. */
    readonly prefix: string,
  ) {}

  private record(id: CheckId, status: CheckOutcome['status'], extra: Partial<CheckOutcome>): void {
    if (this.results.has(id)) return;
    // An ignored check still runs: its finding is listed as ignored (report.ts), never hidden.
    this.results.set(id, { id, ...CONFORMANCE_CHECKS[id], status, ...extra });
  }

  pass(id: CheckId): void {
    this.record(id, 'pass', {});
  }

  /** `cause`: who the evidence shows produced the failure, when it is not the check's usual cause. */
  fail(id: CheckId, evidence: CheckEvidence, cause?: CauseId): void {
    this.record(id, 'fail', cause === undefined ? { evidence } : { evidence, cause });
  }

  skip(id: CheckId, reason: string): void {
    this.record(id, 'skip', { reason });
  }

  /** Skips each of a group of checks that share one reason (a missing option, the spent budget). */
  skipEach(ids: readonly CheckId[], reason: string): void {
    for (const id of ids) this.skip(id, reason);
  }

  /** Fails with the evidence when there is some, passes otherwise. */
  verdict(id: CheckId, evidence: CheckEvidence | undefined, cause?: CauseId): void {
    if (evidence) this.fail(id, evidence, cause);
    else this.pass(id);
  }

  /**
   * Judges one exchange: a skip when the budget was spent before it could be
   * sent, else the verdict of `evidenceOf` (evidence fails, none passes).
   */
  judge(id: CheckId, answer: Exchange | undefined, evidenceOf: (answer: Exchange) => CheckEvidence | undefined): void {
    if (!answer) this.skip(id, this.budgetReason);
    else this.verdict(id, evidenceOf(answer));
  }

  /** judge() on the status alone: it passes when one of `statuses`; `sent` says what the request carried. */
  judgeStatus(id: CheckId, answer: Exchange | undefined, statuses: readonly number[], sent: string, expected: string): void {
    this.judge(id, answer, (seen) =>
      statuses.includes(seen.status)
        ? undefined
        : { request: `${describeExchange(seen)} (${sent})`, expected, seen: `status ${seen.status}` },
    );
  }

  /** Sends a request, or returns undefined once the budget is spent (the caller then skips). */
  async send(request: ProbeRequest): Promise<Exchange | undefined> {
    try {
      return await this.probe.send(request);
    } catch (error) {
      if (error instanceof BudgetExhausted) {
        this.budgetSpent = true;
        return undefined;
      }
      throw error;
    }
  }

  /** The reason of a skip caused by a spent budget. */
  get budgetReason(): string {
    return `the request budget (${this.config.maxRequests}) was spent before this check; raise --max-requests`;
  }

  /** A path under the base URL: `/v1/users` → `/api/v1/users` when the base is `http://host/api/`. */
  under(path: string): string {
    if (/^https?:\/\//.test(path)) {
      const url = new URL(path);
      return `${url.pathname}${url.search}`;
    }
    return `${this.prefix}${path}`;
  }

  /** Every result, each check once, in catalogue order; evidence with any secret replaced by `[redacted]`. */
  list(): CheckOutcome[] {
    for (const id of Object.keys(CONFORMANCE_CHECKS) as CheckId[]) {
      if (!this.results.has(id)) this.skip(id, 'not reached');
    }
    const secrets = [...this.secrets].filter((secret) => secret.length >= 4);
    const redact = (text: string) => secrets.reduce((result, secret) => result.split(secret).join('[redacted]'), text);
    const order = Object.keys(CONFORMANCE_CHECKS);
    const ordered = [...this.results.values()].sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
    return ordered.map((result) => {
      if (!result.evidence) return result;
      const exchange = this.exchangeOf(result.evidence.request);
      return {
        ...result,
        evidence: {
          ...(result.evidence.request === undefined ? {} : { request: redact(result.evidence.request) }),
          expected: redact(result.evidence.expected),
          seen: redact(result.evidence.seen),
        },
        ...(exchange ? { exchange: recordOf(exchange, redact) } : {}),
      };
    });
  }

  /** The exchange a piece of evidence names (`GET /v1/users -> 200 ...`), for the reports that show it whole. */
  private exchangeOf(request: string | undefined): Exchange | undefined {
    const named = request === undefined ? null : /^(\S+) (\S+) -> (\d{3})\b/.exec(request);
    if (!named) return undefined;
    return this.probe.exchanges.find(
      (exchange) => exchange.method === named[1] && exchange.path === named[2] && exchange.status === Number(named[3]),
    );
  }
}

/** Token members of OAuth 2.0 bodies, whatever the run's secrets are. */
const TOKEN_MEMBER = /("(?:access_token|refresh_token|id_token)"\s*:\s*)"[^"]*"/g;
const BODY_KEPT = 2000;

/** An exchange as a report keeps it: no cookie values, tokens and secrets redacted, the body cut. */
function recordOf(exchange: Exchange, redact: (text: string) => string): ExchangeRecord {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(exchange.headers)) {
    headers[name] = name === 'set-cookie' ? '[not kept]' : redact(value);
  }
  const body = redact(exchange.body.replace(TOKEN_MEMBER, '$1"[redacted]"'));
  return {
    method: exchange.method,
    path: redact(exchange.path),
    requestHeaders: exchange.sentHeaders,
    status: exchange.status,
    headers,
    body: body.length > BODY_KEPT ? `${body.slice(0, BODY_KEPT)}…` : body,
  };
}

/** A header's value, or `(absent)` for evidence. */
export const shown = (value: string | undefined): string => (value === undefined ? '(absent)' : JSON.stringify(value));

/** The parsed JSON body, or undefined when the body is not JSON. */
export function parseJson(body: string): unknown {
  if (body.trim() === '') return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** Whether a Content-Type is the conventions' JSON type: `application/json` with `charset=utf-8` (case and spaces aside). */
export function isSpecJsonType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const [type, ...params] = value.split(';').map((part) => part.trim().toLowerCase());
  return type === 'application/json' && params.length === 1 && params[0]?.replace(/\s+/g, '') === 'charset=utf-8';
}

export const mediaType = (value: string | undefined): string | undefined => value?.split(';')[0]?.trim().toLowerCase();

/** CheckEvidence for a check that looks at every response: the first one that breaks it, and how many more do. */
export function firstOffender(
  exchanges: readonly Exchange[],
  expected: string,
  seen: (exchange: Exchange) => string | undefined,
): CheckEvidence | undefined {
  const offenders: { exchange: Exchange; value: string }[] = [];
  for (const exchange of exchanges) {
    const value = seen(exchange);
    if (value !== undefined) offenders.push({ exchange, value });
  }
  const first = offenders[0];
  if (!first) return undefined;
  const more = offenders.length > 1 ? ` (and ${offenders.length - 1} more of ${exchanges.length} responses)` : '';
  return {
    request: `${first.exchange.method} ${first.exchange.path} -> ${first.exchange.status}${more}`,
    expected,
    seen: first.value,
  };
}

/** Describes an `{ errors: [{ message, code }] }` body, or says what is wrong with it (undefined: it is right). */
export function errorBodyProblem(body: string): string | undefined {
  const parsed = parseJson(body);
  if (parsed === undefined) return body.trim() === '' ? 'an empty body' : `a body that is not JSON: ${excerpt(body)}`;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return `JSON ${excerpt(body)}`;
  const errors = (parsed as { errors?: unknown }).errors;
  const good =
    Array.isArray(errors) &&
    errors.length > 0 &&
    errors.every(
      (item) =>
        typeof item === 'object' &&
        item !== null &&
        typeof (item as { message?: unknown }).message === 'string' &&
        Number.isInteger((item as { code?: unknown }).code),
    );
  return good ? undefined : `JSON ${excerpt(body)}`;
}

/** The start of a body, on one line, for evidence. */
export function excerpt(body: string, length = 120): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length)}…` : flat;
}

export const JSON_EXPECTED = `Content-Type ${JSON.stringify(JSON_MEDIA_TYPE)}`;
