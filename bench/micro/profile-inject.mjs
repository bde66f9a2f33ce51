// Where ours spends its CPU, without sockets: `node --cpu-prof
// --cpu-prof-dir=bench/profiles bench/micro/profile-inject.mjs [ours|peer|express] [public|bearer]`
// drives one app in process for a few seconds; then
// `node bench/micro/profile-inject.mjs --read <file.cpuprofile>` prints self time
// by package or src/ file and by function.
import '../lib/production.mjs';
import { readFileSync } from 'node:fs';
import inject from 'light-my-request';
import { bearerTokenForBench } from '../http.mjs';
import { BEARER_PATH, BENCH_ORIGIN, PUBLIC_PATH } from '../lib/payload.mjs';

const [first, second = 'public'] = process.argv.slice(2);

export function summarizeProfile(profile, { places = 25, functions = 40 } = {}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const place = (url) => {
    if (!url) return '(native)';
    const nm = url.lastIndexOf('node_modules/');
    if (nm !== -1) {
      const rest = url.slice(nm + 13).split('/');
      return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    }
    const dist = url.indexOf('/dist/cjs/');
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
  // Inclusive time of the middlewares and of src/ functions: a sample counts
  // for every such function on its stack (once each), so a middleware's figure
  // is what it costs with everything it calls.
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inclusive = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const seen = new Set();
    for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const { callFrame } = byId.get(id);
      const where = place(callFrame.url);
      const name = callFrame.functionName;
      if (!(where.startsWith('src/') || /Middleware$|Parser$|^(helmet|corsMiddleware|rateLimit|send|json)$/.test(name))) continue;
      const key = `${name || '(anonymous)'}  ${where}:${callFrame.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
    }
  }
  // Each sample charged to the innermost middleware (or send path) on its
  // stack: what each middleware costs without the ones it calls next().
  const OWNER = /Middleware$|Parser$|^(send|json|sendJson|sendJsonText|end|handleRequest|stringifyJson)$/;
  const owned = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    let owner = '(outside any middleware)';
    for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const { callFrame } = byId.get(id);
      if (OWNER.test(callFrame.functionName)) {
        owner = `${callFrame.functionName}  ${place(callFrame.url)}`;
        break;
      }
    }
    owned.set(owner, (owned.get(owner) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  return `innermost middleware on the stack:\n${top(owned, functions)}\n\nself time by package / file:\n${top(byPlace, places)}\n\nself time by function:\n${top(byFunction, functions)}\n\ninclusive time of middlewares and src/ functions:\n${top(inclusive, functions)}`;
}

if (first === '--read') {
  console.log(summarizeProfile(JSON.parse(readFileSync(second, 'utf8'))));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const name = first ?? 'ours';
  const { createHandler } = await import(`../apps/${name}.mjs`);
  const app = await createHandler();
  const bearer = second === 'bearer';
  const headers = { origin: BENCH_ORIGIN, ...(bearer ? { authorization: `Bearer ${bearerTokenForBench()}` } : {}) };
  const url = bearer ? BEARER_PATH : PUBLIC_PATH;
  const end = Date.now() + Number(process.env.SECONDS ?? 5) * 1000;
  let n = 0;
  while (Date.now() < end) {
    for (let i = 0; i < 100; i++) await inject(app, { url, headers });
    n += 100;
  }
  console.error(`${name} ${second}: ${n} requests`);
  process.exit(0);
}
