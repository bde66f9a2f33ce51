// What a user installs: packs this package, installs the tarball with
// express@5 into a fresh app, and prints the weight of its node_modules
// (bytes of every file, packages, files). Exits 1 above either bound, so CI
// fails when the install grows heavy again ("a light
// install"). The bounds are the peer stack's: express@5 with helmet, cors,
// express-rate-limit, jsonwebtoken and bcryptjs is 88 packages (4.0 MB); this
// package may weigh more in bytes (7 MB), never in packages.
//
//   npm run size:install            # needs `npm run build` first
//   SIZE_LIMIT_BYTES=... SIZE_LIMIT_PACKAGES=... npm run size:install
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packInto } from './pack.mjs';

/** 7 MB, in bytes (10^6, not 2^20: the stricter reading). */
const LIMIT = Number(process.env.SIZE_LIMIT_BYTES ?? 7_000_000);
/** The packages of express@5 plus the peer stack. */
const PACKAGE_LIMIT = Number(process.env.SIZE_LIMIT_PACKAGES ?? 88);

if (!existsSync('dist/esm/index.js')) {
  console.error('size:install: dist/ is missing; run `npm run build` first');
  process.exit(2);
}

/** Sum of the sizes of every file under `dir` (symbolic links not followed), and their count. */
function weigh(dir) {
  let bytes = 0;
  let files = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const inner = weigh(path);
      bytes += inner.bytes;
      files += inner.files;
    } else if (entry.isFile()) {
      bytes += lstatSync(path).size;
      files += 1;
    }
  }
  return { bytes, files };
}

/** Installed packages: every folder holding a package.json directly under node_modules (and @scope/). */
function countPackages(modules) {
  let count = 0;
  for (const entry of readdirSync(modules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const path = join(modules, entry.name);
    if (entry.name.startsWith('@')) count += countPackages(path);
    else {
      if (existsSync(join(path, 'package.json'))) count += 1;
      if (existsSync(join(path, 'node_modules'))) count += countPackages(join(path, 'node_modules'));
    }
  }
  return count;
}

const scratch = mkdtempSync(join(tmpdir(), 'eac-size-'));
try {
  const tarball = packInto(scratch);
  const app = join(scratch, 'app');
  execFileSync('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', 'express@^5', tarball], {
    cwd: app,
    stdio: 'inherit',
  });
  const modules = join(app, 'node_modules');
  const { bytes, files } = weigh(modules);
  const packages = countPackages(modules);
  const heavy = readdirSync(modules)
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) => (name.startsWith('@') ? readdirSync(join(modules, name)).map((inner) => `${name}/${inner}`) : [name]))
    .map((name) => ({ name, bytes: weigh(join(modules, name)).bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 5);
  const mb = (n) => `${(n / 1_000_000).toFixed(1)} MB`;
  console.log(
    `size:install: express@5 + express-api-conventions: ${mb(bytes)} of node_modules, ${packages} packages, ${files} files (limits ${mb(LIMIT)}, ${PACKAGE_LIMIT} packages)`,
  );
  console.log(`size:install: heaviest: ${heavy.map((p) => `${p.name} ${mb(p.bytes)}`).join(', ')}`);
  if (existsSync(join(modules, 'redis'))) {
    console.error('size:install: `redis` was installed, but it is an optional peer dependency');
    process.exitCode = 1;
  }
  // @nestjs/common is an optional peer as well: only a NestJS app has it.
  if (existsSync(join(modules, '@nestjs'))) {
    console.error('size:install: @nestjs/* was installed, but @nestjs/common is an optional peer dependency');
    process.exitCode = 1;
  }
  if (bytes > LIMIT) {
    console.error(`size:install: ${mb(bytes)} is above the ${mb(LIMIT)} bound`);
    process.exitCode = 1;
  }
  if (packages > PACKAGE_LIMIT) {
    console.error(`size:install: ${packages} packages is above the ${PACKAGE_LIMIT} bound`);
    process.exitCode = 1;
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
