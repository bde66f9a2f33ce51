// A small, dependency-free timing loop for the micro-benchmarks. Candidates
// are measured in interleaved batches (A B C … A B C …) so that a neighbour's
// load on this shared machine hits every candidate alike; each candidate's
// time is the median of its batches and each ratio the median of the
// per-batch ratios against the baseline measured in the same batch.

let sink = 0;

/** What the calls returned, summed: printed nowhere, read so it stays live. */
export const sinkTotal = () => sink;

/** Keeps a result alive so the optimiser cannot drop the call. */
export function consume(value) {
  // charCodeAt flattens a rope (a string built by concatenation), a cost the
  // response pays anyway when it writes the text, so it is counted here.
  if (typeof value === 'string') sink += value.length + value.charCodeAt(value.length >> 1);
  else if (typeof value === 'number') sink += value;
  else if (value) sink += 1;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// Time is the process's own CPU time (user + system, every thread, so the
// garbage collector's helpers count too), not the wall clock: on a shared
// machine the wall clock also counts the time other processes held the core.
const cpuNs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
};

function timeBatch(fn, iterations) {
  const start = cpuNs();
  for (let i = 0; i < iterations; i++) consume(fn());
  return (cpuNs() - start) / iterations;
}

/** How many calls make one batch last about `batchMs`. */
function calibrate(fn, batchMs) {
  let iterations = 1;
  for (;;) {
    const start = cpuNs();
    for (let i = 0; i < iterations; i++) consume(fn());
    const elapsedMs = (cpuNs() - start) / 1e6;
    if (elapsedMs >= batchMs / 4) return Math.max(1, Math.round((iterations * batchMs) / elapsedMs));
    iterations *= 4;
  }
}

/**
 * Measures `candidates` ({ name: fn }) against `baseline` (a key of it).
 * Returns one row per candidate: median ns per call, ops/s, and the median
 * per-batch ratio of its time to the baseline's.
 */
export function compare(candidates, baseline, { batches = 31, batchMs = 10 } = {}) {
  const names = Object.keys(candidates);
  const iterations = {};
  for (const name of names) {
    for (let i = 0; i < 3; i++) timeBatch(candidates[name], 64); // warm-up, lets the JIT settle
    iterations[name] = calibrate(candidates[name], batchMs);
  }
  const tally = interleavedTally(names, baseline);
  for (let b = 0; b < batches; b++) {
    const round = {};
    for (const name of tally.order(b)) round[name] = timeBatch(candidates[name], iterations[name]);
    tally.add(round);
  }
  return tally.rows();
}

async function timeBatchAsync(fn, iterations) {
  const start = cpuNs();
  for (let i = 0; i < iterations; i++) await fn();
  return (cpuNs() - start) / iterations;
}

/** compare() for candidates that return a promise: each call is awaited; fixed batch sizes. */
export async function compareAsync(candidates, baseline, { batches = 15, iterations = 400 } = {}) {
  const names = Object.keys(candidates);
  for (const name of names) await timeBatchAsync(candidates[name], 200); // warm-up
  const tally = interleavedTally(names, baseline);
  for (let b = 0; b < batches; b++) {
    const round = {};
    for (const name of tally.order(b)) round[name] = await timeBatchAsync(candidates[name], iterations);
    tally.add(round);
  }
  return tally.rows();
}

/**
 * The bookkeeping of interleaved batches: the order of batch `b` (reversed
 * every other batch, so neither end always runs first), each round's times
 * and ratios to the baseline, and the rows of medians at the end.
 */
function interleavedTally(names, baseline) {
  const times = Object.fromEntries(names.map((n) => [n, []]));
  const ratios = Object.fromEntries(names.map((n) => [n, []]));
  const reversed = [...names].reverse();
  return {
    order: (b) => (b % 2 ? reversed : names),
    add(round) {
      for (const name of names) {
        times[name].push(round[name]);
        ratios[name].push(round[name] / round[baseline]);
      }
    },
    rows: () =>
      names.map((name) => {
        const ns = median(times[name]);
        return { name, ns, opsPerSecond: 1e9 / ns, ratio: median(ratios[name]) };
      }),
  };
}

export { median };
