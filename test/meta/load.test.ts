import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { ensureBuilt } from '../reference-server/harness.js';

/**
 * What an app loads: an app
 * that `require`s or `import`s the built package and calls `conventions()`
 * with its defaults loads no module of the token service (src/oauth2) or of
 * the checker (src/conformance), and none of jsonwebtoken, bcryptjs, yaml,
 * ajv, structured-headers or NestJS (only the `nestjs` subpath is for it), nor
 * OpenTelemetry (only the `otel` subpath is for it). Each run is a fresh `node` process, a file
 * inside the package, so that `express-api-conventions` resolves through the
 * package's own `exports`, as it does from node_modules.
 */

const ROOT = resolve(__dirname, '..', '..');
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
  '@opentelemetry/api',
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

  it('loads no module of token verification, the authorization server or the checker', () => {
    // The one oauth2 module is the token router's contract (a brand check the preset reads, src/oauth2/token-service.ts).
    const services = ours().filter((path) => /[/\\](oauth2|conformance)[/\\]/.test(path));
    expect(services).toEqual([join('dist', 'cjs', 'oauth2', 'token-service.js')]);
    expect(
      loaded.filter((path) =>
        /express-api-conventions-(authorization-server|checker)|[/\\](authorization-server|checker)[/\\]/.test(path),
      ),
    ).toEqual([]);
  });

  it('loads no module of the nestjs or otel subpaths', () => {
    expect(ours().filter((path) => /[/\\](nestjs|otel)[/\\]/.test(path))).toEqual([]);
  });

  it('loads none of jsonwebtoken, bcryptjs, yaml, ajv, ajv-formats, structured-headers, NestJS or OpenTelemetry', () => {
    const packages = new Set(loaded.map(packageOf));
    expect(NOT_LOADED.filter((name) => packages.has(name))).toEqual([]);
  });
});

/** The otel subpath is what loads OpenTelemetry's API: the checks above look for the right files. */
it('the otel subpath loads @opentelemetry/api and its own module', async () => {
  writeFileSync(join(SCRATCH, 'otel.cjs'), `require('express-api-conventions/otel').recordSecurityMetrics()();\n${REPORT}\n`);
  const { stdout } = await promisify(execFile)('node', [join(SCRATCH, 'otel.cjs')], { cwd: ROOT, timeout: 30_000 });
  const loaded = JSON.parse(stdout) as string[];
  expect(loaded.map(packageOf)).toContain('@opentelemetry/api');
  expect(loaded).toContain(join(ROOT, 'dist', 'cjs', 'otel', 'security-metrics.js'));
}, 40_000);

/**
 * An issuer's key set (discovery, the JWKS fetch, JWK import) is
 * loaded only when configured: bearerAuth() with its own keys, alone or as
 * the preset's stage, loads none of it.
 */
describe('bearerAuth({ keys }) loads no key-set code; bearerAuth({ issuer }) does', () => {
  const KEY_SET_MODULES = /[/\\]oauth2[/\\](remote-key-set|remote-key-options|discovery|jwk|bounded-fetch)\.js$/;
  const KEYS = `[{ kid: 'k', algorithm: 'HS256', secret: 'a-secret-of-at-least-32-bytes-long!!' }]`;
  const run = async (name: string, source: string): Promise<string[]> => {
    writeFileSync(join(SCRATCH, name), `${source}\n${REPORT}\n`);
    const { stdout } = await promisify(execFile)('node', [join(SCRATCH, name)], { cwd: ROOT, timeout: 30_000 });
    return (JSON.parse(stdout) as string[]).filter((path) => KEY_SET_MODULES.test(path));
  };

  it('with keys, alone and as the preset stage: none', async () => {
    const loaded = await run(
      'keys.cjs',
      `const { conventions } = require('express-api-conventions');\nconst { bearerAuth } = require('express-api-conventions/oauth2');\n` +
        `bearerAuth({ keys: ${KEYS}, issuer: 'https://a.example', audience: 'api' });\n` +
        `conventions({ bearerAuth: { keys: ${KEYS}, issuer: 'https://a.example', audience: 'api' } });`,
    );
    expect(loaded).toEqual([]);
  }, 40_000);

  it('with an issuer and no keys: the key set, discovery and JWK import (the list above is the real one)', async () => {
    const loaded = await run(
      'issuer.cjs',
      `const { bearerAuth } = require('express-api-conventions/oauth2');\nbearerAuth({ issuer: 'https://a.example', audience: 'api' });`,
    );
    expect(loaded.map((path) => path.replace(/^.*[/\\]/, '')).sort()).toEqual([
      'bounded-fetch.js',
      'discovery.js',
      'jwk.js',
      'remote-key-options.js',
      'remote-key-set.js',
    ]);
  }, 40_000);
});
