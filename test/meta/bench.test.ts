import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

// The bench servers (bench/servers/) are what `npm run bench` compares; this
// proves they start and answer the same bytes, with no load and no timing.
// Ours runs from a fresh transpile of src/ (not dist/, which may be stale), to
// CommonJS as the package's one build is (scripts/build.mjs).

const ROOT = path.resolve(__dirname, '..', '..');
const LIBRARY_DIR = path.join(ROOT, 'node_modules', '.cache', 'bench-smoke');

function transpileSources(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    if (entry.isDirectory()) transpileSources(source, path.join(to, entry.name));
    else if (entry.name.endsWith('.ts')) {
      const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
      });
      writeFileSync(path.join(to, entry.name.replace(/\.ts$/, '.js')), outputText);
    }
  }
}

interface SmokeReport {
  expectedBody: string;
  targets: { id: string; status: number; sameBody: boolean; statusWithBadToken: number; contentSecurityPolicy: string | null }[];
}

function runSmoke(): Promise<SmokeReport> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'bench', 'smoke.mjs')],
      { cwd: ROOT, env: { ...process.env, BENCH_LIBRARY: path.join(LIBRARY_DIR, 'index.js') }, timeout: 60_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
    );
  });
}

describe('bench servers (npm run bench)', () => {
  let report: SmokeReport;

  beforeAll(async () => {
    rmSync(LIBRARY_DIR, { recursive: true, force: true });
    transpileSources(path.join(ROOT, 'src'), LIBRARY_DIR);
    writeFileSync(path.join(LIBRARY_DIR, 'package.json'), '{ "type": "commonjs" }\n');
    report = await runSmoke();
  }, 90_000);

  afterAll(() => rmSync(LIBRARY_DIR, { recursive: true, force: true }));

  it('serve the ~400-byte user object', () => {
    const user = JSON.parse(report.expectedBody);
    expect(Object.keys(user)).toEqual(expect.arrayContaining(['id', 'id_str', 'name', 'email']));
    expect(report.expectedBody.length).toBeGreaterThanOrEqual(380);
    expect(report.expectedBody.length).toBeLessThanOrEqual(420);
  });

  describe('the public route', () => {
    it('answers 200 with the same body in every server', () => {
      const publicTargets = report.targets
        .filter((t) => !t.id.endsWith('+jwt'))
        .map(({ contentSecurityPolicy: _csp, ...answer }) => answer);
      expect(publicTargets).toEqual(
        ['node', 'express', 'peer', 'fastify', 'control', 'ours', 'typical-express', 'typical-peer', 'typical-ours'].map(
          (id) => ({
            id,
            status: 200,
            sameBody: true,
            statusWithBadToken: 200,
          }),
        ),
      );
    });

    it("sends the preset's headers behind morgan and cookie-parser too (the typical-app set)", () => {
      const csp = Object.fromEntries(report.targets.map((t) => [t.id, t.contentSecurityPolicy]));
      expect({ ours: csp.ours, typical: csp['typical-ours'] }).toEqual({
        ours: "script-src 'self'",
        typical: "script-src 'self'",
      });
    });
  });

  describe('the bearer-protected route', () => {
    it('answers 200 with the same body given the token, and 401 given a bad one, in every server', () => {
      const bearerTargets = report.targets
        .filter((t) => t.id.endsWith('+jwt'))
        .map(({ contentSecurityPolicy: _csp, ...answer }) => answer);
      expect(bearerTargets).toEqual(
        ['node+jwt', 'express+jwt', 'peer+jwt', 'fastify+jwt', 'control+jwt', 'ours+jwt'].map((id) => ({
          id,
          status: 200,
          sameBody: true,
          statusWithBadToken: 401,
        })),
      );
    });
  });
});
