// Emits the package once, as CommonJS (dist/cjs), with tsc; the ESM entry
// points (dist/esm) are thin wrappers that re-export the CommonJS modules, so
// `import` and `require` share one copy of every module (one ApiError class,
// no dual-package hazard) and a user installs one build, not two.
// CommonJS is the one build because Node 20 cannot `require()` ES modules, and
// because a stage's optional dependency (ajv for validate(), the token
// service for the preset) is loaded with a synchronous `require` when it is
// first needed. No source maps: the emitted JavaScript is the source, less
// its types, and comments are kept.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

rmSync('dist', { recursive: true, force: true });
execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
writeFileSync('dist/cjs/package.json', '{ "type": "commonjs" }\n');
mkdirSync('dist/esm', { recursive: true });
writeFileSync('dist/esm/package.json', '{ "type": "module" }\n');

/** The modules an ESM importer reaches: every entry point of package.json's `exports`. */
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const modules = Object.values(pkg.exports)
  .filter((target) => typeof target === 'object')
  .map((target) => target.import.default.replace('./dist/esm/', '').replace(/\.js$/, ''));

const load = createRequire(join(process.cwd(), 'dist/cjs/'));
for (const module of modules) {
  const wrapper = join('dist/esm', `${module}.js`);
  const target = relative(dirname(wrapper), join('dist/cjs', `${module}.js`));
  const names = Object.keys(load(`./${module}.js`)).filter((name) => name !== '__esModule');
  mkdirSync(dirname(wrapper), { recursive: true });
  // Named bindings read off module.exports: no reliance on Node's guess of a CommonJS module's names.
  writeFileSync(wrapper, `import cjs from '${target}';\n\nexport const { ${names.join(', ')} } = cjs;\n`);
  writeFileSync(wrapper.replace(/\.js$/, '.d.ts'), `export * from '${target}';\n`);
}
