// What each module of conventions() costs, in process (light-my-request, no
// sockets): `node bench/micro/pieces.mjs`. Bare Express, ours with every
// default, and ours with one module off at a time; process CPU µs per
// request, median of interleaved batches. A tool for the profile notes.
import inject from 'light-my-request';
import { createHandler as expressApp } from '../apps/express.mjs';
import { createHandler as oursApp } from '../apps/ours.mjs';
import { BENCH_ORIGIN, PUBLIC_PATH } from '../lib/payload.mjs';
import { median } from '../lib/stats.mjs';

const modules = (
  process.env.PIECES ?? 'commonHeaders,securityHeaders,cors,caching,cookies,json,rateLimit,bodies,methodOverride'
).split(',');
const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
const variants = { express: await expressApp(), ours: await oursApp({}) };
for (const m of modules) variants[`ours -${m}`] = await oursApp({ [m]: false });
const names = Object.keys(variants);
const samples = Object.fromEntries(names.map((n) => [n, []]));
for (const n of names)
  for (let i = 0; i < 600; i++) await inject(variants[n], { url: PUBLIC_PATH, headers: { origin: BENCH_ORIGIN } });
for (let b = 0; b < 15; b++) {
  for (const n of b % 2 ? [...names].reverse() : names) {
    const start = cpuMicros();
    for (let i = 0; i < 300; i++) await inject(variants[n], { url: PUBLIC_PATH, headers: { origin: BENCH_ORIGIN } });
    samples[n].push((cpuMicros() - start) / 300);
  }
}
const full = median(samples.ours);
for (const n of names) {
  const c = median(samples[n]);
  const note = n.startsWith('ours -') ? `  module costs ${(full - c).toFixed(1)} µs` : '';
  console.log(`${n.padEnd(22)} ${c.toFixed(1).padStart(7)} µs/request${note}`);
}
process.exit(0);
