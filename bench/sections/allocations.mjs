// Bytes allocated per request, for the bench report: runs
// bench/micro/allocations.mjs in a child process with the flags it needs
// (`--expose-gc`, a new space large enough that no collection runs within a
// batch) and reads its JSON.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { table } from '../lib/report.mjs';
import { thousands } from '../lib/stats.mjs';

const SCRIPT = fileURLToPath(new URL('../micro/allocations.mjs', import.meta.url));

export function measureAllocations() {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', '--max-semi-space-size=64', SCRIPT, '--json'],
      { env: process.env, timeout: 180_000, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
    );
  });
}

const kb = (bytes) => (Number.isFinite(bytes) ? `${thousands(bytes)} B` : 'not measured');

export function allocationMarkdown(result) {
  const base = result.express;
  const apps = ['node', 'express', 'peer', 'control', 'ours'].filter((id) => id in result);
  const none = result['ours, every module off'];
  const modules = Object.keys(result).filter((id) => id.startsWith('ours, only '));
  return `### Bytes allocated per request

In process (light-my-request, so its own request and response objects are in every figure
alike): the growth of the heap over batches of 200 requests between forced collections, with a
64 MB new space so that no collection runs inside a batch (a batch with one is run again); median
of 7 batches (\`node --expose-gc --max-semi-space-size=64 bench/micro/allocations.mjs\`).
Every header goes through \`setHeader()\` here, as it does over HTTP for ours and the control; the
figures over HTTP, on real sockets, are in the first table of this section.

${table(
  ['app', 'bytes per request', 'over bare Express'],
  apps.map((id) => [`\`${id}\``, kb(result[id]), id === 'express' ? '' : kb(result[id] - base)]),
)}

Ours one module at a time (every other module off), over ours with every module off (Express's
own \`res.json()\`, ${kb(none)}):

${table(
  ['module', 'bytes per request', 'over every module off'],
  modules.map((id) => [`\`${id.slice('ours, only '.length)}\``, kb(result[id]), kb(result[id] - none)]),
)}
`;
}
