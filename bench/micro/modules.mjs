// What each module of conventions() costs on its own, in process
// (light-my-request, no sockets): `node bench/micro/modules.mjs`. Ours with
// every module off (Express plus the route), then with one module on at a
// time; process CPU µs per request over the all-off app, medians of
// interleaved batches. A tool for the profile notes in docs/performance.md.
import '../lib/production.mjs';
import inject from 'light-my-request';
import { createHandler as oursApp } from '../apps/ours.mjs';
import { BENCH_ORIGIN, BENCH_RATE_LIMIT, PUBLIC_PATH } from '../lib/payload.mjs';
import { median } from '../lib/stats.mjs';

export const MODULES = {
  commonHeaders: {},
  securityHeaders: {},
  corsPolicy: { origins: [BENCH_ORIGIN] },
  caching: {},
  secureCookies: {},
  jsonResponses: {},
  rateLimit: { limit: BENCH_RATE_LIMIT },
  parseBodies: {},
  methodOverride: {},
};
export const only = (name) => Object.fromEntries(Object.keys(MODULES).map((m) => [m, m === name ? MODULES[m] : false]));

export async function runModules({ batches = 21, perBatch = 300 } = {}) {
  const cpuMicros = () => {
    const { user, system } = process.cpuUsage();
    return user + system;
  };
  const variants = { none: await oursApp(only(undefined)), all: await oursApp({}) };
  for (const m of Object.keys(MODULES)) variants[m] = await oursApp(only(m));
  const names = Object.keys(variants);
  const call = (app) => inject(app, { url: PUBLIC_PATH, headers: { origin: BENCH_ORIGIN } });
  for (const n of names) for (let i = 0; i < 500; i++) await call(variants[n]);
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (let b = 0; b < batches; b++) {
    for (const n of b % 2 ? [...names].reverse() : names) {
      const start = cpuMicros();
      for (let i = 0; i < perBatch; i++) await call(variants[n]);
      samples[n].push((cpuMicros() - start) / perBatch);
    }
  }
  const base = median(samples.none);
  return names.map((n) => ({ module: n, micros: median(samples[n]), over: median(samples[n]) - base }));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await runModules()) {
    console.log(
      `${row.module.padEnd(16)} ${row.micros.toFixed(1).padStart(7)} µs/request  ${row.over.toFixed(1).padStart(6)} µs over none`,
    );
  }
  process.exit(0);
}
