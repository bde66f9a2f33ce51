// Docs that run as written. Every TypeScript block of README.md and
// docs/**/*.md is compiled against the packed package, as a user imports it
// (`express-api-conventions` resolved to the tarball installed in a scratch
// project), with `strict` under `module: nodenext` and under
// `moduleResolution: bundler` (the checker's blocks against the packed
// checker, `express-api-conventions-checker`). Then the getting-started app is
// assembled from docs/guides/getting-started.md's own blocks, started, and
// checked with the checker's command, `express-api-conventions-checker check`:
// zero failures.
//
// A block is complete on its own, unless its first line names the file it is
// part of: `// getting-started/app.ts`. The blocks naming one file are joined
// in page order; that file is the complete example.
//
//   npm run build && npm run check:docs
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  checkerBlamesTheRightParty,
  enforcingOnTheApi,
  everywhereWithPagesKeptOut,
  reportOnlyRefusesNothing,
} from './docs-smoke/existing-app-cjs.mjs';
import { AUTHORIZATION_SERVER, CHECKER, packInto } from './pack.mjs';

const root = process.cwd();
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const CODE = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs']);
const PART = /^\/\/ ([\w-]+)\/([\w.-]+\.ts)\b/;
// A CommonJS example: a `js` block whose first line names its `.cjs` file; run as written, not compiled.
const COMMONJS_PART = /^\/\/ ([\w-]+)\/([\w.-]+\.cjs)\b/;

/** The pages a user reads: README.md, the checker's README and every page under docs/. */
export function pages() {
  const walk = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
    );
  return ['README.md', 'checker/README.md', ...walk('docs').sort()];
}

/** Fenced blocks of a page (indented fences too, as in list items): language, code, line. */
export function codeBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    const body = [];
    let j = i + 1;
    while (j < lines.length && !/^ *```\s*$/.test(lines[j])) body.push(lines[j++].slice(indent));
    blocks.push({ lang: open[2], code: `${body.join('\n')}\n`, line: i + 1 });
    i = j;
  }
  return blocks;
}

/** Every code block as the file it belongs to: `{ [relative path]: source }`. */
export function sourceFiles() {
  const files = {};
  for (const page of pages()) {
    for (const block of codeBlocks(readFileSync(page, 'utf8'))) {
      if (block.lang === '')
        throw new Error(`${page}:${block.line}: a block without a language; name it (\`ts\`, \`sh\`, \`text\`, ...)`);
      if (!CODE.has(block.lang)) continue;
      const commonjs = block.lang === 'js' ? COMMONJS_PART.exec(block.code) : null;
      if (commonjs) {
        const name = `${commonjs[1]}/${commonjs[2]}`;
        files[name] = `${files[name] ?? ''}${block.code}`;
        continue;
      }
      if (block.lang !== 'ts' && block.lang !== 'typescript') {
        throw new Error(
          `${page}:${block.line}: a \`${block.lang}\` block; write examples in \`ts\` so they are compiled (or a \`js\` block whose first line names its \`.cjs\` file, which check:docs runs)`,
        );
      }
      const part = PART.exec(block.code);
      const name = part
        ? `${part[1]}/${part[2]}`
        : `snippets/${page.replace(/\.md$/, '').replace(/[/\\]/g, '-')}-${block.line}.ts`;
      files[name] = `${files[name] ?? ''}${part ? '' : `// ${page}:${block.line}\n`}${block.code}`;
    }
  }
  return files;
}

const run = (command, args, options = {}) => execFileSync(command, args, { stdio: 'inherit', ...options });

async function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

/**
 * Builds one app of the docs in a folder of its own (ESM, `nodenext`), starts
 * it on a free 127.0.0.1 port and runs the installed checker's command
 * (`checker`: the path of its bin) on it; fails on any failure. `source(port)` gives the file with the
 * port the app listens on; `express` picks Express 5 (the project's) or 4.
 */
