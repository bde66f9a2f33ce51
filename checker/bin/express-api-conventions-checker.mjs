#!/usr/bin/env node
// The package's command: `express-api-conventions-checker check <base-url>`.
// The checker itself is in dist (src/cli.ts, built once as CommonJS: scripts/build.mjs).
import { readFileSync } from 'node:fs';
import cli from '../dist/cjs/cli.js';

// The version is the installed package's own, read beside this file only when --version asks for it.
const version = () => JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

process.exitCode = await cli.runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  version,
});
