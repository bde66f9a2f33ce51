import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { ensureBuilt } from './reference-server/harness.js';

/**
 * What an app loads (issue 29, "three products, three boundaries"): an app
 * that `require`s or `import`s the built package and calls `conventions()`
 * with its defaults loads no module of the token service (src/oauth2) or of
 * the checker (src/conformance), and none of jsonwebtoken, bcryptjs, yaml,
 * ajv, structured-headers or NestJS (only the `nestjs` subpath is for it). Each run is a fresh `node` process, a file
 * inside the package, so that `express-api-conventions` resolves through the
 * package's own `exports`, as it does from node_modules.
 */

const ROOT = resolve(__dirname, '..');
const SCRATCH = join(ROOT, '.tmp', `load-${process.pid}`);

/** Prints every file in require.cache; the ESM entry is a thin wrapper over the CommonJS build, so both fill it. */
const REPORT = `process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;

const SCRIPTS = {
  'require (CommonJS)': ['app.cjs', `const { conventions } = require('express-api-conventions');\nconventions();\n${REPORT}\n`],
  'import (ESM)': [
    'app.mjs',
    `import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\nconst { conventions } = await import('express-api-conventions');\nconventions();\n${REPORT}\n`,
  ],
} as const;

const NOT_LOADED = [
  'jsonwebtoken',
  'bcryptjs',
  'yaml',
  'ajv',
  'ajv-formats',
  'structured-headers',
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/platform-express',
  'reflect-metadata',
  'rxjs',
];

/** The package a node_modules path belongs to (`@scope/name` or `name`). */
const packageOf = (file: string): string | undefined => {
  const at = file.lastIndexOf(`${sep}node_modules${sep}`);
  if (at < 0) return undefined;
  const parts = file.slice(at + 14).split(sep);
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
};

beforeAll(async () => {
  await ensureBuilt();
  mkdirSync(SCRATCH, { recursive: true });
  for (const [file, source] of Object.values(SCRIPTS)) writeFileSync(join(SCRATCH, file), source);
}, 180_000);

afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

describe.each(Object.entries(SCRIPTS))('%s and conventions() with its defaults', (_how, [file]) => {
  let loaded: string[] = [];
  beforeAll(async () => {
    const { stdout } = await promisify(execFile)('node', [join(SCRATCH, file)], { cwd: ROOT, timeout: 30_000 });
    loaded = JSON.parse(stdout) as string[];
  }, 40_000);

  const ours = () =>
    loaded.filter((path) => path.startsWith(join(ROOT, 'dist') + sep)).map((path) => path.slice(ROOT.length + 1));

  it('loads the preset from the built package (the list is the real one)', () => {
    expect(ours()).toContain(join('dist', 'cjs', 'preset.js'));
    expect(loaded.map(packageOf)).toContain('helmet');
  });

  it('loads no module of the token service or the checker', () => {
    const services = ours().filter((path) => /[/\\](oauth2|conformance)[/\\]/.test(path));
    expect(services).toEqual([]);
  });

  it('loads no module of the nestjs subpath', () => {
    expect(ours().filter((path) => /[/\\]nestjs[/\\]/.test(path))).toEqual([]);
  });

  it('loads none of jsonwebtoken, bcryptjs, yaml, ajv, ajv-formats, structured-headers or NestJS', () => {
    const packages = new Set(loaded.map(packageOf));
    expect(NOT_LOADED.filter((name) => packages.has(name))).toEqual([]);
  });
});
