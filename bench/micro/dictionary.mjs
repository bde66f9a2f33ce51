// The preset's dictionary mode (docs/performance.md, "The request and the
// response as dictionaries"): ours with it on (the default) and off
// (`dictionaryMode: false`), side by side with bare Express and the peer
// stack, in both sets (bare, and typical: morgan + cookie-parser in front),
// all eight servers in the same interleaved rounds (bench/lib/interleaved.mjs).
// Prints a Markdown table of medians of per-round ratios.
//   node bench/micro/dictionary.mjs          (BENCH_ROUNDS, default 4; BENCH_SECONDS, default 2)
// Needs the build (npm run build) and wrk.

import { measureInterleaved } from '../lib/interleaved.mjs';
import { loadAverage } from '../lib/machine.mjs';
import { table } from '../lib/report.mjs';
import { fixed, median } from '../lib/stats.mjs';

const OFF = 'BENCH_OURS={"dictionaryMode":false}';
const SETS = [
  { set: 'bare', express: 'express', peer: 'peer', on: 'ours', off: `ours:${OFF}` },
  { set: 'typical', express: 'typical-express', peer: 'typical-peer', on: 'typical-ours', off: `typical-ours:${OFF}` },
];
const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const log = (line) => process.stderr.write(`[dictionary] ${line}\n`);

const loadBefore = loadAverage();
const specs = SETS.flatMap(({ express, peer, on, off }) => [express, peer, on, off]);
const results = await measureInterleaved(specs, { rounds, seconds, log });

/** Median over rounds of a figure computed from each round's measurements. */
const perRound = (compute) => median(results[specs[0]].map((_, round) => compute((spec) => results[spec][round])));
const rows = [];
for (const { set, express, peer, on, off } of SETS) {
  for (const [what, spec] of [
    ['ours, dictionary mode on', on],
    ['ours, `dictionaryMode: false`', off],
    ['the peer stack', peer],
  ]) {
    rows.push([
      `${set}: ${what}`,
      fixed(
        perRound((at) => at(spec).cpu),
        1,
      ),
      `${fixed(perRound((at) => at(spec).cpu / at(express).cpu))}x`,
      `${fixed(perRound((at) => at(spec).rps / at(peer).rps))}x`,
      `${fixed(perRound((at) => (at(spec).cpu - at(express).cpu) / (at(peer).cpu - at(express).cpu)))}x`,
      fixed(
        perRound((at) => at(spec).bytes / 1024),
        1,
      ),
    ]);
  }
  rows.push([
    `${set}: on vs off`,
    '',
    `${fixed(perRound((at) => at(on).cpu / at(off).cpu))}x (CPU, on/off)`,
    `${fixed(perRound((at) => at(on).rps / at(off).rps))}x (req/s, on/off)`,
    '',
    '',
  ]);
}
console.log(
  `${rounds} interleaved rounds of ${seconds} s, load average ${loadBefore} at start, ${loadAverage()} at end; medians of per-round ratios\n`,
);
console.log(
  table(
    [
      'server',
      'CPU µs/request',
      'CPU vs bare Express',
      'req/s vs the peer stack',
      'own CPU vs the peer stack’s own',
      'KB allocated/request',
    ],
    rows,
  ),
);
