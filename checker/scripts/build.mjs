// Emits the checker as the authorization server does (../authorization-server/scripts/build.mjs):
// once, as CommonJS (dist/cjs), with tsc; the ESM entry (dist/esm) is a thin
// wrapper that re-exports it, so `import` and `require` share one copy of
// every module. The library is a peer dependency, used through its public
// subpaths and `express-api-conventions/extend` (docs/architecture.md, "One
// way for sibling packages"): the checker compiles against the library's
// built declarations, resolved as a user's install resolves them (`npm run
// build` at the root builds the library first), and compiles none of its
// sources. No source maps: the package stays light.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: here, stdio: 'inherit' });
writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n');
mkdirSync(new URL('../dist/esm', import.meta.url), { recursive: true });
writeFileSync(new URL('../dist/esm/package.json', import.meta.url), '{ "type": "module" }\n');
const names = Object.keys(createRequire(import.meta.url)('../dist/cjs/index.js')).filter((name) => name !== '__esModule');
// Named bindings read off module.exports: no reliance on Node's guess of a CommonJS module's names.
writeFileSync(
  new URL('../dist/esm/index.js', import.meta.url),
  `import cjs from '../cjs/index.js';\n\nexport const { ${names.join(', ')} } = cjs;\n`,
);
writeFileSync(new URL('../dist/esm/index.d.ts', import.meta.url), "export * from '../cjs/index.js';\n");
