import { DOCS_BASE } from './causes.js';
import { type CheckResult, type ConformanceReport, suppressionText } from './report.js';

/**
 * The report as one self-contained HTML page a person opens from a CI
 * artifact: the verdict, the failures grouped by cause with the fix, each
 * check with the exchange that showed it, then what was accepted, ignored,
 * fixed or skipped. No script, no external resource; every value escaped.
 */

const html = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Inline `code` of the catalogue's markdown, escaped first. */
const prose = (text: string): string => html(text).replace(/`([^`]+)`/g, '<code>$1</code>');

const LABEL = { must: 'MUST', should: 'SHOULD', advice: 'ADVICE' } as const;

function exchangeBlock(result: CheckResult): string {
  const exchange = result.exchange;
  if (!exchange) return '';
  const headers = Object.entries(exchange.headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');
  const sent = exchange.requestHeaders.length > 0 ? `\n(request headers: ${exchange.requestHeaders.join(', ')})` : '';
  return `<details><summary>The exchange</summary><pre>${html(`${exchange.method} ${exchange.path} HTTP/1.1${sent}\n\nHTTP/1.1 ${exchange.status}\n${headers}\n\n${exchange.body}`)}</pre></details>`;
}

function checkBlock(result: CheckResult, note = ''): string {
  const evidence = result.evidence;
  const rows = [
    ...(evidence?.request ? [['request', evidence.request]] : []),
    ...(evidence
      ? [
          ['expected', evidence.expected],
          ['seen', evidence.seen],
        ]
      : []),
    ['rule', result.rule],
  ]
    .map(([name, value]) => `<tr><th>${name}</th><td>${html(value as string)}</td></tr>`)
    .join('');
  return `<li class="check ${result.severity}"><p><span class="badge">${LABEL[result.severity]}</span> <code>${html(result.id)}</code> ${prose(result.title)}${note ? ` <em>${html(note)}</em>` : ''}</p><table>${rows}</table>${exchangeBlock(result)}</li>`;
}

export function formatHtml(report: ConformanceReport): string {
  const { summary } = report;
  const verdict = report.ok ? 'passes' : 'fails';
  const causes = report.causes
    .map((cause) => {
      const checks = cause.checks
        .map((id) => checkBlock(report.failures.find((failure) => failure.id === id) as CheckResult))
        .join('');
      return `<section class="cause ${cause.severity}"><h3><span class="badge">${LABEL[cause.severity]}</span> ${prose(cause.title)} (${cause.checks.length})</h3><dl><dt>Fix</dt><dd>${prose(cause.fix)}</dd><dt>Without this package</dt><dd>${prose(cause.elsewhere)}</dd><dt>Docs</dt><dd><a href="${html(`${DOCS_BASE}${cause.docs}`)}">${html(cause.docs)}</a></dd></dl><ul>${checks}</ul></section>`;
    })
    .join('');
  const listed = (title: string, results: readonly CheckResult[]) =>
    results.length === 0
      ? ''
      : `<h2>${title} (${results.length})</h2><ul>${results.map((result) => checkBlock(result, suppressionText(result.suppressed as NonNullable<CheckResult['suppressed']>))).join('')}</ul>`;
  const fixed = report.baseline?.fixed ?? [];
  const expired = report.baseline?.expired ?? [];
  const skipped = report.results.filter((result) => result.status === 'skip');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Conformance of ${html(report.target)} to the API conventions</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;color:#1b1b1b}
code,pre{font:13px ui-monospace,monospace}pre{background:#f4f4f4;padding:.6rem;overflow:auto;white-space:pre-wrap}
.badge{font-size:12px;font-weight:700;padding:.05rem .4rem;border-radius:.2rem;background:#666;color:#fff}
.must .badge{background:#b00020}.should .badge{background:#a15c00}.advice .badge{background:#2f5f9f}
.cause{border-left:4px solid #ccc;padding-left:1rem;margin:1.5rem 0}.cause.must{border-color:#b00020}.cause.should{border-color:#a15c00}
table{border-collapse:collapse}th{text-align:left;padding-right:1rem;vertical-align:top;font-weight:600}ul{padding-left:1.2rem}
.verdict{font-size:1.2rem;font-weight:700}.verdict.fails{color:#b00020}.verdict.passes{color:#1b6b1b}
</style>
</head>
<body>
<h1>Conformance of <code>${html(report.target)}</code> to the API conventions (docs/conventions.md)</h1>
<p class="verdict ${verdict}">The run ${verdict} (fails on ${html(report.failOn)}).</p>
<p>${summary.pass} pass, ${summary.fail} fail (${summary.must} MUST, ${summary.should} SHOULD, ${summary.advice} ADVICE), ${summary.skip} skip, ${summary.accepted} accepted, ${summary.ignored} ignored; ${report.requests} requests sent.</p>
${report.causes.length > 0 ? `<h2>What to fix, by cause</h2>${causes}` : '<h2>Nothing to fix</h2>'}
${listed('Accepted by the baseline', report.accepted)}
${listed('Ignored', report.ignored)}
${fixed.length > 0 ? `<h2>Fixed since the baseline (${fixed.length})</h2><p>These pass now; remove them from the baseline: ${fixed.map((entry) => `<code>${html(entry.id)}</code>`).join(', ')}</p>` : ''}
${expired.length > 0 ? `<h2>Expired in the baseline (${expired.length})</h2><p>No longer accepted: ${expired.map((entry) => `<code>${html(entry.id)}</code> (${html(entry.expires ?? '')})`).join(', ')}</p>` : ''}
${skipped.length > 0 ? `<h2>Skipped (${skipped.length})</h2><ul>${skipped.map((result) => `<li><code>${html(result.id)}</code>: ${html(result.reason ?? '')}</li>`).join('')}</ul>` : ''}
</body>
</html>
`;
}
