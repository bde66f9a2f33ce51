// Two or more servers of bench/apps/ under wrk, interleaved rounds
// (bench/lib/interleaved.mjs): req/s and server CPU µs per request, and each
// one's ratio to the first, median of rounds.
// `node bench/micro/http-ab.mjs control control:BENCH_CONTROL_WRITE=writeHead`
// (a `name:VAR=value` runs that app with that environment variable).
import { measureInterleaved } from '../lib/interleaved.mjs';
import { median } from '../lib/stats.mjs';

const specs = process.argv.slice(2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const results = await measureInterleaved(specs, { rounds, seconds });
const first = results[specs[0]];
for (const spec of specs) {
  const rows = results[spec];
  const rpsRatio = median(rows.map((row, i) => row.rps / first[i].rps));
  const cpuRatio = median(rows.map((row, i) => row.cpu / first[i].cpu));
  console.log(
    `${spec.padEnd(48)} ${Math.round(median(rows.map((x) => x.rps)))} req/s ${median(rows.map((x) => x.cpu)).toFixed(1)} µs/request` +
      ` ${Math.round(median(rows.map((x) => x.bytes)))} B/request` +
      `  vs first: req/s ${rpsRatio.toFixed(3)}x, CPU ${cpuRatio.toFixed(3)}x`,
  );
}
