import { table, verdict } from '../lib/report.mjs';
import { fixed, thousands } from '../lib/stats.mjs';
import { runRedis } from '../redis.mjs';

/** The Redis path (bench/redis.mjs): the preset on RedisCounterStore beside its memory path and the peer on rate-limit-redis. */
export async function redisSection({ log }) {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  const seconds = Number(process.env.BENCH_SECONDS ?? 3);
  const run = await runRedis({ rounds, seconds, cluster: process.env.BENCH_REDIS_CLUSTER_RUN !== '0', log });
  const parts = [run.single, run.cluster].filter(Boolean);
  const serverRows = (part, where) =>
    part.servers.map((s) => [`${s.name} (${where})`, thousands(s.rps), fixed(s.cpu, 1), thousands(s.bytes)]);
  const ratioRows = parts.flatMap((part) =>
    part.ratios.map((r) => [
      r.what,
      r.target === undefined ? '' : `>= ${fixed(r.target, 1)}x`,
      `**${fixed(r.median)}x**`,
      r.perRound.map((v) => fixed(v)).join(', '),
      `${fixed(r.cpuMedian)}x`,
      r.target === undefined ? '' : verdict(r.median, r.target),
    ]),
  );
  const markdown = `## The Redis path

The rate-limit counters in a Redis of the bench's own (then a three-master Redis Cluster), every
server its own process, wrk with 50 connections, ${seconds} s per measurement, ${rounds} interleaved
rounds. \`ours-redis\`: the preset on \`RedisCounterStore\`; \`peer-redis\`: the peer stack on
rate-limit-redis; \`typical-\`: the same behind morgan and cookie-parser.

${table(['server', 'req/s', 'CPU µs/request', 'bytes allocated/request'], [...serverRows(run.single, 'one Redis'), ...(run.cluster ? serverRows(run.cluster, 'cluster') : [])])}

${table(['comparison (a vs b)', 'target', 'median', 'per round', 'by CPU/request', 'verdict'], ratioRows)}
`;
  const targets = parts.flatMap((part) =>
    part.ratios
      .filter((r) => r.target !== undefined)
      .map((r) => ({
        what: r.what,
        target: `>= ${fixed(r.target, 1)}x`,
        measured: `${fixed(r.median)}x (CPU: ${fixed(r.cpuMedian)}x)`,
        verdict: verdict(r.median, r.target),
      })),
  );
  return { markdown, targets };
}
