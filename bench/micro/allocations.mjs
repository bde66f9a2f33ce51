// Bytes allocated per request, in process (light-my-request, no sockets):
// `node --expose-gc --max-semi-space-size=64 bench/micro/allocations.mjs`
// (bench/sections/micro-section.mjs starts it so). For each app, batches of
// requests run between a forced GC and a read of the heap in use; with a new
// space large enough that no collection runs inside a batch, the growth is
// what the batch allocated. A batch during which the collector ran anyway is
// thrown away and run again. Bare Express, the peer stack, the control app
// and ours are measured, and ours with one module on at a time (over ours
// with every module off). light-my-request's own allocations are in every
// figure alike; the differences are what an app adds.
import '../lib/production.mjs';
import { PerformanceObserver } from 'node:perf_hooks';
import inject from 'light-my-request';
import { createHandler as controlApp } from '../apps/control.mjs';
import { createHandler as expressApp } from '../apps/express.mjs';
import { createHandler as nodeApp } from '../apps/node-http.mjs';
import { createHandler as oursApp } from '../apps/ours.mjs';
import { createHandler as peerApp } from '../apps/peer.mjs';
import { EXPECTED_BODY } from '../http.mjs';
import { BENCH_ORIGIN, PUBLIC_PATH } from '../lib/payload.mjs';
import { median } from '../lib/stats.mjs';
import { MODULES, only } from './modules.mjs';

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc --max-semi-space-size=64');

let collections = 0;
new PerformanceObserver((list) => {
  collections += list.getEntries().length;
}).observe({ entryTypes: ['gc'] });
// The observer hears of a collection a little later, not within the same turn.
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** Bytes allocated per call of `call` (an async request), median of `batches` clean batches. */
export async function bytesPerCall(call, { batches = 7, perBatch = 200 } = {}) {
  const samples = [];
  for (let tries = 0; samples.length < batches && tries < batches * 4; tries++) {
    globalThis.gc();
    await settle();
    const seen = collections;
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < perBatch; i++) await call();
    const after = process.memoryUsage().heapUsed;
    await settle();
    if (collections === seen) samples.push((after - before) / perBatch);
  }
  return samples.length ? median(samples) : Number.NaN;
}

export async function runAllocations({ modules = true } = {}) {
  const request = (app) => () => inject(app, { method: 'GET', url: PUBLIC_PATH, headers: { origin: BENCH_ORIGIN } });
  const apps = {
    node: request(await nodeApp()),
    express: request(await expressApp()),
    peer: request(await peerApp()),
    control: request(await controlApp()),
    ours: request(await oursApp()),
  };
  if (modules) {
    apps['ours, every module off'] = request(await oursApp(only(undefined)));
    for (const m of Object.keys(MODULES)) apps[`ours, only ${m}`] = request(await oursApp(only(m)));
  }
  const result = {};
  for (const [id, call] of Object.entries(apps)) {
    const answer = await call();
    if (answer.statusCode !== 200 || answer.payload !== EXPECTED_BODY) throw new Error(`${id}: unexpected answer`);
    for (let i = 0; i < 1000; i++) await call();
  }
  for (const [id, call] of Object.entries(apps)) result[id] = await bytesPerCall(call);
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runAllocations({ modules: !process.argv.includes('--apps') });
  if (process.argv.includes('--json')) process.stdout.write(JSON.stringify(result));
  else {
    const base = result['ours, every module off'];
    for (const [id, bytes] of Object.entries(result)) {
      const over = id.startsWith('ours, only') ? `  ${(bytes - base).toFixed(0).padStart(6)} B over every module off` : '';
      console.log(`${id.padEnd(28)} ${bytes.toFixed(0).padStart(7)} B/request${over}`);
    }
  }
  process.exit(0);
}
