// The HTTP benchmark: every server in its own process on 127.0.0.1, the same
// route and ~400-byte user, wrk as the client; rounds interleaved
// (A B C … then … C B A) and every comparison a ratio within one round.
import jwt from 'jsonwebtoken';
import { BEARER_PATH, BENCH_ORIGIN, JWT_AUDIENCE, JWT_ISSUER, JWT_KID, JWT_SECRET, PUBLIC_PATH, USER } from './lib/payload.mjs';
import { startServer } from './lib/servers.mjs';
import { median } from './lib/stats.mjs';
import { runWrk } from './lib/wrk.mjs';

/** The servers, each its own process. */
export const SERVERS = [
  'node-http',
  'express',
  'peer',
  'fastify',
  'control',
  'ours',
  'typical-express',
  'typical-peer',
  'typical-ours',
];

/** What is measured: a server and a route. */
export const TARGETS = [
  { id: 'node', server: 'node-http', path: PUBLIC_PATH, label: 'bare node:http' },
  { id: 'express', server: 'express', path: PUBLIC_PATH, label: 'bare Express 5' },
  { id: 'peer', server: 'peer', path: PUBLIC_PATH, label: 'peer: helmet + cors + express-rate-limit + ETag' },
  { id: 'fastify', server: 'fastify', path: PUBLIC_PATH, label: 'Fastify 5 + helmet + cors + rate-limit' },
  { id: 'control', server: 'control', path: PUBLIC_PATH, label: "control: ours' headers as fixed strings, setHeader() each" },
  { id: 'ours', server: 'ours', path: PUBLIC_PATH, label: 'ours: Express 5 + conventions()' },
  { id: 'node+jwt', server: 'node-http', path: BEARER_PATH, bearer: true, label: 'bare node:http, jsonwebtoken KeyObject' },
  { id: 'express+jwt', server: 'express', path: BEARER_PATH, bearer: true, label: 'bare Express 5, jsonwebtoken KeyObject' },
  { id: 'peer+jwt', server: 'peer', path: BEARER_PATH, bearer: true, label: 'peer stack, jsonwebtoken string secret' },
  { id: 'fastify+jwt', server: 'fastify', path: BEARER_PATH, bearer: true, label: 'Fastify set, jsonwebtoken string secret' },
  { id: 'control+jwt', server: 'control', path: BEARER_PATH, bearer: true, label: 'control, jsonwebtoken KeyObject' },
  { id: 'ours+jwt', server: 'ours', path: BEARER_PATH, bearer: true, label: 'ours: conventions() + bearerAuth()' },
  // The typical-app set: each of the three behind morgan (to a null stream) and cookie-parser.
  {
    id: 'typical-express',
    server: 'typical-express',
    path: PUBLIC_PATH,
    label: 'typical: bare Express 5 behind morgan + cookie-parser',
  },
  {
    id: 'typical-peer',
    server: 'typical-peer',
    path: PUBLIC_PATH,
    label: 'typical: the peer stack behind morgan + cookie-parser',
  },
  {
    id: 'typical-ours',
    server: 'typical-ours',
    path: PUBLIC_PATH,
    label: 'typical: conventions() behind morgan + cookie-parser',
  },
];

/** The comparisons reported, each a median of per-round throughput ratios. */
export const RATIOS = [
  { a: 'ours', b: 'express', target: 1.0, what: 'conventions() vs bare Express' },
  { a: 'ours', b: 'peer', target: 1.4, what: 'conventions() vs the peer stack' },
  { a: 'peer', b: 'express', what: 'peer stack vs bare Express' },
  { a: 'fastify', b: 'express', what: 'Fastify set vs bare Express' },
  { a: 'express', b: 'node', what: 'bare Express vs bare node:http' },
  { a: 'ours', b: 'control', what: 'conventions() vs the control (the unavoidable work only)' },
  { a: 'control', b: 'express', what: 'the control vs bare Express' },
  { a: 'ours+jwt', b: 'express+jwt', target: 0.9, what: 'bearerAuth() route vs Express + pre-built-key jsonwebtoken' },
  { a: 'ours+jwt', b: 'peer+jwt', target: 3.0, what: "bearerAuth() route vs the peer's usual jsonwebtoken check" },
  { a: 'peer+jwt', b: 'express', what: 'peer bearer route vs bare Express (public route)' },
  { a: 'express+jwt', b: 'express', what: 'pre-built-key check vs bare Express (public route)' },
  { a: 'ours+jwt', b: 'control+jwt', what: 'bearerAuth() route vs the control with a pre-built-key check' },
  { a: 'typical-ours', b: 'typical-peer', target: 1.2, what: 'typical app: conventions() vs the peer stack' },
  { a: 'typical-ours', b: 'typical-express', what: 'typical app: conventions() vs bare Express' },
];

