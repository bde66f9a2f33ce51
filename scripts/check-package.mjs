// Checks the packed package as consumers get it (STYLE.md rule 14):
// publint and arethetypeswrong on the tarball, then real consumer setups
// (CommonJS require, ESM import, TypeScript node16 and bundler resolution)
// that install the tarball into a scratch folder and use every subpath.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packInto } from './pack.mjs';

const run = (command, args, options = {}) => execFileSync(command, args, { stdio: 'inherit', ...options });
const root = process.cwd();
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const subpaths = Object.keys(pkg.exports).filter((key) => key !== './package.json');
const specifiers = subpaths.map((key) => (key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`));

const scratch = mkdtempSync(join(tmpdir(), 'eac-package-'));
try {
  const tarball = packInto(scratch);

  run('npx', ['publint', '--strict', tarball]);
  // node10 resolution ignores `exports`, so subpaths cannot work there; every
  // resolution that reads `exports` (node16 CJS and ESM, bundler) must.
  run('npx', ['attw', tarball, '--profile', 'node16']);

  const consumer = join(scratch, 'consumer');
  run('mkdir', ['-p', consumer]);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  const typesVersions = ['express@^5', '@types/express@^5', '@types/node@^20', `typescript@${pkg.devDependencies.typescript}`];
  run('npm', ['install', '--no-audit', '--no-fund', '--silent', tarball, ...typesVersions], { cwd: consumer });

  // CommonJS and ESM at run time: every subpath loads and the root exports conventions().
  const cjs = specifiers.map((s) => `require(${JSON.stringify(s)});`).join('');
  run('node', ['-e', `${cjs} if (typeof require('${pkg.name}').conventions !== 'function') process.exit(1);`], { cwd: consumer });
  const esm = specifiers.map((s, i) => `import * as m${i} from ${JSON.stringify(s)};`).join('');
  writeFileSync(join(consumer, 'check.mjs'), `${esm}\nif (typeof m0.conventions !== 'function') process.exit(1);\n`);
  run('node', ['check.mjs'], { cwd: consumer });

  // The bcrypt worker pool from the installed package, as CommonJS and as ESM:
  // the worker must find bcryptjs from either build.
  const pool = `hashPassword('pw', { cost: 4 }).then((h) => verifyPassword('pw', h)).then((ok) => { if (!ok) process.exit(1); })`;
  run('node', ['-e', `const { hashPassword, verifyPassword } = require('${pkg.name}/oauth2'); ${pool};`], { cwd: consumer });
  writeFileSync(join(consumer, 'pool.mjs'), `import { hashPassword, verifyPassword } from '${pkg.name}/oauth2';\n${pool};\n`);
  run('node', ['pool.mjs'], { cwd: consumer });

  // The command from the installed tarball (package.json `bin`), as `npx express-api-conventions` finds it.
  const usage = execFileSync(join(consumer, 'node_modules/.bin/express-api-conventions'), ['--help'], { encoding: 'utf8' });
  if (!usage.startsWith('Usage: express-api-conventions check <base-url>')) {
    throw new Error(`the packed bin printed an unexpected --help:\n${usage}`);
  }
  console.log('package: bin express-api-conventions --help runs from the installed tarball');

  // TypeScript consumers: types resolve for every subpath under each resolution.
  const source = `${specifiers.map((s, i) => `import * as m${i} from ${JSON.stringify(s)};`).join('\n')}
import express from 'express';
const app = express();
app.use(m0.conventions());
app.use(m0.notFound(), m0.errorHandler());
export const used = [${specifiers.map((_, i) => `m${i}`).join(', ')}];
`;
  const setups = {
    'cjs-node16': { module: 'node16', moduleResolution: 'node16', type: 'commonjs' },
    'esm-node16': { module: 'node16', moduleResolution: 'node16', type: 'module' },
    bundler: { module: 'esnext', moduleResolution: 'bundler', type: 'module' },
  };
  for (const [name, setup] of Object.entries(setups)) {
    const dir = join(consumer, name);
    run('mkdir', ['-p', dir]);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: setup.type }));
    writeFileSync(join(dir, 'index.ts'), source);
    const tsconfig = {
      compilerOptions: {
        module: setup.module,
        moduleResolution: setup.moduleResolution,
        strict: true,
        noEmit: true,
        esModuleInterop: true,
        skipLibCheck: false,
        types: ['node'],
      },
      files: ['index.ts'],
    };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    console.log(`package: TypeScript consumer ${name}`);
    run(join(consumer, 'node_modules/.bin/tsc'), ['-p', dir]);
  }
  console.log(`package: ${specifiers.length} entry points checked with publint, attw, CJS, ESM and TypeScript consumers`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
  process.chdir(root);
}
