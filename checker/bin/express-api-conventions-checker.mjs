#!/usr/bin/env node
// The package's command: `express-api-conventions-checker check <base-url>`.
// The checker itself is in dist (src/cli.ts, laid out beside the library sources it compiles).
import { readFileSync } from 'node:fs';
import { runCli } from '../dist/esm/checker/src/cli.js';

// The version is the installed package's own, read beside this file only when --version asks for it.
const version = () => JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  version,
});
