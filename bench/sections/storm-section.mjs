import { table, verdict } from '../lib/report.mjs';
import { fixed } from '../lib/stats.mjs';
import { FLOOD, runStorm } from '../storm.mjs';

const RISE_LIMIT_MS = 10;
/** A legitimate grant during the flood: answered within PasswordHasher's default maxWaitMs (5 s). */
const FLOOD_P99_LIMIT_MS = 5000;

export async function stormSection({ log }) {
  const seconds = Number(process.env.BENCH_STORM_SECONDS ?? 3);
  const results = await runStorm({ seconds, log });
  const statuses = (s) =>
    Object.entries(s)
      .map(([k, v]) => `${v}x${k}`)
      .join(' ');
  const rows = results.map((r) =>
    r.skipped
      ? [r.label, 'not measured', '', '', '', '', r.skipped]
      : [
          r.label,
          `${fixed(r.quiet.p50, 1)} / ${fixed(r.quiet.p99, 1)} / ${fixed(r.quiet.max, 0)}`,
          `${fixed(r.storm.p50, 1)} / ${fixed(r.storm.p99, 1)} / ${fixed(r.storm.max, 0)}`,
          `**${fixed(r.storm.p99 - r.quiet.p99, 1)} ms**`,
          `${r.quiet.count} / ${r.storm.count}`,
          `${r.logins.count} (${statuses(r.logins.statuses)}), p50 ${fixed(r.logins.p50, 0)} ms`,
          r.id === 'ours' ? verdict(r.storm.p99 - r.quiet.p99, RISE_LIMIT_MS, false) : '',
        ],
  );
  const floodRows = results.map((r) =>
    r.skipped
      ? [r.label, 'not measured', '', '', r.skipped]
      : [
          r.label,
          `${fixed(r.flood.p50, 0)} / **${fixed(r.flood.p99, 0)}** / ${fixed(r.flood.max, 0)}`,
          `${r.flood.count} (${statuses(r.flood.statuses)})`,
          statuses(r.flood.guesses),
          r.id === 'ours' ? verdict(r.flood.p99, FLOOD_P99_LIMIT_MS, false) : '',
        ],
  );
  const markdown = `## Login storm

GETs of the user from 2 keep-alive connections, each sending its next request 5 ms after the last
answer, for ${seconds} s with no logins and ${seconds} s while 8 password grants run concurrently
(each loop posts the next grant when the last is answered; bcrypt cost 12); phases alternate
quiet, storm, quiet, storm. Latencies in ms, as the client sees them.

${table(['server', 'quiet GET p50 / p99 / max', 'storm GET p50 / p99 / max', 'p99 rise', 'GETs quiet / storm', 'logins answered', `verdict (<= ${RISE_LIMIT_MS} ms)`], rows)}

### Sign-in flood

${FLOOD.guesses} wrong-password grants sent at once from ${FLOOD.addresses} client addresses (127.0.0.2 to
127.0.0.${1 + FLOOD.addresses}, ${FLOOD.guesses / FLOOD.addresses} each, far below each address's allowance), and meanwhile correct grants of
the real user from a ninth address, one after the other, until the flood is answered. Every guess
costs one bcrypt comparison (cost 12). Latencies of the legitimate grants in ms.

${table(['server', 'legitimate grant p50 / p99 / max', 'legitimate grants', 'guesses answered', `verdict (p99 <= ${FLOOD_P99_LIMIT_MS} ms)`], floodRows)}
`;
  const ours = results.find((r) => r.id === 'ours');
  const measured = !ours || ours.skipped ? 'not measured' : `${fixed(ours.storm.p99 - ours.quiet.p99, 1)} ms`;
  return {
    markdown,
    targets: [
      {
        what: 'GET p99 rise while 8 logins run',
        target: `<= ${RISE_LIMIT_MS} ms`,
        measured,
        verdict: !ours || ours.skipped ? 'not measured' : verdict(ours.storm.p99 - ours.quiet.p99, RISE_LIMIT_MS, false),
      },
      {
        what: `legitimate grant p99 during a ${FLOOD.guesses}-grant flood from ${FLOOD.addresses} other addresses`,
        target: `<= ${FLOOD_P99_LIMIT_MS} ms`,
        measured: !ours || ours.skipped ? 'not measured' : `${fixed(ours.flood.p99, 0)} ms`,
        verdict: !ours || ours.skipped ? 'not measured' : verdict(ours.flood.p99, FLOOD_P99_LIMIT_MS, false),
      },
    ],
  };
}
