// Cold load time: how long a fresh `node` takes to
// `require` express plus this package, against express plus the peer stack
// it replaces (helmet, cors, express-rate-limit, jsonwebtoken, bcryptjs).
// The packed tarball and the peer stack are installed with express@5 into one
// scratch app; each sample is a new `node` process that times its own
// `require` calls (process start-up excluded). Samples are paired and
// interleaved (ours then peer, peer then ours, ...) so that a slower moment
// of the machine weighs on both; the figure is the median of the per-pair
// ratios. A second pair of columns adds building the middlewares with their
// defaults (`conventions()`; `helmet()`, `cors()`, `rateLimit()`), and a third
// loads through ESM `import`. No assertion: the target (at most 1.5 times the
// peer stack) is read off the output, and docs/performance.md records it.
//
//   npm run build && node bench/cold-require.mjs [rounds]     # default 30 rounds
//   BENCH_TARBALL=/tmp/old.tgz node bench/cold-require.mjs    # another build, packed
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packInto } from '../scripts/pack.mjs';

const ROUNDS = Number(process.argv[2] ?? 30);
const PEERS = ['helmet', 'cors', 'express-rate-limit', 'jsonwebtoken', 'bcryptjs'];

/** What each child loads, timed from inside: `require` (or `import`) only, then with the middlewares built. */
const SUBJECTS = {
  ours: {
    load: `require('express'); const eac = require('express-api-conventions');`,
    build: `eac.conventions();`,
    esm: `await import('express'); const eac = await import('express-api-conventions');`,
  },
  peer: {
    load: `require('express'); const h = require('helmet'); const c = require('cors'); const r = require('express-rate-limit'); require('jsonwebtoken'); require('bcryptjs');`,
    build: `(h.default ?? h)(); c(); r.rateLimit();`,
    esm: `await import('express'); await import('helmet'); await import('cors'); await import('express-rate-limit'); await import('jsonwebtoken'); await import('bcryptjs');`,
  },
};

function script({ load, build, esm }, mode) {
  const now = 'Number(process.hrtime.bigint()) / 1e6';
  if (mode === 'esm') return `const t0 = ${now}; ${esm} process.stdout.write(String(${now} - t0));`;
  return `const t0 = ${now}; ${load} ${mode === 'build' ? build : ''} process.stdout.write(String(${now} - t0));`;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const scratch = mkdtempSync(join(tmpdir(), 'eac-cold-'));
try {
  const tarball = process.env.BENCH_TARBALL ?? packInto(scratch);
  const app = join(scratch, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'cold-require', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', 'express@^5', tarball, ...PEERS], {
    cwd: app,
    stdio: 'inherit',
  });
  for (const [name, subject] of Object.entries(SUBJECTS)) {
    writeFileSync(join(app, `${name}-require.cjs`), script(subject, 'require'));
    writeFileSync(join(app, `${name}-build.cjs`), script(subject, 'build'));
    writeFileSync(join(app, `${name}-import.mjs`), script(subject, 'esm'));
  }
  const sample = (file) => Number(execFileSync(process.execPath, [file], { cwd: app, encoding: 'utf8' }));

  const results = {};
  for (const [mode, extension] of [
    ['require', 'cjs'],
    ['build', 'cjs'],
    ['import', 'mjs'],
  ]) {
    const ours = [];
    const peer = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Interleaved: the order flips every round.
      const first = round % 2 === 0 ? 'ours' : 'peer';
      const times = {};
      for (const who of first === 'ours' ? ['ours', 'peer'] : ['peer', 'ours'])
        times[who] = sample(`${who}-${mode}.${extension}`);
      ours.push(times.ours);
      peer.push(times.peer);
    }
    results[mode] = {
      oursMs: median(ours),
      peerMs: median(peer),
      ratio: median(ours.map((value, i) => value / peer[i])),
    };
  }
  const line = (mode, what) => {
    const { oursMs, peerMs, ratio } = results[mode];
    return `${what.padEnd(44)} ours ${oursMs.toFixed(1).padStart(6)} ms   peer ${peerMs.toFixed(1).padStart(6)} ms   ratio ${ratio.toFixed(2)}`;
  };
  console.log(`cold load, ${ROUNDS} paired rounds, median (node ${process.version}):`);
  console.log(line('require', 'require express + the package (target <= 1.5)'));
  console.log(line('build', 'same, middlewares built with defaults'));
  console.log(line('import', 'ESM import express + the package'));
  console.log(JSON.stringify(results));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
