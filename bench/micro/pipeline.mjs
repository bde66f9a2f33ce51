// In-process pipeline benchmark: each app's whole request path (router,
// middlewares, serializer, headers, ETag) driven by light-my-request, with
// no sockets and no load generator, so the figure is the app's own CPU cost
// and the neighbours' load disturbs it little. Process CPU µs per request,
// median of interleaved batches. `node bench/micro/pipeline.mjs [ids…]`.
import '../lib/production.mjs';
import inject from 'light-my-request';
import { createHandler as controlApp } from '../apps/control.mjs';
import { createHandler as expressApp } from '../apps/express.mjs';
import { createFastify } from '../apps/fastify.mjs';
import { createHandler as nodeApp } from '../apps/node-http.mjs';
import { createHandler as oursApp } from '../apps/ours.mjs';
import { createHandler as peerApp } from '../apps/peer.mjs';
import { bearerTokenForBench, EXPECTED_BODY } from '../http.mjs';
import { BEARER_PATH, BENCH_ORIGIN, PUBLIC_PATH } from '../lib/payload.mjs';
import { median } from '../lib/stats.mjs';

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

export async function pipelineCases() {
  const token = bearerTokenForBench();
  const bearer = { origin: BENCH_ORIGIN, authorization: `Bearer ${token}` };
  const plain = { origin: BENCH_ORIGIN };
  const fastify = await createFastify();
  const handlers = {
    node: await nodeApp(),
    express: await expressApp(),
    peer: await peerApp(),
    control: await controlApp(),
    ours: await oursApp(),
  };
  const viaInject =
    (handler, url, headers = plain) =>
    () =>
      inject(handler, { method: 'GET', url, headers });
  const viaFastify =
    (url, headers = plain) =>
    () =>
      fastify.inject({ method: 'GET', url, headers });
  return {
    node: viaInject(handlers.node, PUBLIC_PATH),
    express: viaInject(handlers.express, PUBLIC_PATH),
    peer: viaInject(handlers.peer, PUBLIC_PATH),
    fastify: viaFastify(PUBLIC_PATH),
    control: viaInject(handlers.control, PUBLIC_PATH),
    ours: viaInject(handlers.ours, PUBLIC_PATH),
    'node+jwt': viaInject(handlers.node, BEARER_PATH, bearer),
    'express+jwt': viaInject(handlers.express, BEARER_PATH, bearer),
    'peer+jwt': viaInject(handlers.peer, BEARER_PATH, bearer),
    'fastify+jwt': viaFastify(BEARER_PATH, bearer),
    'control+jwt': viaInject(handlers.control, BEARER_PATH, bearer),
    'ours+jwt': viaInject(handlers.ours, BEARER_PATH, bearer),
  };
}

/** µs of process CPU per request for each case, median of `batches`. */
export async function runPipeline({ ids, batches = 15, perBatch = 400, warmup = 600 } = {}) {
  const all = await pipelineCases();
  const cases = Object.fromEntries(Object.entries(all).filter(([id]) => !ids || ids.includes(id)));
  const usable = {};
  for (const [id, call] of Object.entries(cases)) {
    const answer = await call();
    if (answer.statusCode === 200 && answer.payload === EXPECTED_BODY) usable[id] = call;
  }
  for (const call of Object.values(usable)) for (let i = 0; i < warmup; i++) await call();
  const samples = Object.fromEntries(Object.keys(usable).map((id) => [id, []]));
  const names = Object.keys(usable);
  for (let b = 0; b < batches; b++) {
    for (const id of b % 2 ? [...names].reverse() : names) {
      const start = cpuMicros();
      for (let i = 0; i < perBatch; i++) await usable[id]();
      samples[id].push((cpuMicros() - start) / perBatch);
    }
  }
  return Object.fromEntries(names.map((id) => [id, { micros: median(samples[id]), samples: samples[id] }]));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const ids = process.argv.slice(2);
  const result = await runPipeline({ ids: ids.length ? ids : undefined });
  const base = result.node?.micros ?? 0;
  for (const [id, { micros }] of Object.entries(result)) {
    console.log(`${id.padEnd(12)} ${micros.toFixed(1).padStart(7)} µs/request  (${(micros - base).toFixed(1)} over node:http)`);
  }
  process.exit(0);
}
