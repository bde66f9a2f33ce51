// Checks the packed packages as consumers get them (CommonJS, ESM, TypeScript node10, node16,
// nodenext and bundler): publint and arethetypeswrong on each tarball (the library's, the checker's
// and the authorization server's), the library's tarball holding none of the checker and none of
// the authorization server, then real consumer setups (CommonJS require, ESM import, TypeScript
// under every module resolution) that install the tarballs into a scratch folder and use every
// subpath, the checker's command from its installed tarball, and the authorization server's
// README example run as written beside the library.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AUTHORIZATION_SERVER, CHECKER, packInto } from './pack.mjs';

const run = (command, args, options = {}) => execFileSync(command, args, { stdio: 'inherit', ...options });
const root = process.cwd();
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const subpaths = Object.keys(pkg.exports).filter((key) => key !== './package.json');
const specifiers = subpaths.map((key) => (key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`));

const scratch = mkdtempSync(join(tmpdir(), 'eac-package-'));
try {
  const tarball = packInto(scratch);
  const checkerTarball = packInto(scratch, CHECKER);
  const serverTarball = packInto(scratch, AUTHORIZATION_SERVER);
  holdsNoChecker(tarball);
  holdsNoAuthorizationServer(tarball);

  for (const packed of [tarball, checkerTarball, serverTarball]) {
    run('npx', ['publint', '--strict', packed]);
    // node10 resolution ignores `exports`: the library's `typesVersions` maps its
    // subpaths' types there, so every resolution must pass for it.
    run('npx', ['attw', packed, ...(packed === tarball ? [] : ['--profile', 'node16'])]);
  }

  const consumer = join(scratch, 'consumer');
  run('mkdir', ['-p', consumer]);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  const typesVersions = ['express@^5', '@types/express@^5', '@types/node@^20', `typescript@${pkg.devDependencies.typescript}`];
  run('npm', ['install', '--no-audit', '--no-fund', '--silent', tarball, checkerTarball, serverTarball, ...typesVersions], {
    cwd: consumer,
  });

  // CommonJS and ESM at run time: every subpath loads and the root exports conventions().
  const cjs = specifiers.map((s) => `require(${JSON.stringify(s)});`).join('');
  run('node', ['-e', `${cjs} if (typeof require('${pkg.name}').conventions !== 'function') process.exit(1);`], { cwd: consumer });
  const esm = specifiers.map((s, i) => `import * as m${i} from ${JSON.stringify(s)};`).join('');
  writeFileSync(join(consumer, 'check.mjs'), `${esm}\nif (typeof m0.conventions !== 'function') process.exit(1);\n`);
  run('node', ['check.mjs'], { cwd: consumer });

  // The bcrypt worker pool from the installed authorization server, as CommonJS and as ESM:
  // the worker (a file beside its module) must find bcryptjs from either build.
  const pool = `hashPassword('pw', { cost: 4 }).then((h) => verifyPassword('pw', h)).then((ok) => { if (!ok) process.exit(1); })`;
  run('node', ['-e', `const { hashPassword, verifyPassword } = require('${AUTHORIZATION_SERVER}'); ${pool};`], { cwd: consumer });
  writeFileSync(
    join(consumer, 'pool.mjs'),
    `import { hashPassword, verifyPassword } from '${AUTHORIZATION_SERVER}';\n${pool};\n`,
  );
  run('node', ['pool.mjs'], { cwd: consumer });
  await runsTheTokenExample(consumer);

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
  typeResolutionFixtures(consumer);
  console.log(`package: ${specifiers.length} entry points checked with publint, attw, CJS, ESM and TypeScript consumers`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
  process.chdir(root);
}

/**
 * The library's tarball carries none of the checker: no file of it,
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

/**
 * The library's tarball carries none of the authorization server: no bcryptjs
 * dependency, no file of the token router, its grants, the sign-in guard or
 * the password hasher, and no module that loads bcryptjs.
 */
function holdsNoAuthorizationServer(packed) {
  const files = execFileSync('tar', ['-tzf', packed], { encoding: 'utf8' }).trim().split('\n');
  const serverFiles = files.filter((file) =>
    /token-router|[/]grants[/]|sign-in-guard|password-(hasher|sign-in|worker|hash-format)|token-endpoint-errors/.test(file),
  );
  if (serverFiles.length > 0)
    throw new Error(`the library's tarball holds the authorization server's files: ${serverFiles.join(', ')}`);
  const unpacked = join(scratch, 'library-unpacked');
  const manifest = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8'));
  if (manifest.dependencies?.bcryptjs !== undefined) throw new Error("the library's package.json still depends on bcryptjs");
  const loading = files
    .filter((file) => file.endsWith('.js'))
    .map((file) => file.replace(/^package\//, ''))
    .filter((file) => /['"]bcryptjs['"]/.test(readFileSync(join(unpacked, file), 'utf8')));
  if (loading.length > 0) throw new Error(`the library's tarball loads bcryptjs in: ${loading.join(', ')}`);
  console.log(`package: the library's tarball holds none of the authorization server and no bcryptjs`);
}

/** A free port of 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * authorization-server/README.md's token example, as written (its one `js`
 * block, an ES module), in the app where both tarballs are installed: it
 * starts, and a password grant gets the token response.
 */
async function runsTheTokenExample(consumer) {
  const readme = readFileSync(join(root, 'authorization-server/README.md'), 'utf8');
  const block = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('authorization-server/README.md has no js block');
  writeFileSync(join(consumer, 'token-example.mjs'), block);
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    TOKEN_SECRET: 'a-secret-of-at-least-32-bytes-for-hs256!',
    NODE_ENV: 'production',
  };
  const app = spawn(process.execPath, ['token-example.mjs'], { cwd: consumer, env, stdio: ['ignore', 'inherit', 'inherit'] });
  try {
    let answer;
    for (let attempt = 0; attempt < 100 && answer === undefined; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await fetch(`http://127.0.0.1:${port}/v1/oauth2/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${btoa('demo-client:demo-secret')}`,
        },
        body: 'grant_type=password&username=alice&password=wonderland-rabbit-hole',
      }).catch(() => undefined);
    }
    if (!answer) throw new Error('the README token example did not answer');
    const body = await answer.json();
    const shape = ['access_token', 'token_type', 'expires_in', 'refresh_token'].every((key) => key in body);
    if (answer.status !== 200 || !shape || body.token_type !== 'bearer') {
      throw new Error(`the README token example answered ${answer.status} ${JSON.stringify(body)}`);
    }
    console.log("package: authorization-server/README.md's token example runs beside the library and grants a token");
  } finally {
    app.kill();
  }
}

/**
 * test/fixtures/type-resolution/: one tsconfig per module resolution (node10, as
 * `"module": "commonjs"` implies, node16, nodenext, bundler) compiling the same
 * subpath imports against the installed tarball (node10 reads `typesVersions`).
 */
function typeResolutionFixtures(consumer) {
  const fixtures = join(root, 'test/fixtures/type-resolution');
  for (const entry of readdirSync(fixtures, { withFileTypes: true }).filter((e) => e.isDirectory())) {
    const dir = join(consumer, `type-resolution-${entry.name}`);
    cpSync(join(fixtures, entry.name), dir, { recursive: true });
    cpSync(join(fixtures, 'index.ts'), join(dir, 'index.ts'));
    console.log(`package: TypeScript subpath imports under moduleResolution ${entry.name}`);
    run(join(consumer, 'node_modules/.bin/tsc'), ['-p', dir]);
  }
}
