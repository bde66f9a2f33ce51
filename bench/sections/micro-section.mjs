import { table, verdict } from '../lib/report.mjs';
import { fixed } from '../lib/stats.mjs';
import { runBearer } from '../micro/bearer.mjs';
import { runEtag } from '../micro/etag.mjs';
import { runRateLimit } from '../micro/rate-limit.mjs';
import { runSerializer } from '../micro/serializer.mjs';

export async function microSection({ log }) {
  log('micro: serializer');
  const rows = runSerializer();
  const markdown = `## Micro-benchmarks

Process CPU time per call, median of 31 interleaved batches of ~10 ms; ratios are medians of the
per-batch ratios to the baseline measured in the same batch.

### JSON serializer: \`stringifyJson()\` vs plain \`JSON.stringify\`

The baseline is given the same data with ids as plain numbers (same length of text). The bigint
cases use ids above 2^53, the case that needs the exact-integer path.

${table(
  ['data', 'bytes', 'stringifyJson ns', 'JSON.stringify ns', 'ratio', 'target', 'verdict'],
  rows.map((r) => [
    r.name,
    String(r.bytes),
    fixed(r.oursNs, 0),
    fixed(r.plainNs, 0),
    `**${fixed(r.ratio)}x**`,
    `<= ${r.target}x`,
    verdict(r.ratio, r.target, false),
  ]),
)}
`;
  log('micro: ETag');
  const etags = await runEtag();
  const cell = (r) => (r ? `${fixed(r.ns / 1000, 2)} µs (${fixed(r.ratio)}x)` : 'not in this build');
  const etagMarkdown = `### ETag of a JSON body

Express's default (\`etag\` setting \`weak\`: the string body becomes a Buffer, then the \`etag\` package
runs \`createHash('sha1')\`), ours (\`bodyEntityTag()\`), and a bare one-shot \`crypto.hash('sha1')\`.
Time per body, and ratio to Express's.

${table(
  ['body', "Express's default", 'ours', 'crypto.hash'],
  etags.map((e) => [e.name, cell(e.express), cell(e.ours), cell(e.hash)]),
)}
`;
  log('micro: bearer verification');
  const bearer = await runBearer();
  const bearerMarkdown = `### Bearer verification: one HS256 access token

Algorithm, issuer, audience and expiry checked alike. Ratio: time per verification against
jsonwebtoken with the secret as a string (the usual way).

${table(
  ['verifier', 'verifications/s', 'time ratio'],
  bearer.map((b) => [b.name, Math.round(b.opsPerSecond).toLocaleString('en-US'), `${fixed(b.ratio, 3)}x`]),
)}
`;
  log('micro: rate-limit key and header path');
  const rl = await runRateLimit();
  const rlMarkdown = `### Rate limit: key, count and headers of one request

CPU µs per request that one limiter adds to a bare Express app (light-my-request, in process;
the app's µs/request minus the bare app's, median of 21 interleaved batches). Ours counts two
policies (\`user\` and \`application\`) and writes both in one \`RateLimit-Policy\` and one
\`RateLimit\` header; express-rate-limit as the peer mounts it counts one.

${table(
  ['limiter', 'µs per request', 'headers written'],
  [
    [
      'ours: `rateLimit()`',
      fixed(rl.ours, 1),
      `\`RateLimit-Policy: ${rl.oursHeaders['ratelimit-policy']}\`<br>\`RateLimit: ${rl.oursHeaders.ratelimit}\``,
    ],
    [
      'express-rate-limit (draft-8 headers)',
      fixed(rl.erl, 1),
      `\`RateLimit-Policy: ${rl.erlHeaders['ratelimit-policy']}\`<br>\`RateLimit: ${rl.erlHeaders.ratelimit}\``,
    ],
  ],
)}

Ours costs **${fixed(rl.ratio)}x** what express-rate-limit costs (ratio of the medians; bare app: ${fixed(rl.bare, 1)} µs/request).
`;
  const targets = rows.map((r) => ({
    what: `serializer: ${r.name}`,
    target: `<= ${r.target}x JSON.stringify`,
    measured: `${fixed(r.ratio)}x`,
    verdict: verdict(r.ratio, r.target, false),
  }));
  // The revoked-families check keeps the bearer check within 5 % of what it costs without it.
  const seen = bearer.find((b) => b.name === 'ours: same token, no revokedFamilies');
  const revoked = bearer.find((b) => b.name === 'ours: with revokedFamilies, seen before');
  if (seen && revoked) {
    const ratio = revoked.ratio / seen.ratio;
    targets.push({
      what: 'bearer check with revokedFamilies, a token seen before',
      target: '<= 1.05x the time without it',
      measured: `${fixed(ratio)}x`,
      verdict: verdict(ratio, 1.05, false),
    });
  }
  return { markdown: [markdown, etagMarkdown, bearerMarkdown, rlMarkdown].join('\n'), targets };
}
