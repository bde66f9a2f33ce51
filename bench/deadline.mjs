// The sign-in deadline under a mixed load: REQUESTS
// requests over 50 keep-alive connections, each connection sending its share
// in turn, every third one a password grant (bcrypt cost 12), the others GETs
// of an item. Each password grant is timed from the moment it is sent; the
// conventions promise an answer, or a 503/429 with Retry-After, within 5 s.
// Same apps as the login storm (bench/apps/storm-*.mjs): ours (tokenRouter()
// in the preset, bcrypt in the worker pool) beside the peer stack (bcryptjs's
// async compare on the main thread). Needs `npm run build` first.
//
//   node bench/deadline.mjs            (REQUESTS=600 by default)
//   BENCH_DEADLINE_REQUESTS=5000 node bench/deadline.mjs
//   BENCH_DEADLINE_SERVERS=ours node bench/deadline.mjs
import http from 'node:http';
import bcrypt from 'bcryptjs';
import { PUBLIC_PATH, STORM_USER } from './lib/payload.mjs';
import { percentile } from './lib/prober.mjs';
import { startServer } from './lib/servers.mjs';

const REQUESTS = Number(process.env.BENCH_DEADLINE_REQUESTS ?? 600);
const CONNECTIONS = 50;
const DEADLINE_MS = 5000;
const SERVERS = [
  { id: 'peer', app: 'storm-peer', label: 'peer: bcryptjs async compare on the main thread' },
  { id: 'ours', app: 'storm-ours', label: 'ours: tokenRouter(), one deadline from arrival' },
];

/** One request on `agent`, timed from when it is sent: status, Retry-After, milliseconds. */
function send(agent, url, { method = 'GET', body } = {}) {
  const headers = body ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } : {};
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const req = http.request(url, { agent, method, headers }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          retryAfter: res.headers['retry-after'],
          ms: Number(process.hrtime.bigint() - start) / 1e6,
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The mixed load on one server; the password grants' answers. */
async function mixedLoad(origin) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const { username, password } = STORM_USER;
  const grant = new URLSearchParams({ grant_type: 'password', username, password }).toString();
  const grants = [];
  let gets = 0;
  let next = 0;
  const loop = async () => {
    for (let i = next++; i < REQUESTS; i = next++) {
      if (i % 3 === 2) grants.push(await send(agent, `${origin}/v1/oauth2/token`, { method: 'POST', body: grant }));
      else if ((await send(agent, `${origin}${PUBLIC_PATH}`)).status === 200) gets++;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, loop));
  agent.destroy();
  return { grants, gets };
}

function summary(grants) {
  const ms = grants.map((g) => g.ms);
  const statuses = {};
  for (const g of grants) statuses[g.status] = (statuses[g.status] ?? 0) + 1;
  const refusedWithoutRetryAfter = grants.filter((g) => g.status !== 200 && g.status !== 400 && !g.retryAfter).length;
  return {
    count: grants.length,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    max: Math.max(...ms),
    overDeadline: ms.filter((v) => v > DEADLINE_MS).length,
    overDeadlineStatuses: grants.filter((g) => g.ms > DEADLINE_MS).map((g) => `${g.status} after ${Math.round(g.ms)} ms`),
    statuses,
    refusedWithoutRetryAfter,
  };
}

const hash = await bcrypt.hash(STORM_USER.password, STORM_USER.cost);
const results = [];
const only = process.env.BENCH_DEADLINE_SERVERS?.split(',');
for (const spec of SERVERS.filter((s) => !only || only.includes(s.id))) {
  const server = await startServer(spec.app, { env: { BENCH_PASSWORD_HASH: hash } });
  try {
    console.error(`deadline: ${spec.id}, ${REQUESTS} requests over ${CONNECTIONS} connections`);
    const { grants, gets } = await mixedLoad(server.origin);
    results.push({ id: spec.id, label: spec.label, gets, grants: summary(grants) });
  } finally {
    await server.stop();
  }
}
console.log(JSON.stringify(results, null, 1));
for (const r of results) {
  const g = r.grants;
  console.log(
    `${r.id.padEnd(5)} password grants: ${g.count}, p50 ${g.p50.toFixed(0)} ms, p99 ${g.p99.toFixed(0)} ms, ` +
      `max ${g.max.toFixed(0)} ms, over ${DEADLINE_MS} ms: ${g.overDeadline}, statuses ${JSON.stringify(g.statuses)}`,
  );
}
