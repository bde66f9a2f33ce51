// Emits the checker twice with tsc, as the library does: ESM (dist/esm) for the
// bin and `import`, CommonJS (dist/cjs) for `require` (a Jest suite calling
// checkConventions()). No source maps: the package stays light.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
const tsc = (project) => execFileSync('npx', ['tsc', '-p', project], { cwd: here, stdio: 'inherit' });
tsc('tsconfig.build.json');
tsc('tsconfig.cjs.json');
writeFileSync(new URL('../dist/esm/package.json', import.meta.url), '{ "type": "module" }\n');
writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n');
