// Two or more servers of bench/apps/ under wrk, interleaved rounds, one
// measurement a server per round (A B … then … B A): req/s and server CPU
// µs per request, and each one's ratio to the first, median of rounds.
// `node bench/micro/http-ab.mjs control control:BENCH_CONTROL_WRITE=writeHead`
// (a `name:VAR=value` runs that app with that environment variable).
import { BENCH_ORIGIN, PUBLIC_PATH } from '../lib/payload.mjs';
import { startServer } from '../lib/servers.mjs';
import { median } from '../lib/stats.mjs';
import { runWrk } from '../lib/wrk.mjs';

const specs = process.argv.slice(2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const servers = [];
try {
  for (const spec of specs) {
    // Split at the first ':' and the first '=': a value may hold either (BENCH_OURS takes JSON).
    const colon = spec.indexOf(':');
    const name = colon < 0 ? spec : spec.slice(0, colon);
    const assignment = colon < 0 ? '' : spec.slice(colon + 1);
    const equals = assignment.indexOf('=');
    const env = assignment ? { [assignment.slice(0, equals)]: assignment.slice(equals + 1) } : {};
    servers.push({ spec, server: await startServer(name, { env }) });
  }
  const options = { connections: 50, headers: { Origin: BENCH_ORIGIN } };
  for (const { server } of servers) await runWrk(`${server.origin}${PUBLIC_PATH}`, { ...options, seconds: 1 });
  const results = Object.fromEntries(specs.map((s) => [s, []]));
  for (let r = 0; r < rounds; r++) {
    for (const { spec, server } of r % 2 ? [...servers].reverse() : servers) {
      const before = await server.usage();
      const result = await runWrk(`${server.origin}${PUBLIC_PATH}`, { ...options, seconds });
      const after = await server.usage();
      const requests = Math.max(1, result.requests);
      results[spec].push({
        rps: result.rps,
        cpu: (after.cpuMicros - before.cpuMicros) / requests,
        bytes: (after.allocatedBytes - before.allocatedBytes) / requests,
      });
    }
  }
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
} finally {
  await Promise.all(servers.map(({ server }) => server.stop()));
}
