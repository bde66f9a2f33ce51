// The cost of a subscriber to the security-event channel (docs/observability.md,
// "Cost"): ours' public route (200, no decision to publish), refused requests
// (a token with a bad signature, a malformed one: 401, one `authn_token_invalid`
// event each) and a valid token on the refused ones' route (200), with no
// subscriber, a no-op one, pino writing JSON lines to /dev/null (as the
// reference server does to standard error) and the OpenTelemetry bridge on an SDK meter provider. One process, subscribers
// swapped between interleaved batches; CPU µs per request, medians, and each
// one's median ratio to "no subscriber" and to the passing requests in the
// same batch.
// `node bench/micro/security-events.mjs` (after `npm run build`).
import '../lib/production.mjs';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import inject from 'light-my-request';
import pino from 'pino';
import { createHandler as oursApp } from '../apps/ours.mjs';
import { bearerTokenForBench } from '../http.mjs';
import { loadLibrary } from '../lib/library.mjs';
import { BEARER_PATH, BENCH_ORIGIN, PUBLIC_PATH } from '../lib/payload.mjs';
import { median } from '../lib/stats.mjs';

const library = await loadLibrary();
const { SECURITY_EVENTS_CHANNEL } = library;
const { recordSecurityMetrics } = await import(new URL('../../dist/esm/otel/index.js', import.meta.url).href);
const app = await oursApp({}, library);
const badToken = `${bearerTokenForBench().slice(0, -4)}AAAA`;

const requests = {
  public: () => inject(app, { url: PUBLIC_PATH, headers: { origin: BENCH_ORIGIN } }),
  refused: () => inject(app, { url: BEARER_PATH, headers: { origin: BENCH_ORIGIN, authorization: `Bearer ${badToken}` } }),
  malformed: () => inject(app, { url: BEARER_PATH, headers: { origin: BENCH_ORIGIN, authorization: 'Bearer not-a-token' } }),
  // The passing request of the refused ones' route: a valid token, 200.
  bearer: () =>
    inject(app, { url: BEARER_PATH, headers: { origin: BENCH_ORIGIN, authorization: `Bearer ${bearerTokenForBench()}` } }),
};
const expected = { public: 200, refused: 401, malformed: 401, bearer: 200 };

const logger = pino(
  {
    level: 'INFO',
    customLevels: { INFO: 30, WARN: 40, CRITICAL: 50 },
    base: null,
    timestamp: false,
    formatters: { level: (label) => ({ level: label }) },
  },
  pino.destination({ dest: '/dev/null', sync: true }),
);
class Uncollected extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}
const meterProvider = new MeterProvider({ readers: [new Uncollected()] });

/** Each mode: what subscribes (and returns the function that unsubscribes). */
const listen = (fn) => () => {
  subscribe(SECURITY_EVENTS_CHANNEL, fn);
  return () => unsubscribe(SECURITY_EVENTS_CHANNEL, fn);
};
const modes = {
  'no subscriber': () => () => {},
  'no-op subscriber': listen(() => {}),
  'pino, JSON lines to /dev/null': listen(({ level, ...event }) => logger[level](event)),
  'OpenTelemetry bridge (sdk-metrics)': () => recordSecurityMetrics({ meterProvider }),
};

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
const batches = Number(process.env.BENCH_BATCHES ?? 15);
const perBatch = Number(process.env.BENCH_PER_BATCH ?? 400);
const samples = {};
for (const [route, call] of Object.entries(requests)) {
  const answer = await call();
  if (answer.statusCode !== expected[route]) throw new Error(`${route}: answered ${answer.statusCode}`);
  for (const mode of Object.keys(modes)) samples[`${route}|${mode}`] = [];
}
const names = Object.keys(modes);
for (let b = -2; b < batches; b++) {
  for (const mode of b % 2 ? [...names].reverse() : names) {
    const stop = modes[mode]();
    for (const [route, call] of Object.entries(requests)) {
      const start = cpuMicros();
      for (let i = 0; i < perBatch; i++) await call();
      // The first two batches warm up.
      if (b >= 0) samples[`${route}|${mode}`].push((cpuMicros() - start) / perBatch);
    }
    stop();
  }
}
const rows = [];
for (const route of Object.keys(requests)) {
  const base = samples[`${route}|no subscriber`];
  for (const mode of names) {
    const own = samples[`${route}|${mode}`];
    const ratio = median(own.map((v, i) => v / base[i]));
    // Against the passing requests, same subscriber, same batch: the public route, and the bearer route with a valid token.
    const vs = (other) => median(own.map((v, i) => v / samples[`${other}|${mode}`][i])).toFixed(2);
    rows.push(`| ${route} | ${mode} | ${median(own).toFixed(1)} | ${ratio.toFixed(3)}x | ${vs('public')}x | ${vs('bearer')}x |`);
  }
}
console.log(
  '| request | subscriber | CPU µs/request (median) | vs no subscriber | vs the public route (200) | vs a valid bearer token (200) |',
);
console.log('| --- | --- | --- | --- | --- | --- |');
console.log(rows.join('\n'));
