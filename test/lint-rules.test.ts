import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The one warning channel and the one reading of the environment
 * (docs/architecture.md): biome's plugin lint/environment-through-config.grit
 * refuses `process.emitWarning` and `process.env.NODE_ENV` in src/ outside
 * src/config/. This proves the rule still fires, on files laid out as src/.
 */
describe('lint: warnings and the environment go through src/config/', () => {
  const root = mkdtempSync(join(process.cwd(), '.lint-probe-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const lint = (path: string, source: string): string => {
    const file = join(root, path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, source);
    try {
      return execFileSync('npx', ['biome', 'lint', '--max-diagnostics=50', file], { encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      const { stdout, stderr } = error as { stdout: string; stderr: string };
      return stdout + stderr;
    }
  };
  const SOURCE = [
    "export const say = () => process.emitWarning('x');",
    "export const production = process.env.NODE_ENV === 'production';",
    "export const again = process.env['NODE_ENV'];",
    '',
  ].join('\n');
  const hits = (output: string) => output.split('Outside src/config/, say a warning with warnOnce()').length - 1;

  it('refuses each direct use in src/', () => {
    expect(hits(lint('src/module/probe.ts', SOURCE))).toBe(3);
  });

  it('allows them in src/config/, the one place that reads them', () => {
    expect(hits(lint('src/config/probe.ts', SOURCE))).toBe(0);
  });
});
