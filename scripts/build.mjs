// Emits the package twice with tsc: ESM (dist/esm) and CommonJS (dist/cjs).
// A package.json marker in each folder tells Node (and TypeScript's node16
// resolution) which module system the .js and .d.ts files beside it use.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';

rmSync('dist', { recursive: true, force: true });
const tsc = (project) => execFileSync('npx', ['tsc', '-p', project], { stdio: 'inherit' });
tsc('tsconfig.build.json');
tsc('tsconfig.cjs.json');
writeFileSync('dist/esm/package.json', '{ "type": "module" }\n');
writeFileSync('dist/cjs/package.json', '{ "type": "commonjs" }\n');
