// `npm run bench`: one whole interleaved run (HTTP side by side, micro-
// benchmarks, login storm, store memory), then bench/results.md rewritten
// with the machine it ran on. Bounded: about 3-4 minutes on 2 cores.
//   BENCH_ROUNDS (default 4), BENCH_SECONDS (default 3): the HTTP rounds;
//   BENCH_ONLY=http,redis,micro,storm,memory: run some sections only (results.md is
//   then written to bench/results.partial.md, not over the full results).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describeMachine, loadAverage } from './lib/machine.mjs';
import { table } from './lib/report.mjs';
import { httpSection } from './sections/http-section.mjs';
import { memorySection } from './sections/memory-section.mjs';
import { microSection } from './sections/micro-section.mjs';
import { redisSection } from './sections/redis-section.mjs';
import { stormSection } from './sections/storm-section.mjs';

const SECTIONS = { http: httpSection, redis: redisSection, micro: microSection, storm: stormSection, memory: memorySection };
const only = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',') : Object.keys(SECTIONS);
const log = (line) => process.stderr.write(`[bench] ${line}\n`);

const machine = describeMachine(); // throws, with how to install wrk, when wrk is missing
const started = Date.now();
const parts = [];
const checks = [];
let failed = false;
for (const name of only) {
  const section = SECTIONS[name];
  if (!section) throw new Error(`BENCH_ONLY: no section "${name}"; sections: ${Object.keys(SECTIONS).join(', ')}`);
  log(`${name}: start`);
  try {
    const { markdown, targets = [] } = await section({ log });
    parts.push(markdown);
    checks.push(...targets);
  } catch (error) {
    failed = true;
    log(`${name}: FAILED ${error.stack}`);
    parts.push(`## ${name}\n\nThis section failed: \`${String(error.message).split('\n')[0]}\``);
  }
}
const seconds = Math.round((Date.now() - started) / 1000);

const header = `# Benchmark results

Written by \`npm run bench\` (bench/run.mjs); how to read and reproduce it: [docs/performance.md](../docs/performance.md).
Every comparison is a median of ratios taken within one round (rounds interleave the servers), so
that the load other processes put on this shared machine hits each side alike; absolute figures
are context only.

| | |
| --- | --- |
| date | ${machine.date} |
| commit | ${machine.commit}${machine.dirty ? ' (with uncommitted changes)' : ''} |
| CPU | ${machine.cpu} |
| memory | ${machine.memory} |
| OS | ${machine.os} |
| Node | ${machine.node} |
| load generator | ${machine.wrk} |
| load average (1, 5, 15 min) at start / end | ${machine.loadAtStart} / ${loadAverage()} |
| duration of the run | ${seconds} s |

## Targets

${table(
  ['what', 'target', 'measured', 'verdict'],
  checks.map((c) => [c.what, c.target, c.measured, c.verdict]),
)}
`;

const out = only.length === Object.keys(SECTIONS).length ? 'results.md' : 'results.partial.md';
writeFileSync(fileURLToPath(new URL(out, import.meta.url)), `${[header, ...parts].join('\n\n')}\n`);
log(`wrote bench/${out} in ${seconds} s`);
process.exitCode = failed ? 1 : 0;