/**
 * The preset's own CPU per request (ours - bare Express) against
 * the peer stack's own (peer - bare Express), per round, and the control's
 * own (control - bare Express) beside them: what is left above the control
 * is the preset's logic, what the control costs is the headers' own price.
 */
export const OWN_COST = { target: 0.5, what: "conventions()' own CPU/request vs the peer stack's own (each minus bare Express)" };

/**
 * The preset's CPU per request at most bare Express's, in the bare
 * set (ours / bare Express per round, median).
 */
export const CPU_VS_BARE = { target: 1.0, what: "conventions()' CPU/request vs bare Express's (the bare set)" };

/** The same comparison in the typical-app set, each minus bare Express behind the same neighbours. */
export const TYPICAL_OWN_COST = {
  target: 0.5,
  what: "typical app: conventions()' own CPU/request vs the peer stack's own (each minus bare Express with the same neighbours)",
};

export const EXPECTED_BODY = JSON.stringify(USER);

/**
 * One HS256 access token every server accepts: jsonwebtoken checks the
 * signature and claims; bearerAuth() also wants the `kid` of a key it knows
 * and `typ: at+jwt` (RFC 9068), which the others ignore.
 */
export function bearerTokenForBench(extraClaims = {}) {
  return jwt.sign({ sub: USER.id_str, scope: 'users:read', ...extraClaims }, JWT_SECRET, {
    algorithm: 'HS256',
    header: { alg: 'HS256', kid: JWT_KID, typ: 'at+jwt' },
    issuer: JWT_ISSUER,
    audience: JWT_AUDIENCE,
    expiresIn: '1h',
  });
}

/** Starts every server; returns a map name -> ServerProcess. */
export async function startAll(names = SERVERS) {
  const started = {};
  try {
    for (const name of names) started[name] = await startServer(name);
  } catch (error) {
    await stopAll(started);
    throw error;
  }
  return started;
}

export const stopAll = (servers) => Promise.all(Object.values(servers).map((s) => s.stop()));

/**
 * Asks each target once: status, body and headers. A target whose server
 * does not offer the route yet (ours before bearerAuth() exists) answers 404
 * and is left out of the run, said so in the results.
 */
export async function probe(servers, token) {
  const answers = {};
  for (const target of TARGETS) {
    const headers = { origin: BENCH_ORIGIN, ...(target.bearer ? { authorization: `Bearer ${token}` } : {}) };
    const response = await fetch(`${servers[target.server].origin}${target.path}`, { headers });
    const body = await response.text();
    answers[target.id] = { status: response.status, body, headers: Object.fromEntries(response.headers) };
  }
  return answers;
}

async function measure(server, url, options) {
  const before = await server.usage();
  const result = await runWrk(url, options);
  const after = await server.usage();
  const requests = Math.max(1, result.requests);
  return {
    ...result,
    cpuPerRequest: (after.cpuMicros - before.cpuMicros) / requests,
    bytesPerRequest: (after.allocatedBytes - before.allocatedBytes) / requests,
  };
}

/**
 * One whole interleaved run. `log` receives progress lines.
 * Returns { targets, skipped, rounds: [{ [id]: result }], answers }.
 */
export async function runHttp({ rounds = 4, seconds = 3, warmupSeconds = 1, connections = 50, log = () => {} } = {}) {
  const token = bearerTokenForBench();
  const servers = await startAll();
  try {
    const answers = await probe(servers, token);
    const targets = [];
    const skipped = [];
    const wanted = process.env.BENCH_TARGETS?.split(',');
    for (const target of TARGETS) {
      if (wanted && !wanted.includes(target.id)) continue;
      const answer = answers[target.id];
      if (answer.status === 200 && answer.body === EXPECTED_BODY) targets.push(target);
      else skipped.push({ ...target, why: `answers ${answer.status}${answer.status === 200 ? ' with another body' : ''}` });
    }
    const options = (target) => ({
      connections,
      headers: { Origin: BENCH_ORIGIN, ...(target.bearer ? { Authorization: `Bearer ${token}` } : {}) },
    });
    for (const target of targets) {
      log(`warm-up ${target.id}`);
      await runWrk(`${servers[target.server].origin}${target.path}`, { ...options(target), seconds: warmupSeconds });
    }
    const results = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? targets : [...targets].reverse();
      const round = {};
      for (const target of order) {
        const server = servers[target.server];
        round[target.id] = await measure(server, `${server.origin}${target.path}`, { ...options(target), seconds });
        log(`round ${r + 1}/${rounds} ${target.id.padEnd(12)} ${Math.round(round[target.id].rps)} req/s`);
      }
      results.push(round);
    }
    return { targets, skipped, rounds: results, answers };
  } finally {
    await stopAll(servers);
  }
}