async function serveAndCheck({
  scratch,
  tarball,
  checker,
  name,
  source,
  args,
  tsc,
  env,
  express = 5,
  base = '',
  probe,
  commonjs = false,
  files = {},
}) {
  const dir = join(scratch, name);
  const modules = join(dir, 'node_modules');
  // The package unpacked here, not linked: it must import this folder's `express`.
  mkdirSync(join(modules, pkg.name), { recursive: true });
  run('tar', ['-xzf', tarball, '-C', join(modules, pkg.name), '--strip-components=1']);
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry === pkg.name || entry === CHECKER || entry === '.bin' || entry === 'express4' || entry.startsWith('.')) continue;
    const target = express === 4 && entry === 'express' ? 'express4' : entry;
    symlinkSync(join(root, 'node_modules', target), join(modules, entry));
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: commonjs ? 'commonjs' : 'module' }));
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), content);
  }
  const port = await freePort();
  if (commonjs) {
    // As a CommonJS user runs it: `node app.cjs`, nothing compiled.
    writeFileSync(join(dir, 'app.cjs'), source(port));
  } else {
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src/app.ts'), source(port));
    const config = { target: 'ES2022', lib: ['ES2022'], strict: true, module: 'nodenext', moduleResolution: 'nodenext' };
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { ...config, types: ['node'], outDir: 'dist', rootDir: 'src' }, include: ['src'] }),
    );
    run(tsc, ['-p', dir], { cwd: dir });
  }
  const entry = commonjs ? 'app.cjs' : 'dist/app.js';
  const child = spawn(process.execPath, [entry], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const exited = new Promise((done) => child.once('exit', (code) => done(code)));
    await new Promise((done, fail) => {
      let seen = '';
      const timer = setTimeout(() => fail(new Error(`${name} did not start:\n${seen}`)), 15_000);
      child.stdout.on('data', (chunk) => {
        seen += chunk;
        if (seen.includes(String(port))) {
          clearTimeout(timer);
          done();
        }
      });
      exited.then((code) => fail(new Error(`${name} exited with ${code}:\n${seen}`)));
    });
    const version = JSON.parse(readFileSync(join(modules, 'express/package.json'), 'utf8')).version;
    if (probe) {
      // Instead of the checker: what this run must show, asserted by `probe`.
      await probe(`http://127.0.0.1:${port}`, { checker, dir });
      console.log(`check:docs: ${name} on Express ${version}: ${probe.name}`);
      return;
    }
    const result = spawnSync(process.execPath, [checker, 'check', `http://127.0.0.1:${port}${base}`, ...args, '--quiet'], {
      cwd: dir,
      encoding: 'utf8',
    });
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    if (result.status !== 0) throw new Error(`${CHECKER} check exited ${result.status} on ${name} (Express ${version})`);
    console.log(`check:docs: ${name} on Express ${version} passes the checker (${args.join(' ')})`);
  } finally {
    child.kill();
  }
}

