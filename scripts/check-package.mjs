// Checks the packed packages as consumers get them (STYLE.md rule 14):
// publint and arethetypeswrong on each tarball (the library's and the
// checker's), the library's tarball holding none of the checker, then real
// consumer setups (CommonJS require, ESM import, TypeScript node16 and bundler
// resolution) that install both tarballs into a scratch folder and use every
// subpath, and the checker's command from its installed tarball.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHECKER, packInto } from './pack.mjs';

const run = (command, args, options = {}) => execFileSync(command, args, { stdio: 'inherit', ...options });
const root = process.cwd();
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const subpaths = Object.keys(pkg.exports).filter((key) => key !== './package.json');
const specifiers = subpaths.map((key) => (key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`));

const scratch = mkdtempSync(join(tmpdir(), 'eac-package-'));
try {
  const tarball = packInto(scratch);
  const checkerTarball = packInto(scratch, CHECKER);
  holdsNoChecker(tarball);

  for (const packed of [tarball, checkerTarball]) run('npx', ['publint', '--strict', packed]);
  // node10 resolution ignores `exports`; the library's `typesVersions` gives
  // its subpaths' types there (NestJS's CLI still writes `"module": "commonjs"`),
  // so its tarball passes every resolution. The checker is imported by its root only.
  run('npx', ['attw', tarball]);
  run('npx', ['attw', checkerTarball, '--profile', 'node16']);

  const consumer = join(scratch, 'consumer');
  run('mkdir', ['-p', consumer]);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  const typesVersions = ['express@^5', '@types/express@^5', '@types/node@^20', `typescript@${pkg.devDependencies.typescript}`];
  run('npm', ['install', '--no-audit', '--no-fund', '--silent', tarball, checkerTarball, ...typesVersions], { cwd: consumer });

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

  // The checker from its installed tarball: its command (package.json `bin`), as
  // `npx express-api-conventions-checker` finds it, and checkConventions() through require and import.
  const usage = execFileSync(join(consumer, `node_modules/.bin/${CHECKER}`), ['--help'], { encoding: 'utf8' });
  if (!usage.startsWith(`Usage: ${CHECKER} check <base-url>`)) {
    throw new Error(`the packed checker's bin printed an unexpected --help:\n${usage}`);
  }
  const version = execFileSync(join(consumer, `node_modules/.bin/${CHECKER}`), ['--version'], { encoding: 'utf8' }).trim();
  const checkerPkg = JSON.parse(readFileSync('checker/package.json', 'utf8'));
  if (version !== checkerPkg.version) throw new Error(`the packed checker's --version printed ${version}`);
  run('node', ['-e', `if (typeof require('${CHECKER}').checkConventions !== 'function') process.exit(1);`], { cwd: consumer });
  writeFileSync(
    join(consumer, 'checker.mjs'),
    `import { checkConventions } from '${CHECKER}';\nif (typeof checkConventions !== 'function') process.exit(1);\n`,
  );
  run('node', ['checker.mjs'], { cwd: consumer });
  console.log(`package: ${CHECKER} --help and --version run from the installed tarball; it loads through require and import`);

  // TypeScript consumers: types resolve for every subpath under each resolution.
  const source = `${specifiers.map((s, i) => `import * as m${i} from ${JSON.stringify(s)};`).join('\n')}
import { checkConventions, type ConformanceReport } from '${CHECKER}';
import express from 'express';
const app = express();
app.use(m0.conventions());
app.use(m0.notFound(), m0.errorHandler());
export const report: Promise<ConformanceReport> = checkConventions(app, { resource: '/v1/users/1' });
export const used = [${specifiers.map((_, i) => `m${i}`).join(', ')}];
`;
  const setups = {
    // A NestJS project as its CLI writes it: `"module": "commonjs"`, which resolves as node10.
    'cjs-node10': { module: 'commonjs', moduleResolution: 'node10', type: 'commonjs' },
    'cjs-node16': { module: 'node16', moduleResolution: 'node16', type: 'commonjs' },
    'cjs-nodenext': { module: 'nodenext', moduleResolution: 'nodenext', type: 'commonjs' },
    'esm-nodenext': { module: 'nodenext', moduleResolution: 'nodenext', type: 'module' },
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
        // TypeScript 6 deprecates node10 resolution; projects on it say so.
        ...(setup.moduleResolution === 'node10' ? { ignoreDeprecations: '6.0' } : {}),
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

/**
 * The library's tarball carries none of the checker (issue 29): no file of it,
 * no command, no entry point, and no module that loads the checker's dependencies.
 */
function holdsNoChecker(packed) {
  const unpacked = join(scratch, 'library-unpacked');
  run('mkdir', ['-p', unpacked]);
  run('tar', ['-xzf', packed, '-C', unpacked, '--strip-components=1']);
  const files = execFileSync('tar', ['-tzf', packed], { encoding: 'utf8' }).trim().split('\n');
  const checkerFiles = files.filter((file) => /conformance|checker|^package\/bin\//.test(file) && !file.endsWith('.md'));
  if (checkerFiles.length > 0) throw new Error(`the library's tarball holds the checker's files: ${checkerFiles.join(', ')}`);
  const manifest = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8'));
  const leaked = [
    manifest.bin !== undefined && 'bin',
    manifest.exports['./conformance'] !== undefined && 'exports["./conformance"]',
    ...['yaml', 'structured-headers'].map((name) => manifest.dependencies?.[name] !== undefined && `dependencies.${name}`),
  ].filter(Boolean);
  if (leaked.length > 0) throw new Error(`the library's package.json still names the checker's: ${leaked.join(', ')}`);
  const loading = files
    .filter((file) => file.endsWith('.js'))
    .map((file) => file.replace(/^package\//, ''))
    .filter((file) => /['"](yaml|structured-headers)['"]/.test(readFileSync(join(unpacked, file), 'utf8')));
  if (loading.length > 0) throw new Error(`the library's tarball loads the checker's dependencies in: ${loading.join(', ')}`);
  console.log(`package: the library's tarball (${files.length} files) holds none of the checker`);
}
