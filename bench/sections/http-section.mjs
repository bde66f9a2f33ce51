import { runHttp, summarize } from '../http.mjs';
import { table, verdict } from '../lib/report.mjs';
import { fixed, thousands } from '../lib/stats.mjs';
import { allocationMarkdown, measureAllocations } from './allocations.mjs';

export async function httpSection({ log }) {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  const seconds = Number(process.env.BENCH_SECONDS ?? 3);
  const connections = 50;
  const run = await runHttp({ rounds, seconds, connections, log });
  const { perTarget, ratios, missing, ownCost, typicalOwnCost, cpuVsBare } = summarize(run);
  log('http: bytes allocated per request (in process)');
  const allocations = await measureAllocations();

  const targetRows = perTarget.map((t) => [
    `${t.label} (\`${t.id}\`)`,
    thousands(t.rps),
    fixed(t.p50),
    fixed(t.p99),
    fixed(t.cpuPerRequest, 1),
    thousands(t.bytesPerRequest),
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
the measurement divided by the requests it answered; bytes allocated/request is the growth of its
heap over the measurement, collection by collection (V8's \`GCProfiler\`), over the same requests:
the whole request path on real sockets, Node's HTTP parser and socket objects included.

${table(['target', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/request', 'bytes allocated/request', 'non-2xx + socket errors'], targetRows)}

${run.skipped.map((s) => `Not measured: \`${s.id}\` (${s.label}): ${s.why}.`).join('\n')}

### Ratios

Throughput ratio a/b per round, and its median; the CPU column is the same comparison made from
CPU time per request (b's CPU µs/request over a's), which the neighbours' load disturbs less.

${table(['comparison (a vs b)', 'target', 'median', 'per round', 'by CPU/request', 'verdict'], ratioRows)}
${missing.length ? `\nNot compared (a side was not measured): ${missing.map((m) => m.what).join('; ')}.\n` : ''}
${ownCost ? ownCostMarkdown(ownCost) : ''}
${typicalOwnCost ? typicalOwnCostMarkdown(typicalOwnCost) : ''}
${allocationMarkdown(allocations)}
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
  if (ownCost) {
    targets.unshift({
      what: ownCost.what,
      target: `<= ${fixed(ownCost.target, 1)}x`,
      measured: `${fixed(ownCost.median)}x (${fixed(ownCost.ours, 1)} vs ${fixed(ownCost.peer, 1)} µs; the control's own: ${fixed(ownCost.control, 1)} µs)`,
      verdict: verdict(ownCost.median, ownCost.target, false),
    });
  }
  if (cpuVsBare) {
    targets.unshift({
      what: cpuVsBare.what,
      target: `<= ${fixed(cpuVsBare.target, 1)}x`,
      measured: `${fixed(cpuVsBare.median)}x (per round: ${cpuVsBare.perRound.map((v) => fixed(v)).join(', ')})`,
      verdict: verdict(cpuVsBare.median, cpuVsBare.target, false),
    });
  }
  if (typicalOwnCost) {
    targets.unshift({
      what: typicalOwnCost.what,
      target: `<= ${fixed(typicalOwnCost.target, 1)}x`,
      measured: `${fixed(typicalOwnCost.median)}x (${fixed(typicalOwnCost.ours, 1)} vs ${fixed(typicalOwnCost.peer, 1)} µs)`,
      verdict: verdict(typicalOwnCost.median, typicalOwnCost.target, false),
    });
  }
  const overHttp = Object.fromEntries(perTarget.map((t) => [t.id, t.bytesPerRequest]));
  targets.push({
    what: 'bytes allocated per request, over HTTP: ours / peer / bare Express / control',
    target: '(reported)',
    measured: ['ours', 'peer', 'express', 'control'].map((id) => `${thousands(overHttp[id] ?? Number.NaN)} B`).join(' / '),
    verdict: '',
  });
  targets.push({
    what: 'bytes allocated per request, in process: ours / peer / bare Express / control',
    target: '(reported)',
    measured: ['ours', 'peer', 'express', 'control'].map((id) => `${thousands(allocations[id])} B`).join(' / '),
    verdict: '',
  });
  for (const m of missing.filter((r) => r.target !== undefined)) {
    targets.push({ what: m.what, target: `>= ${fixed(m.target, 1)}x`, measured: 'not measured', verdict: 'not measured' });
  }
  return { markdown, targets };
}

function typicalOwnCostMarkdown(own) {
  return `### The typical app: the same three behind morgan and cookie-parser

Bare Express, the peer stack and ours, each mounted behind morgan (\`combined\`, to a null stream)
and cookie-parser (\`bench/lib/typical.mjs\`), answering the same bytes. Each one's own CPU per
request is its app minus bare Express behind the same neighbours, in the same round. morgan wraps
\`res.writeHead\` before the preset sees the response; ours writes its headers the same way in both
sets (\`setHeader()\` while the response is open, its head hook around morgan's; docs/performance.md).

${table(
  ['', 'own CPU µs/request (median of rounds)'],
  [
    ['ours: conventions()', fixed(own.ours, 1)],
    ['peer stack', fixed(own.peer, 1)],
  ],
)}

Ours' own / the peer's own: **${fixed(own.median)}x** (per round: ${own.perRound.map((v) => fixed(v)).join(', ')}), target <= ${fixed(own.target, 1)}x: ${verdict(own.median, own.target, false)}.
`;
}

function ownCostMarkdown(own) {
  return `### The preset's own CPU per request

Each target's CPU µs/request minus bare Express's in the same round: what the middlewares add.
Target: ours at most ${fixed(own.target, 1)}x the peer stack's. The control
(\`bench/apps/control.mjs\`) sends ours' headers as fixed strings and the same body, with no
middleware logic: its own cost is the price of the headers the conventions require on Express, the floor
this target is measured against.

${table(
  ['', 'own CPU µs/request (median of rounds)'],
  [
    ['ours: conventions()', fixed(own.ours, 1)],
    ['peer stack', fixed(own.peer, 1)],
    ['control: the same headers as fixed strings', fixed(own.control, 1)],
    ['ours above the control (ours - control)', fixed(own.aboveControl, 1)],
  ],
)}

Ours' own / the peer's own: **${fixed(own.median)}x** (per round: ${own.perRound.map((v) => fixed(v)).join(', ')}), target <= ${fixed(own.target, 1)}x: ${verdict(own.median, own.target, false)}.
`;
}
