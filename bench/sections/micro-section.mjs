import { table, verdict } from '../lib/report.mjs';
import { fixed } from '../lib/stats.mjs';
import { runSerializer } from '../micro/serializer.mjs';

export async function microSection({ log }) {
  log('micro: serializer');
  const rows = runSerializer();
  const markdown = `## Micro-benchmarks

Process CPU time per call, median of 31 interleaved batches of ~10 ms; ratios are medians of the
per-batch ratios to the baseline measured in the same batch.

### JSON serializer: \`stringifyJson()\` vs plain \`JSON.stringify\`

The baseline is given the same data with ids as plain numbers (same length of text). The bigint
cases use ids above 2^53, the case that needs the exact-integer path.

${table(
  ['data', 'bytes', 'stringifyJson ns', 'JSON.stringify ns', 'ratio', 'target', 'verdict'],
  rows.map((r) => [
    r.name,
    String(r.bytes),
    fixed(r.oursNs, 0),
    fixed(r.plainNs, 0),
    `**${fixed(r.ratio)}x**`,
    `<= ${r.target}x`,
    verdict(r.ratio, r.target, false),
  ]),
)}
`;
  const targets = rows.map((r) => ({
    what: `serializer: ${r.name}`,
    target: `<= ${r.target}x JSON.stringify`,
    measured: `${fixed(r.ratio)}x`,
    verdict: verdict(r.ratio, r.target, false),
  }));
  return { markdown, targets };
}
