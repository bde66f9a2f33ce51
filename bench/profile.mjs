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
import { summarizeProfile } from './micro/profile-inject.mjs';

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
console.log(`${name} ${route}: ${Math.round(result.rps)} req/s under the profiler; profile: ${dir}${file}\n`);
console.log(summarizeProfile(profile));
