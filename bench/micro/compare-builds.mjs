// Before and after, interleaved in one process: ours built from two builds
// of the package (`node --expose-gc --max-semi-space-size=64
// bench/micro/compare-builds.mjs <old dist/esm/index.js> [<new dist/esm/index.js>]`,
// the new one by default this worktree's dist/). CPU µs per request
// (light-my-request, medians of interleaved batches) and bytes allocated per
// request, of the public route, of the bearer route, and of the public route
// in the typical set (behind morgan and cookie-parser). How each change in
// docs/performance.md was measured; `git worktree add /tmp/old <commit>` and
// `npm run build` there give the old build.
import '../lib/production.mjs';
import { pathToFileURL } from 'node:url';
import inject from 'light-my-request';
import { createHandler as oursApp } from '../apps/ours.mjs';
import { bearerTokenForBench, EXPECTED_BODY } from '../http.mjs';
import { libraryAt } from '../lib/library.mjs';
import { BEARER_PATH, BENCH_ORIGIN, PUBLIC_PATH } from '../lib/payload.mjs';
import { median } from '../lib/stats.mjs';
import { typical } from '../lib/typical.mjs';
import { bytesPerCall } from './allocations.mjs';

const [oldPath, newPath = new URL('../../dist/esm/index.js', import.meta.url).pathname] = process.argv.slice(2);
if (!oldPath) throw new Error('usage: compare-builds.mjs <old dist/esm/index.js> [<new dist/esm/index.js>]');
const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
const token = bearerTokenForBench();
const cases = {};
for (const [name, path] of [
  ['old', oldPath],
  ['new', newPath],
]) {
  const library = await libraryAt(pathToFileURL(path).href);
  const app = await oursApp({}, library);
  cases[`${name} public`] = () => inject(app, { url: PUBLIC_PATH, headers: { origin: BENCH_ORIGIN } });
  cases[`${name} bearer`] = () =>
    inject(app, { url: BEARER_PATH, headers: { origin: BENCH_ORIGIN, authorization: `Bearer ${token}` } });
  // The typical set: an app of its own (mounting changes an app's prototypes) behind morgan and cookie-parser.
  const typicalApp = typical(await oursApp({}, library));
  cases[`${name} typical`] = () => inject(typicalApp, { url: PUBLIC_PATH, headers: { origin: BENCH_ORIGIN } });
}
const names = Object.keys(cases);
for (const n of names) {
  const answer = await cases[n]();
  if (answer.statusCode !== 200 || answer.payload !== EXPECTED_BODY)
    throw new Error(`${n}: unexpected answer ${answer.statusCode} ${answer.payload.slice(0, 300)}`);
  for (let i = 0; i < 1500; i++) await cases[n]();
}
const samples = Object.fromEntries(names.map((n) => [n, []]));
const batches = Number(process.env.BATCHES ?? 31);
for (let b = 0; b < batches; b++) {
  for (const n of b % 2 ? [...names].reverse() : names) {
    const start = cpuMicros();
    for (let i = 0; i < 300; i++) await cases[n]();
    samples[n].push((cpuMicros() - start) / 300);
  }
}
for (const route of ['public', 'bearer', 'typical']) {
  const ratios = samples[`new ${route}`].map((v, i) => v / samples[`old ${route}`][i]);
  const oldBytes = await bytesPerCall(cases[`old ${route}`]);
  const newBytes = await bytesPerCall(cases[`new ${route}`]);
  console.log(
    `${route.padEnd(7)} CPU µs/request old ${median(samples[`old ${route}`]).toFixed(1)} new ${median(samples[`new ${route}`]).toFixed(1)}` +
      ` (new/old ${median(ratios).toFixed(3)}); bytes/request old ${Math.round(oldBytes)} new ${Math.round(newBytes)}`,
  );
}
process.exit(0);
