// The login storm: p99 latency of GETs while 8 password grants run
// concurrently, against the same GETs with no logins. Phases alternate
// (quiet, storm, quiet, storm) per server, so a neighbour's burst of load is
// less likely to land on one phase only. Then the sign-in flood: the latency
// of a legitimate user's grants while 160 wrong-password grants from 8 other
// addresses are answered.
import bcrypt from 'bcryptjs';
import { PUBLIC_PATH, STORM_USER } from './lib/payload.mjs';
import { floodWithLegitimate, loginLoops, percentile, probeGets } from './lib/prober.mjs';
import { startServer } from './lib/servers.mjs';

export const STORM_SERVERS = [
  {
    id: 'peer',
    app: 'storm-peer',
    label: 'peer: bcryptjs async compare on the main thread',
    // It checks only its one user's password: the guesses are at that user, so each costs a compare.
    guessForm: () => ({ grant_type: 'password', username: STORM_USER.username, password: 'a-wrong-guess' }),
  },
  {
    id: 'ours',
    app: 'storm-ours',
    label: 'ours: tokenRouter(), bcrypt in the worker pool',
    // Unknown usernames (each costs a compare against the dummy hash): guesses at the user would lock them out by design.
    guessForm: (i) => ({ grant_type: 'password', username: `nobody-${i}`, password: 'a-wrong-guess' }),
  },
];

/** Sign-in flood: 160 wrong-password grants from 8 addresses, a legitimate user's grants meanwhile. */
export const FLOOD = { guesses: 160, addresses: 8 };

async function phase(server, { storm, seconds }) {
  const end = Date.now() + seconds * 1000;
  const until = () => Date.now() >= end;
  const form = { grant_type: 'password', username: STORM_USER.username, password: STORM_USER.password };
  const [gets, logins] = await Promise.all([
    probeGets(`${server.origin}${PUBLIC_PATH}`, { until }),
    storm ? loginLoops(`${server.origin}/v1/oauth2/token`, form, { until, concurrency: 8 }) : undefined,
  ]);
  return { gets, logins };
}

export async function runStorm({ seconds = 3, servers = STORM_SERVERS, log = () => {} } = {}) {
  const hash = await bcrypt.hash(STORM_USER.password, STORM_USER.cost);
  const results = [];
  for (const spec of servers) {
    let server;
    try {
      server = await startServer(spec.app, { env: { BENCH_PASSWORD_HASH: hash } });
    } catch (error) {
      results.push({ ...spec, skipped: String(error.message).split('\n')[0] });
      continue;
    }
    try {
      const quiet = { latencies: [], statuses: {} };
      const storm = { latencies: [], statuses: {} };
      const logins = { durations: [], statuses: {} };
      const merge = (into, from) => {
        for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
      };
      for (const stormy of [false, true, false, true]) {
        log(`storm: ${spec.id} ${stormy ? 'with 8 logins' : 'quiet'}`);
        const { gets, logins: l } = await phase(server, { storm: stormy, seconds });
        const into = stormy ? storm : quiet;
        into.latencies.push(...gets.latencies);
        merge(into.statuses, gets.statuses);
        if (l) {
          logins.durations.push(...l.durations);
          merge(logins.statuses, l.statuses);
        }
      }
      log(`storm: ${spec.id} sign-in flood of ${FLOOD.guesses} guesses from ${FLOOD.addresses} addresses`);
      const form = { grant_type: 'password', username: STORM_USER.username, password: STORM_USER.password };
      const flood = await floodWithLegitimate(`${server.origin}/v1/oauth2/token`, {
        ...FLOOD,
        guessForm: spec.guessForm,
        legitForm: form,
      });
      const summary = (s) => ({
        count: s.latencies.length,
        p50: percentile(s.latencies, 50),
        p99: percentile(s.latencies, 99),
        max: Math.max(...s.latencies),
        statuses: s.statuses,
      });
      results.push({
        ...spec,
        quiet: summary(quiet),
        storm: summary(storm),
        logins: { count: logins.durations.length, p50: percentile(logins.durations, 50), statuses: logins.statuses },
        flood: {
          count: flood.latencies.length,
          p50: percentile(flood.latencies, 50),
          p99: percentile(flood.latencies, 99),
          max: Math.max(...flood.latencies),
          statuses: flood.legitStatuses,
          guesses: flood.floodStatuses,
        },
      });
    } finally {
      await server.stop();
    }
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await runStorm({ log: console.error }), null, 1));
}
