import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { transpileLibrary } from '../support/transpile.js';

// The bench servers (bench/servers/) are what `npm run bench` compares; this
// proves they start and answer the same bytes, with no load and no timing.
// Ours runs from a fresh transpile of src/ (test/support/transpile.ts).

const ROOT = path.resolve(__dirname, '..', '..');
const LIBRARY_DIR = path.join(ROOT, 'node_modules', '.cache', 'bench-smoke');

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
    transpileLibrary(LIBRARY_DIR);
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
