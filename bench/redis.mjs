// The Redis path side by side: the preset on RedisCounterStore
// against its own memory path and against the peer stack on rate-limit-redis,
// bare and behind morgan + cookie-parser, each server its own process, one
// Redis of the bench's own on a free port; then the same on a three-master
// Redis Cluster. Rounds interleave the servers (bench/lib/interleaved.mjs);
// every comparison is a median of ratios taken within one round.
//   node bench/redis.mjs             (after `npm run build`)
//   BENCH_ROUNDS, BENCH_SECONDS: rounds and seconds per measurement;
//   BENCH_REDIS_CLUSTER_RUN=0: the single Redis only.
import { measureInterleaved } from './lib/interleaved.mjs';
import { startRedis, startRedisCluster } from './lib/redis.mjs';
import { median } from './lib/stats.mjs';

/** The servers on one Redis, and what is compared. */
export const SINGLE = ['ours', 'ours-redis', 'peer', 'peer-redis', 'typical-ours-redis', 'typical-peer-redis'];
export const SINGLE_RATIOS = [
  { a: 'ours-redis', b: 'ours', target: 0.9, what: 'the preset on RedisCounterStore vs its own memory path' },
  { a: 'ours-redis', b: 'peer-redis', target: 1.4, what: 'the preset on Redis vs the peer stack on rate-limit-redis' },
  {
    a: 'typical-ours-redis',
    b: 'typical-peer-redis',
    target: 1.2,
    what: 'typical app: the preset on Redis vs the peer stack on rate-limit-redis',
  },
  { a: 'peer-redis', b: 'peer', what: 'the peer stack on rate-limit-redis vs its memory store' },
];

/** The servers on the cluster (`ours` stays in memory: the reference). */
const clusterSpecs = (urls) => ['ours', `ours-redis:BENCH_REDIS_CLUSTER=${urls}`, `peer-redis:BENCH_REDIS_CLUSTER=${urls}`];
export const CLUSTER_RATIOS = [
  { a: 'ours-redis', b: 'ours', target: 0.9, what: 'cluster: the preset on RedisCounterStore vs its own memory path' },
  { a: 'ours-redis', b: 'peer-redis', target: 1.4, what: 'cluster: the preset on Redis vs the peer stack on rate-limit-redis' },
];

/** Per server: median req/s and CPU µs/request; per ratio: the median of its per-round values. */
export function summarizeRedis(results, ratios) {
  const byName = Object.fromEntries(Object.entries(results).map(([spec, rows]) => [spec.split(':')[0], rows]));
  const servers = Object.entries(byName).map(([name, rows]) => ({
    name,
    rps: median(rows.map((r) => r.rps)),
    cpu: median(rows.map((r) => r.cpu)),
    bytes: median(rows.map((r) => r.bytes)),
  }));
  const compared = ratios.map((ratio) => {
    const a = byName[ratio.a];
    const b = byName[ratio.b];
    const perRound = a.map((row, i) => row.rps / b[i].rps);
    const cpuPerRound = a.map((row, i) => b[i].cpu / row.cpu);
    return { ...ratio, perRound, median: median(perRound), cpuMedian: median(cpuPerRound) };
  });
  return { servers, ratios: compared };
}

/** Both runs; each Redis is stopped whatever happens. */
export async function runRedis({ rounds = 4, seconds = 3, cluster = true, log = () => undefined } = {}) {
  const redis = await startRedis();
  let single;
  process.env.BENCH_REDIS = redis.url; // inherited by the bench servers
  try {
    log(`one Redis at ${redis.url}`);
    single = summarizeRedis(await measureInterleaved(SINGLE, { rounds, seconds, log }), SINGLE_RATIOS);
  } finally {
    delete process.env.BENCH_REDIS;
    await redis.stop();
  }
  if (!cluster) return { single };
  const nodes = await startRedisCluster(3);
  try {
    log(`a Redis Cluster at ${nodes.urls.join(', ')}`);
    const results = await measureInterleaved(clusterSpecs(nodes.urls.join(',')), { rounds, seconds, log });
    return { single, cluster: summarizeRedis(results, CLUSTER_RATIOS) };
  } finally {
    await nodes.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const run = await runRedis({
    rounds: Number(process.env.BENCH_ROUNDS ?? 3),
    seconds: Number(process.env.BENCH_SECONDS ?? 3),
    cluster: process.env.BENCH_REDIS_CLUSTER_RUN !== '0',
    log: (line) => console.log(line),
  });
  for (const part of [run.single, run.cluster].filter(Boolean)) {
    for (const s of part.servers) console.log(s.name.padEnd(20), Math.round(s.rps), s.cpu.toFixed(1), Math.round(s.bytes));
    for (const r of part.ratios)
      console.log(
        r.what.padEnd(75),
        r.median.toFixed(2),
        `(${r.perRound.map((v) => v.toFixed(2)).join(' ')})`,
        `cpu ${r.cpuMedian.toFixed(2)}`,
        r.target ?? '',
      );
  }
}
