// Emits the checker twice with tsc, as the library does: ESM (dist/esm) for the
// bin and `import`, CommonJS (dist/cjs) for `require` (a Jest suite calling
// checkConventions()). No source maps: the package stays light.
//
// The checker judges paths and bodies with the library's own rule tables and
// reads its options with the library's option helpers: it compiles those
// sources (../src/lint/, ../src/config/) and the values the library sends
// (../src/http/spec.ts, ../src/security/defaults.ts) and the OpenAPI `$ref` resolver
// (../src/openapi/document.ts) with its own, so the output mirrors
// the repository (dist/<format>/checker/src/ beside dist/<format>/src/) and the
// package needs nothing of the library at run time. The build fails if any
// other file of the library came in with them.
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The library's sources the checker compiles, and nothing else of it. */
const LIBRARY_SOURCES = [
  'config/configuration-error',
  'config/options',
  'http/spec',
  'lint/body-rules',
  'lint/path-rules',
  'lint/words',
  'openapi/document',
  'security/defaults',
];

const here = fileURLToPath(new URL('..', import.meta.url));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
const tsc = (project) => execFileSync('npx', ['tsc', '-p', project], { cwd: here, stdio: 'inherit' });
tsc('tsconfig.build.json');
tsc('tsconfig.cjs.json');
for (const format of ['esm', 'cjs']) {
  const library = fileURLToPath(new URL(`../dist/${format}/src/`, import.meta.url));
  const compiled = readdirSync(library, { recursive: true })
    .filter((file) => file.endsWith('.js'))
    .map((file) => file.replace(/\.js$/, ''))
    .sort();
  if (compiled.join() !== LIBRARY_SOURCES.join()) {
    throw new Error(
      `checker build: dist/${format}/src/ holds ${compiled.join(', ')}; expected only ${LIBRARY_SOURCES.join(', ')}`,
    );
  }
}
writeFileSync(new URL('../dist/esm/package.json', import.meta.url), '{ "type": "module" }\n');
writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n');
