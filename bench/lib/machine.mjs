// What the run ran on, written at the top of results.md: on a shared machine
// the ratios are the figures to read, the absolute numbers only context.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { wrkVersion } from './wrk.mjs';

const git = (...args) => {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
};

export function describeMachine() {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    commit: git('rev-parse', '--short', 'HEAD'),
    dirty: git('status', '--porcelain', '--untracked-files=no') !== '',
    cpu: `${cpus[0]?.model ?? 'unknown'} x ${cpus.length}`,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    wrk: wrkVersion(),
    loadAtStart: os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' '),
  };
}

export const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
