import { CONFORMANCE_CHECK_IDS, CONFORMANCE_CHECKS } from './catalogue.js';
import { CHECK_TRIAGE, CONFORMANCE_CAUSES, DOCS_BASE, type Severity } from './causes.js';
import type { CheckResult, ConformanceReport } from './report.js';

/**
 * The report as SARIF 2.1.0, the format code-scanning dashboards read: one
 * rule per check (its title, the fix of its cause as help, a docs link),
 * one result per failing check with its level and the request that showed
 * it (`webRequest`/`webResponse`). Accepted and ignored findings are results
 * too, with an external suppression, so a dashboard shows them as dismissed.
 */

const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';
const LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = { must: 'error', should: 'warning', advice: 'note' };

/** A plain-text line of markdown source (SARIF `text` fields are plain). */
const plain = (text: string): string => text.replace(/`/g, '');

export interface SarifOptions {
  /** The tool's version (`tool.driver.version`). Default: none. */
  readonly version?: string;
  /**
   * The file results are located in: the OpenAPI document the run used, as
   * a path relative to the repository root. Code scanning shows a result
   * only with a location in the repository. Default: the target URL.
   */
  readonly artifact?: string;
}

export function formatSarif(report: ConformanceReport, options: SarifOptions = {}): string {
  const rules = CONFORMANCE_CHECK_IDS.map((id) => {
    const check = CONFORMANCE_CHECKS[id];
    const { severity, cause } = CHECK_TRIAGE[id];
    const fix = CONFORMANCE_CAUSES[cause];
    return {
      id,
      name: id.replace(/[.-](\w)/g, (_, letter: string) => letter.toUpperCase()),
      shortDescription: { text: plain(check.title) },
      fullDescription: { text: `${plain(check.title)} (docs/conventions.md, ${check.section}; ${check.rule}).` },
      help: {
        text: `${plain(fix.title)}. Fix: ${plain(fix.fix)} Without this package: ${plain(fix.elsewhere)}`,
        markdown: `**${fix.title}**\n\n- Fix: ${fix.fix}\n- Without this package: ${fix.elsewhere}\n- Rule: ${check.rule}`,
      },
      helpUri: `${DOCS_BASE}${fix.docs}`,
      defaultConfiguration: { level: LEVEL[severity] },
      properties: { tags: ['conventions', check.section, severity], severity, cause },
    };
  });
  const index = new Map(CONFORMANCE_CHECK_IDS.map((id, at) => [id as string, at]));
  const artifact = options.artifact ?? report.target;
  const results = report.results.filter((result) => result.status === 'fail').map((result) => resultOf(result, index, artifact));
  const sarif = {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'express-api-conventions',
            ...(options.version ? { version: options.version } : {}),
            informationUri: `${DOCS_BASE}docs/conformance.md`,
            rules,
          },
        },
        invocations: [
          { executionSuccessful: true, properties: { target: report.target, requests: report.requests, failOn: report.failOn } },
        ],
        results,
      },
    ],
  };
  return `${JSON.stringify(sarif, null, 2)}\n`;
}

function resultOf(result: CheckResult, index: ReadonlyMap<string, number>, artifact: string) {
  const evidence = result.evidence;
  const text = evidence
    ? `${plain(result.title)}: expected ${evidence.expected}; seen ${evidence.seen}${evidence.request ? ` (${evidence.request})` : ''}.`
    : `${plain(result.title)}.`;
  const exchange = result.exchange;
  return {
    ruleId: result.id,
    ruleIndex: index.get(result.id) as number,
    level: LEVEL[result.severity],
    message: { text },
    locations: [{ physicalLocation: { artifactLocation: { uri: artifact } } }],
    // One fingerprint per check and target: a dashboard follows the finding from run to run.
    partialFingerprints: { conformanceCheck: `${result.id}@${artifact}` },
    ...(exchange
      ? {
          webRequest: { protocol: 'http', version: '1.1', target: exchange.path, method: exchange.method },
          webResponse: {
            protocol: 'http',
            version: '1.1',
            statusCode: exchange.status,
            headers: exchange.headers,
            body: { text: exchange.body },
          },
        }
      : {}),
    ...(result.suppressed
      ? {
          suppressions: [
            {
              kind: 'external',
              status: 'accepted',
              justification:
                result.suppressed.by === 'ignore'
                  ? `ignored by --ignore ${result.suppressed.pattern}`
                  : `accepted by the baseline${result.suppressed.expires ? ` until ${result.suppressed.expires}` : ''}${result.suppressed.reason ? `: ${result.suppressed.reason}` : ''}`,
            },
          ],
        }
      : {}),
    properties: { severity: result.severity, cause: result.cause },
  };
}
