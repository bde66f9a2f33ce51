// Closed-loop probes for the login storm: a few keep-alive connections, each
// sending its next GET a short pause after the last answer, recording every
// latency; and N concurrent login loops, each posting the next password grant
// as soon as the last one is answered.
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

function request(agent, url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { agent, method, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** GET latencies (ms) from `connections` loops until `until()` is true. */
export async function probeGets(url, { until, connections = 2, pauseMs = 5 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies = [];
  const statuses = new Map();
  const loop = async () => {
    while (!until()) {
      const start = process.hrtime.bigint();
      const { status } = await request(agent, url);
      latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      await sleep(pauseMs);
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  agent.destroy();
  return { latencies, statuses: Object.fromEntries(statuses) };
}

/** `concurrency` loops of password grants until `until()` is true. */
export async function loginLoops(url, form, { until, concurrency = 8 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const body = new URLSearchParams(form).toString();
  const headers = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) };
  const durations = [];
  const statuses = new Map();
  const loop = async () => {
    while (!until()) {
      const start = process.hrtime.bigint();
      const { status } = await request(agent, url, { method: 'POST', headers, body });
      durations.push(Number(process.hrtime.bigint() - start) / 1e6);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  agent.destroy();
  return { durations, statuses: Object.fromEntries(statuses) };
}

/** One password-grant form POST on its own connection, sent from `localAddress` (any 127.0.0.0/8 address on Linux). */
export function postForm(url, form, { localAddress } = {}) {
  const body = new URLSearchParams(form).toString();
  const headers = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) };
  return new Promise((resolve, reject) => {
    const req = http.request(url, { agent: false, method: 'POST', headers, localAddress }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A sign-in flood: `guesses` wrong password grants at once, spread evenly over
 * `addresses` client addresses (127.0.0.2, .3, ...), and meanwhile, one after
 * the other from 127.0.0.254, correct grants of a legitimate user, until the
 * flood is answered (or `deadlineMs` passes). Returns the legitimate grants'
 * latencies (ms) and statuses, and the flood's statuses.
 */
export async function floodWithLegitimate(url, { guessForm, legitForm, guesses = 160, addresses = 8, deadlineMs = 120_000 }) {
  const floodStatuses = new Map();
  const legitStatuses = new Map();
  const latencies = [];
  const count = (into, status) => into.set(status, (into.get(status) ?? 0) + 1);
  let floodDone = false;
  const flood = Promise.all(
    Array.from({ length: guesses }, (_, i) =>
      postForm(url, guessForm(i), { localAddress: `127.0.0.${2 + (i % addresses)}` }).then(
        ({ status }) => count(floodStatuses, status),
        () => count(floodStatuses, 'error'),
      ),
    ),
  ).then(() => {
    floodDone = true;
  });
  // Let the guesses reach the server first: the legitimate user arrives behind them.
  await sleep(100);
  const end = Date.now() + deadlineMs;
  do {
    const start = process.hrtime.bigint();
    const { status } = await postForm(url, legitForm, { localAddress: '127.0.0.254' });
    latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
    count(legitStatuses, status);
  } while (!floodDone && Date.now() < end);
  await flood;
  return { latencies, legitStatuses: Object.fromEntries(legitStatuses), floodStatuses: Object.fromEntries(floodStatuses) };
}

export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