async function main() {
  const builds = ['dist/esm/index.js', 'checker/dist/esm/index.js', 'authorization-server/dist/esm/index.js'];
  if (!builds.every((file) => existsSync(file))) {
    console.error('check:docs: a build (dist/, checker/dist/, authorization-server/dist/) is missing; run `npm run build` first');
    process.exit(2);
  }
  const scratch = mkdtempSync(join(tmpdir(), 'eac-docs-'));
  let server;
  try {
    // The project a user has: the packed package, the packed checker and authorization server in
    // node_modules, beside express, its types and TypeScript (linked from this
    // repository's install).
    const project = join(scratch, 'project');
    const modules = join(project, 'node_modules');
    mkdirSync(modules, { recursive: true });
    const tarball = packInto(scratch);
    const installed = join(modules, pkg.name);
    mkdirSync(installed);
    run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
    const checkerInstalled = join(modules, CHECKER);
    mkdirSync(checkerInstalled);
    run('tar', ['-xzf', packInto(scratch, CHECKER), '-C', checkerInstalled, '--strip-components=1']);
    const checkerManifest = JSON.parse(readFileSync(join(checkerInstalled, 'package.json'), 'utf8'));
    const checker = join(checkerInstalled, checkerManifest.bin[CHECKER]);
    const serverInstalled = join(modules, AUTHORIZATION_SERVER);
    mkdirSync(serverInstalled);
    run('tar', ['-xzf', packInto(scratch, AUTHORIZATION_SERVER), '-C', serverInstalled, '--strip-components=1']);
    for (const entry of readdirSync(join(root, 'node_modules'))) {
      if ([pkg.name, CHECKER, AUTHORIZATION_SERVER, '.bin'].includes(entry) || entry.startsWith('.')) continue;
      symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
    }
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'docs-reader', private: true, type: 'module' }));

    const files = sourceFiles();
    for (const [name, source] of Object.entries(files)) {
      mkdirSync(dirname(join(project, 'src', name)), { recursive: true });
      writeFileSync(join(project, 'src', name), source);
    }
    console.log(`check:docs: ${Object.keys(files).length} files from the code blocks of ${pages().length} pages`);

    const common = {
      target: 'ES2022',
      lib: ['ES2022'],
      strict: true,
      noEmit: true,
      esModuleInterop: true,
      skipLibCheck: false,
      moduleDetection: 'force',
      types: ['node', 'jest'],
    };
    const setups = {
      nodenext: { module: 'nodenext', moduleResolution: 'nodenext' },
      bundler: { module: 'esnext', moduleResolution: 'bundler' },
    };
    const tsc = join(root, 'node_modules/.bin/tsc');
    for (const [name, setup] of Object.entries(setups)) {
      const config = join(project, `tsconfig.${name}.json`);
      // The NestJS guide's blocks need decorators: compiled below with that guide's own tsconfig.json.
      writeFileSync(
        config,
        JSON.stringify({ compilerOptions: { ...common, ...setup }, include: ['src/**/*.ts'], exclude: ['src/nestjs/**'] }),
      );
      console.log(`check:docs: tsc --strict, ${name}`);
      run(tsc, ['-p', config], { cwd: project });
    }

    // The getting-started app, from the guide's blocks only: built, started,
    // then checked by the checker's command.
    // In a folder of its own, with the tsconfig.json the guide shows.
    const guidePage = readFileSync('docs/guides/getting-started.md', 'utf8');
    const guide = join(project, 'guide');
    mkdirSync(guide);
    for (const file of ['app.ts', 'server.ts', 'app.test.ts']) {
      const source = files[`getting-started/${file}`];
      if (source === undefined) throw new Error(`docs/guides/getting-started.md has no block for ${file}`);
      writeFileSync(join(guide, file), source);
    }
    const tsconfig = codeBlocks(guidePage).find((block) => block.lang === 'json' && block.code.includes('"compilerOptions"'));
    if (!tsconfig) throw new Error('docs/guides/getting-started.md shows no tsconfig.json');
    writeFileSync(join(guide, 'tsconfig.json'), tsconfig.code);
    writeFileSync(join(guide, 'package.json'), JSON.stringify({ name: 'getting-started', private: true, type: 'module' }));
    console.log("check:docs: the getting-started app, built with the guide's tsconfig.json");
    run(tsc, ['-p', guide], { cwd: guide });
    const port = await freePort();
    const env = { ...process.env, PORT: String(port), NODE_ENV: 'development', TOKEN_SECRET: randomBytes(32).toString('base64') };
    delete env.REDIS_URL;
    server = spawn(process.execPath, ['dist/server.js'], {
      cwd: guide,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((done) => server.once('exit', (code) => done(code)));
    await new Promise((done, fail) => {
      let seen = '';
      const timer = setTimeout(() => fail(new Error(`the getting-started app did not start:\n${seen}`)), 15_000);
      server.stdout.on('data', (chunk) => {
        seen += chunk;
        if (seen.includes(String(port))) {
          clearTimeout(timer);
          done();
        }
      });
      exited.then((code) => fail(new Error(`the getting-started app exited with ${code}:\n${seen}`)));
    });
    const base = `http://127.0.0.1:${port}`;
    console.log(`check:docs: the getting-started app listens on ${base}; ${CHECKER} check:`);
    const command =
      /^(?:EAC_USERNAME=(\S+) EAC_PASSWORD=(\S+) )?npx express-api-conventions-checker check http:\/\/127\.0\.0\.1:3000 (.*)$/m.exec(
        guidePage,
      );
    if (!command)
      throw new Error(`docs/guides/getting-started.md shows no \`npx ${CHECKER} check http://127.0.0.1:3000 ...\` line`);
    const args = command[3].trim().split(/\s+/);
    const checkEnv = { ...process.env };
    if (command[1]) Object.assign(checkEnv, { EAC_USERNAME: command[1], EAC_PASSWORD: command[2] });
    // The checker's command as installed (its package.json `bin`), as `npx` runs it;
    // its own human report on stderr/stdout, its exit code decides.
    const result = spawnSync(process.execPath, [checker, 'check', base, ...args, '--quiet'], {
      cwd: project,
      env: checkEnv,
      encoding: 'utf8',
    });
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    if (result.status !== 0) {
      throw new Error(`${CHECKER} check exited ${result.status} on the getting-started app`);
    }
    console.log('check:docs: the getting-started app, assembled from the guide, passes the checker');

    // The README's first app, as a user copies it (only its port is this run's),
    // checked with the options the README tells a user to give.
    const readmeApp = files['readme/app.ts'];
    if (readmeApp === undefined) throw new Error('README.md has no `// readme/app.ts` block');
    for (const express of [5, 4]) {
      await serveAndCheck({
        scratch,
        tarball,
        checker,
        express,
        name: `readme-app-express${express}`,
        source: (port) => readmeApp.replaceAll('3000', String(port)),
        args: ['--resource', '/v1/users/1'],
        tsc,
        env,
      });
    }

    // The existing-app guide's app, from its blocks, enforcing (its step 5),
    // on both Express majors: the check command of the guide, no failure.
    const existingApp = files['existing-app/app.ts'];
    if (existingApp === undefined) throw new Error('docs/guides/existing-app.md has no `// existing-app/app.ts` block');
    const existingPage = readFileSync('docs/guides/existing-app.md', 'utf8');
    const existingCommand = /^npx express-api-conventions-checker check http:\/\/127\.0\.0\.1:3000(\S*) (.*)$/m.exec(
      existingPage,
    );
    if (!existingCommand) throw new Error(`docs/guides/existing-app.md shows no \`npx ${CHECKER} check\` line`);
    for (const express of [5, 4]) {
      await serveAndCheck({
        scratch,
        tarball,
        checker,
        express,
        name: `existing-app-express${express}`,
        source: (port) => existingApp.replaceAll('3000', String(port)),
        base: existingCommand[1],
        args: existingCommand[2].trim().split(/\s+/),
        tsc,
        env: { ...env, API_CONVENTIONS: 'enforce' },
      });
      // Its step 2, report-only: CSP and COEP only report, the excepted array still answers.
      await serveAndCheck({
        scratch,
        tarball,
        checker,
        express,
        name: `existing-app-report-only-express${express}`,
        source: (port) => existingApp.replaceAll('3000', String(port)),
        tsc,
        env: { ...env, API_CONVENTIONS: 'report' },
        probe: async function reportsInsteadOfEnforcing(origin) {
          const user = await fetch(`${origin}/api/v1/users/1`);
          const tags = await fetch(`${origin}/api/v1/tags`);
          const page = await fetch(`${origin}/`);
          const seen = {
            user: user.status,
            csp: user.headers.get('content-security-policy'),
            cspReportOnly: user.headers.get('content-security-policy-report-only'),
            coep: user.headers.get('cross-origin-embedder-policy'),
            coepReportOnly: user.headers.get('cross-origin-embedder-policy-report-only'),
            tags: `${tags.status} ${await tags.text()}`,
            pageCsp: page.headers.get('content-security-policy'),
          };
          const want = {
            user: 200,
            csp: null,
            cspReportOnly: "script-src 'self'",
            coep: null,
            coepReportOnly: 'require-corp',
            tags: '200 ["new","sale"]',
            pageCsp: "default-src 'self'; style-src 'self' 'unsafe-inline'",
          };
          if (JSON.stringify(seen) !== JSON.stringify(want)) {
            throw new Error(`report-only: expected ${JSON.stringify(want)}, saw ${JSON.stringify(seen)}`);
          }
        },
      });
    }

    // The README's first app in CommonJS, as its block gives it: run with `node app.cjs`, checked.
    const readmeCommonJs = files['readme-cjs/app.cjs'];
    if (readmeCommonJs === undefined) throw new Error('README.md has no `// readme-cjs/app.cjs` block');
    for (const express of [5, 4]) {
      await serveAndCheck({
        scratch,
        tarball,
        checker,
        express,
        commonjs: true,
        name: `readme-cjs-express${express}`,
        source: (port) => readmeCommonJs.replaceAll('3000', String(port)),
        args: ['--resource', '/v1/users/1'],
        tsc,
        env,
      });
    }

    // The existing-app guide's CommonJS app beside helmet, cors, morgan, express-session and
    // passport: its three stages (report-only on /api, enforcing on /api, app-wide with the
    // pages kept out), each probed; then the checker on the enforcing stage, with the guide's
    // baseline for the legacy route (scripts/docs-smoke/existing-app-cjs.mjs).
    const scenario = files['existing-app-cjs/app.cjs'];
    if (scenario === undefined) throw new Error('docs/guides/existing-app.md has no `// existing-app-cjs/app.cjs` block');
    const baseline = codeBlocks(existingPage).find((block) => block.lang === 'json' && block.code.includes('"accepted"'));
    if (!baseline) throw new Error('docs/guides/existing-app.md shows no baseline file');
    const stages = [
      ['report', reportOnlyRefusesNothing],
      ['enforce', enforcingOnTheApi],
      ['everywhere', everywhereWithPagesKeptOut],
      ['enforce', checkerBlamesTheRightParty(baseline.code)],
    ];
    for (const express of [4, 5]) {
      for (const [index, [stage, probe]] of stages.entries()) {
        await serveAndCheck({
          scratch,
          tarball,
          checker,
          express,
          commonjs: true,
          files: { 'public/site.css': 'body { margin: 0 }\n' },
          name: `existing-app-cjs-${index}-${stage}-express${express}`,
          source: (port) => scenario.replaceAll('3000', String(port)),
          tsc,
          env: { ...env, API_CONVENTIONS: stage },
          probe,
        });
      }
    }

    await checkNestGuide({ scratch, tarball, checker, files, env });

    // The guide's own test file, as its step 6 runs it.
    console.log('check:docs: node --test dist/app.test.js');
    run(process.execPath, ['--test', 'dist/app.test.js'], { cwd: guide, env });

    // The guide's Express 4 file (its "Express 4" section), run on Express 4:
    // a project whose `express` is Express 4, for the app and the package alike.
    const project4 = join(scratch, 'express4');
    const modules4 = join(project4, 'node_modules');
    mkdirSync(join(modules4, pkg.name), { recursive: true });
    run('tar', ['-xzf', tarball, '-C', join(modules4, pkg.name), '--strip-components=1']);
    for (const entry of readdirSync(join(root, 'node_modules'))) {
      if (entry === pkg.name || entry === CHECKER || entry === '.bin' || entry === 'express4' || entry.startsWith('.')) continue;
      symlinkSync(join(root, 'node_modules', entry === 'express' ? 'express4' : entry), join(modules4, entry));
    }
    writeFileSync(join(project4, 'package.json'), JSON.stringify({ name: 'express4-reader', private: true, type: 'module' }));
    const express4App = files['express4/app.ts'];
    if (express4App === undefined) throw new Error('docs/guides/getting-started.md has no `// express4/app.ts` block');
    mkdirSync(join(project4, 'src'));
    writeFileSync(join(project4, 'src/app.ts'), express4App);
    const config4 = {
      ...common,
      noEmit: false,
      outDir: 'dist',
      rootDir: 'src',
      module: 'nodenext',
      moduleResolution: 'nodenext',
    };
    writeFileSync(join(project4, 'tsconfig.json'), JSON.stringify({ compilerOptions: config4, include: ['src/**/*.ts'] }));
    console.log("check:docs: the guide's Express 4 app, on Express 4");
    run(tsc, ['-p', project4], { cwd: project4 });
    const driver = `
      import assert from 'node:assert/strict';
      import { createRequire } from 'node:module';
      import { app } from './dist/app.js';
      const version = createRequire(import.meta.url)('express/package.json').version;
      assert.match(version, /^4\\./, 'express here is Express 4');
      const server = app.listen(0, '127.0.0.1');
      await new Promise((done) => server.once('listening', done));
      const res = await fetch(\`http://127.0.0.1:\${server.address().port}/v1/users/1\`);
      const body = await res.json();
      server.close();
      assert.equal(res.status, 404);
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.deepEqual(body, { errors: [{ message: 'No user 1.', code: 40402 }] });
      console.log(\`check:docs: Express \${version}: GET /v1/users/1 -> 404 \${JSON.stringify(body)}\`);
    `;
    run(process.execPath, ['--input-type=module', '-e', driver], { cwd: project4, env: { ...env, NODE_ENV: 'production' } });
  } finally {
    server?.kill();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * docs/guides/nestjs.md's app: its blocks (`// nestjs/…`) compiled with the
 * guide's tsconfig.json (CommonJS, decorators, as Nest's CLI writes it) against
 * the packed package and NestJS 11, started in development and in production,
 * and checked with the command the guide shows: no failure.
 */
export async function checkNestGuide({ scratch, tarball, checker, files, env }) {
  const page = readFileSync('docs/guides/nestjs.md', 'utf8');
  const tsconfig = codeBlocks(page).find((block) => block.lang === 'json' && block.code.includes('"experimentalDecorators"'));
  if (!tsconfig) throw new Error('docs/guides/nestjs.md shows no tsconfig.json');
  const command = /^npx express-api-conventions-checker check http:\/\/127\.0\.0\.1:3000 (.*)$/m.exec(page);
  if (!command) throw new Error(`docs/guides/nestjs.md shows no \`npx ${CHECKER} check\` line`);
  const sources = Object.entries(files).filter(([name]) => name.startsWith('nestjs/'));
  const main = files['nestjs/main.ts'];
  if (main === undefined) throw new Error('docs/guides/nestjs.md has no `// nestjs/main.ts` block');
  for (const environment of ['development', 'production']) {
    const dir = join(scratch, `nestjs-${environment}`);
    const modules = join(dir, 'node_modules');
    mkdirSync(join(modules, pkg.name), { recursive: true });
    run('tar', ['-xzf', tarball, '-C', join(modules, pkg.name), '--strip-components=1']);
    for (const entry of readdirSync(join(root, 'node_modules'))) {
      if (entry === pkg.name || entry === CHECKER || entry === '.bin' || entry === 'express4' || entry.startsWith('.')) continue;
      symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
    }
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'nestjs-guide', private: true }));
    writeFileSync(join(dir, 'tsconfig.json'), tsconfig.code);
    mkdirSync(join(dir, 'src'));
    const port = await freePort();
    for (const [name, source] of sources) {
      writeFileSync(
        join(dir, 'src', name.slice('nestjs/'.length)),
        name === 'nestjs/main.ts' ? source.replaceAll('3000', String(port)) : source,
      );
    }
    console.log(`check:docs: the NestJS guide's app (${environment}), built with the guide's tsconfig.json`);
    run(join(root, 'node_modules/.bin/tsc'), ['-p', dir], { cwd: dir });
    const child = spawn(process.execPath, ['dist/main.js'], {
      cwd: dir,
      env: { ...env, NODE_ENV: environment },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const exited = new Promise((done) => child.once('exit', (code) => done(code)));
      await new Promise((done, fail) => {
        let seen = '';
        const timer = setTimeout(() => fail(new Error(`the NestJS guide's app did not start:\n${seen}`)), 20_000);
        child.stdout.on('data', (chunk) => {
          seen += chunk;
          if (seen.includes(`127.0.0.1:${port}`)) {
            clearTimeout(timer);
            done();
          }
        });
        exited.then((code) => fail(new Error(`the NestJS guide's app exited with ${code}:\n${seen}`)));
      });
      const args = command[1].trim().split(/\s+/);
      const result = spawnSync(process.execPath, [checker, 'check', `http://127.0.0.1:${port}`, ...args, '--quiet'], {
        cwd: dir,
        encoding: 'utf8',
      });
      process.stdout.write(result.stdout);
      process.stderr.write(result.stderr);
      if (result.status !== 0)
        throw new Error(`${CHECKER} check exited ${result.status} on the NestJS guide's app (${environment})`);
      console.log(`check:docs: the NestJS guide's app (${environment}) passes the checker (${args.join(' ')})`);
    } finally {
      child.kill();
    }
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(root, 'scripts/check-docs.mjs')) {
  main().catch((error) => {
    console.error(`check:docs: ${error.stack ?? error}`);
    process.exit(1);
  });
}
