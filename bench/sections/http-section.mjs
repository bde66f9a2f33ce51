import { runHttp, summarize } from '../http.mjs';
import { table, verdict } from '../lib/report.mjs';
import { fixed, thousands } from '../lib/stats.mjs';

export async function httpSection({ log }) {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  const seconds = Number(process.env.BENCH_SECONDS ?? 3);
  const connections = 50;
  const run = await runHttp({ rounds, seconds, connections, log });
  const { perTarget, ratios, missing } = summarize(run);

  const targetRows = perTarget.map((t) => [
    `${t.label} (\`${t.id}\`)`,
    thousands(t.rps),
    fixed(t.p50),
    fixed(t.p99),
    fixed(t.cpuPerRequest, 1),
    String(t.errors),
  ]);
  const ratioRows = ratios.map((r) => [
    r.what,
    r.target === undefined ? '' : `>= ${fixed(r.target, 1)}x`,
    `**${fixed(r.median)}x**`,
    r.perRound.map((v) => fixed(v)).join(', '),
    `${fixed(r.cpuMedian)}x`,
    r.target === undefined ? '' : verdict(r.median, r.target),
  ]);
  const oursHeaders = run.answers.ours?.headers ?? {};
  const peerHeaders = run.answers.peer?.headers ?? {};
  const headerList = (headers) =>
    Object.keys(headers)
      .filter((h) => !['date', 'connection', 'keep-alive'].includes(h))
      .map((h) => `\`${h}\``)
      .join(', ');

  const markdown = `## HTTP: GET of a ~400-byte user, side by side

wrk, 1 thread, ${connections} keep-alive connections, ${seconds} s per measurement, ${rounds} rounds
(A B C … then … C B A), after a 1 s warm-up of each target. Every server is its own Node
process on 127.0.0.1. CPU µs/request is the server process's own \`process.cpuUsage()\` over
the measurement divided by the requests it answered.

${table(['target', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/request', 'non-2xx + socket errors'], targetRows)}

${run.skipped.map((s) => `Not measured: \`${s.id}\` (${s.label}): ${s.why}.`).join('\n')}

### Ratios

Throughput ratio a/b per round, and its median; the CPU column is the same comparison made from
CPU time per request (b's CPU µs/request over a's), which the neighbours' load disturbs less.

${table(['comparison (a vs b)', 'target', 'median', 'per round', 'by CPU/request', 'verdict'], ratioRows)}
${missing.length ? `\nNot compared (a side was not measured): ${missing.map((m) => m.what).join('; ')}.\n` : ''}
### What each server sends

- ours: ${headerList(oursHeaders)}
- peer: ${headerList(peerHeaders)}
`;
  const targets = ratios
    .filter((r) => r.target !== undefined)
    .map((r) => ({
      what: r.what,
      target: `>= ${fixed(r.target, 1)}x`,
      measured: `${fixed(r.median)}x (CPU: ${fixed(r.cpuMedian)}x)`,
      verdict: verdict(r.median, r.target),
    }));
  for (const m of missing.filter((r) => r.target !== undefined)) {
    targets.push({ what: m.what, target: `>= ${fixed(m.target, 1)}x`, measured: 'not measured', verdict: 'not measured' });
  }
  return { markdown, targets };
}