/** Per-target medians and per-ratio medians (with the per-round values). */
export function summarize({ targets, rounds }) {
  const perTarget = targets.map((target) => {
    const rows = rounds.map((round) => round[target.id]);
    return {
      ...target,
      rps: median(rows.map((r) => r.rps)),
      p50: median(rows.map((r) => r.p50)),
      p99: median(rows.map((r) => r.p99)),
      cpuPerRequest: median(rows.map((r) => r.cpuPerRequest)),
      bytesPerRequest: median(rows.map((r) => r.bytesPerRequest)),
      errors: rows.reduce((sum, r) => sum + r.non2xx + r.socketErrors, 0),
    };
  });
  const present = new Set(targets.map((t) => t.id));
  const ratios = RATIOS.filter((ratio) => present.has(ratio.a) && present.has(ratio.b)).map((ratio) => {
    const perRound = rounds.map((round) => round[ratio.a].rps / round[ratio.b].rps);
    const cpuPerRound = rounds.map((round) => round[ratio.b].cpuPerRequest / round[ratio.a].cpuPerRequest);
    return { ...ratio, perRound, median: median(perRound), cpuMedian: median(cpuPerRound) };
  });
  const missing = RATIOS.filter((ratio) => !present.has(ratio.a) || !present.has(ratio.b));
  // Each app's own CPU per request: its figure minus the bare app's with the same neighbours, per round.
  const ownCostOf = (target, ours, peer, bare) => {
    if (![ours, peer, bare].every((id) => present.has(id))) return undefined;
    const own = (round, id) => round[id].cpuPerRequest - round[bare].cpuPerRequest;
    const perRound = rounds.map((round) => own(round, ours) / own(round, peer));
    return {
      ...target,
      perRound,
      median: median(perRound),
      ours: median(rounds.map((round) => own(round, ours))),
      peer: median(rounds.map((round) => own(round, peer))),
      own,
    };
  };
  const bareCost = ownCostOf(OWN_COST, 'ours', 'peer', 'express');
  let ownCost;
  if (bareCost) {
    const { own, ...cost } = bareCost;
    ownCost = {
      ...cost,
      control: present.has('control') ? median(rounds.map((round) => own(round, 'control'))) : Number.NaN,
      aboveControl: present.has('control')
        ? median(rounds.map((round) => round.ours.cpuPerRequest - round.control.cpuPerRequest))
        : Number.NaN,
    };
  }
  const typical = ownCostOf(TYPICAL_OWN_COST, 'typical-ours', 'typical-peer', 'typical-express');
  const typicalOwnCost = typical && (({ own: _own, ...cost }) => cost)(typical);
  let cpuVsBare;
  if (present.has('ours') && present.has('express')) {
    const perRound = rounds.map((round) => round.ours.cpuPerRequest / round.express.cpuPerRequest);
    cpuVsBare = { ...CPU_VS_BARE, perRound, median: median(perRound) };
  }
  return { perTarget, ratios, missing, ownCost, typicalOwnCost, cpuVsBare };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const run = await runHttp({
    rounds: Number(process.env.BENCH_ROUNDS ?? 2),
    seconds: Number(process.env.BENCH_SECONDS ?? 2),
    log: (line) => console.log(line),
  });
  const { perTarget, ratios, ownCost, typicalOwnCost, cpuVsBare } = summarize(run);
  for (const t of perTarget) console.log(t.id.padEnd(12), Math.round(t.rps), t.p50, t.p99, t.cpuPerRequest.toFixed(1), t.errors);
  for (const r of ratios) console.log(r.what.padEnd(70), r.median.toFixed(2), r.cpuMedian.toFixed(2), r.target ?? '');
  for (const c of [cpuVsBare, ownCost, typicalOwnCost].filter(Boolean))
    console.log(c.what.padEnd(70), c.median.toFixed(2), c.target);
  for (const s of run.skipped) console.log('skipped', s.id, s.why);
}
