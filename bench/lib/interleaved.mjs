// Servers of bench/apps/ under wrk in interleaved rounds, one measurement a
// server per round (A B … then … B A), so that a neighbour's burst hits each
// side alike: per server and round, req/s, server CPU µs and bytes
// allocated per request. A spec is an app's name, or `name:VAR=value` to
// run it with that environment variable (split at the first ':' and the
// first '=': a value may hold either, BENCH_OURS takes JSON).
import { BENCH_ORIGIN, PUBLIC_PATH } from './payload.mjs';
import { startServer } from './servers.mjs';
import { runWrk } from './wrk.mjs';

function parseSpec(spec) {
  const colon = spec.indexOf(':');
  const name = colon < 0 ? spec : spec.slice(0, colon);
  const assignment = colon < 0 ? '' : spec.slice(colon + 1);
  const equals = assignment.indexOf('=');
  return { name, env: assignment ? { [assignment.slice(0, equals)]: assignment.slice(equals + 1) } : {} };
}

/** `{ [spec]: [{ rps, cpu, bytes }, …one per round] }`. */
export async function measureInterleaved(specs, { rounds, seconds, log = () => undefined }) {
  const servers = [];
  try {
    for (const spec of specs) {
      const { name, env } = parseSpec(spec);
      servers.push({ spec, server: await startServer(name, { env }) });
    }
    const options = { connections: 50, headers: { Origin: BENCH_ORIGIN } };
    for (const { server } of servers) await runWrk(`${server.origin}${PUBLIC_PATH}`, { ...options, seconds: 1 });
    const results = Object.fromEntries(specs.map((s) => [s, []]));
    for (let r = 0; r < rounds; r++) {
      log(`round ${r + 1} of ${rounds}`);
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
    return results;
  } finally {
    await Promise.all(servers.map(({ server }) => server.stop()));
  }
}
