import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { table, verdict } from '../lib/report.mjs';
import { fixed, thousands } from '../lib/stats.mjs';

const SCRIPT = fileURLToPath(new URL('../memory.mjs', import.meta.url));
const LIMIT_MB = 30;

function measure() {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', SCRIPT], { timeout: 120_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

export async function memorySection({ log }) {
  log('memory: stores with 100,000 keys');
  const result = await measure();
  const rl = result.rateLimit;
  const rows = [
    [
      'rate limit: `MemoryCounterStore` through `rateLimit()`',
      thousands(rl.keys),
      `**${fixed(rl.mbPer100k, 1)} MB**`,
      `${thousands(rl.keysAfterExpiry)} keys, ${fixed(rl.mbLeftAfterExpiry, 1)} MB left`,
      verdict(rl.mbPer100k, LIMIT_MB, false),
    ],
    [
      "peer: express-rate-limit's `MemoryStore`",
      thousands(result.expressRateLimit.keys),
      `${fixed(result.expressRateLimit.mbPer100k, 1)} MB`,
      '',
      '',
    ],
  ];
  if (result.refreshTokens) {
    const rt = result.refreshTokens;
    rows.push([
      'refresh tokens: `MemoryRefreshTokenStore` (100,000 sign-ins)',
      thousands(rt.keys),
      `**${fixed(rt.mbPer100k, 1)} MB**`,
      `${rt.probeFoundAfterExpiry ? 'an expired family is still found' : 'expired families gone'}, ${fixed(rt.mbLeftAfterExpiry, 1)} MB left (1,024 new families included)`,
      'no target',
    ]);
  }
  const markdown = `## Store memory

Heap used (after forced garbage collection, \`node --expose-gc\`) per 100,000 active keys, then
after every window is over and the store swept (the clock is the store's \`now\` option).
The rate-limit keys are made by \`rateLimit()\` itself: anonymous requests from 50,000 client
addresses, each counted by both default policies (\`user\` and \`application\`).

${table(['store', 'keys', 'heap per 100,000 keys', 'after expiry', `verdict (<= ${LIMIT_MB} MB)`], rows)}
`;
  return {
    markdown,
    targets: [
      {
        what: 'heap per 100,000 active rate-limit keys',
        target: `<= ${LIMIT_MB} MB, freed on expiry`,
        measured: `${fixed(rl.mbPer100k, 1)} MB; ${thousands(rl.keysAfterExpiry)} keys and ${fixed(rl.mbLeftAfterExpiry, 1)} MB after expiry`,
        verdict: rl.keysAfterExpiry === 0 && rl.mbLeftAfterExpiry < 1 ? verdict(rl.mbPer100k, LIMIT_MB, false) : '**not freed**',
      },
    ],
  };
}
