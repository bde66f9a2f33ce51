// Micro-benchmark: what counting a request costs, key path and headers
// included. Two Express apps differ only by one middleware: none, ours
// (rateLimit(): both default policies, memory store, RateLimit-Policy and
// RateLimit headers) or express-rate-limit as the peer stack mounts it
// (memory store, draft-8 headers). Each is driven in process by
// light-my-request; the cost of the limiter is its app's CPU µs per request
// minus the bare app's, medians of interleaved batches.
import express from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';
import inject from 'light-my-request';
import { loadLibrary } from '../lib/library.mjs';
import { BENCH_RATE_LIMIT } from '../lib/payload.mjs';
import { median } from '../lib/stats.mjs';

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

const appWith = (...middlewares) => {
  const app = express();
  app.disable('etag');
  app.use(...middlewares);
  app.get('/limited', (_req, res) => res.end('ok'));
  return app;
};

export async function runRateLimit({ batches = 21, perBatch = 300 } = {}) {
  const { rateLimit } = await loadLibrary();
  const apps = {
    bare: appWith((_req, _res, next) => next()),
    ours: appWith(rateLimit({ limit: BENCH_RATE_LIMIT })),
    'express-rate-limit': appWith(
      expressRateLimit({ windowMs: 60_000, limit: BENCH_RATE_LIMIT, standardHeaders: 'draft-8', legacyHeaders: false }),
    ),
  };
  const names = Object.keys(apps);
  const call = (app) => inject(app, { url: '/limited', remoteAddress: '203.0.113.7' });
  const headers = {};
  for (const name of names) {
    headers[name] = (await call(apps[name])).headers;
    for (let i = 0; i < 500; i++) await call(apps[name]);
  }
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  const extra = { ours: [], 'express-rate-limit': [] };
  for (let b = 0; b < batches; b++) {
    const round = {};
    for (const name of b % 2 ? [...names].reverse() : names) {
      const start = cpuMicros();
      for (let i = 0; i < perBatch; i++) await call(apps[name]);
      round[name] = (cpuMicros() - start) / perBatch;
      samples[name].push(round[name]);
    }
    for (const name of Object.keys(extra)) extra[name].push(round[name] - round.bare);
  }
  return {
    bare: median(samples.bare),
    ours: median(extra.ours),
    erl: median(extra['express-rate-limit']),
    // A ratio of the medians: each per-batch difference is small against the
    // bare app's cost, so per-batch ratios of differences would be noisy.
    ratio: median(extra.ours) / median(extra['express-rate-limit']),
    oursHeaders: { 'ratelimit-policy': headers.ours['ratelimit-policy'], ratelimit: headers.ours.ratelimit },
    erlHeaders: {
      'ratelimit-policy': headers['express-rate-limit']['ratelimit-policy'],
      ratelimit: headers['express-rate-limit'].ratelimit,
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await runRateLimit());
  process.exit(0);
}
