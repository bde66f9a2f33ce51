#!/usr/bin/env node
// The package's command: `express-api-conventions check <base-url>`.
// The conformance checker itself is in dist (src/conformance/cli.ts).
import { runCli } from '../dist/esm/conformance/cli.js';

process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
