// Profiles one bench server under load: `node bench/profile.mjs ours [public|bearer] [seconds]`.
// Starts the server with `node --cpu-prof`, drives it with wrk, stops it and
// prints where its CPU time went: self time by function, and by package or
// src/ file. The .cpuprofile stays in bench/profiles/ for Chrome DevTools.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bearerTokenForBench } from './http.mjs';
import { BEARER_PATH, BENCH_ORIGIN, PUBLIC_PATH } from './lib/payload.mjs';
import { startServer } from './lib/servers.mjs';
import { runWrk } from './lib/wrk.mjs';

const [name = 'ours', route = 'public', seconds = '5'] = process.argv.slice(2);
const dir = fileURLToPath(new URL(`profiles/${name}-${route}-${Date.now()}/`, import.meta.url));
mkdirSync(dir, { recursive: true });

const server = await startServer(name, { execArgv: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
const bearer = route === 'bearer';
const url = `${server.origin}${bearer ? BEARER_PATH : PUBLIC_PATH}`;
const headers = { Origin: BENCH_ORIGIN, ...(bearer ? { Authorization: `Bearer ${bearerTokenForBench()}` } : {}) };
await runWrk(url, { seconds: 1, headers });
const result = await runWrk(url, { seconds: Number(seconds), headers });
await server.stop();
await new Promise((resolve) => setTimeout(resolve, 500));

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
const profile = JSON.parse(readFileSync(`${dir}${file}`, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const deltas = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  self.set(id, (self.get(id) ?? 0) + (deltas[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);

const place = (url) => {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm !== -1) {
    const rest = url.slice(nm + 13).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const dist = url.indexOf('/dist/esm/');
  if (dist !== -1) return `src/${url.slice(dist + 10)}`;
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\/.*\/bench\//, 'bench/');
};
const byFunction = new Map();
const byPlace = new Map();
for (const [id, time] of self) {
  const { callFrame } = byId.get(id);
  const where = place(callFrame.url);
  const key = `${callFrame.functionName || '(anonymous)'}  ${where}:${callFrame.lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + time);
  byPlace.set(where, (byPlace.get(where) ?? 0) + time);
}
const top = (map, n) =>
  [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`)
    .join('\n');
console.log(`${name} ${route}: ${Math.round(result.rps)} req/s under the profiler; profile: ${dir}${file}\n`);
console.log(`self time by package / file:\n${top(byPlace, 25)}\n`);
console.log(`self time by function:\n${top(byFunction, 40)}`);
