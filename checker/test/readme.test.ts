import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The checker's README is the page its tarball ships, and its configuration
 * errors point to it: every link must work from node_modules, where the
 * repository's docs/ are not. So each link is an absolute URL or a file the
 * packed package holds.
 */
const PACKAGE = join(__dirname, '..');
const packed = new Set(
  (
    JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: PACKAGE, encoding: 'utf8' })) as {
      files: { path: string }[];
    }[]
  )[0]?.files.map((file) => file.path),
);
const readme = readFileSync(join(PACKAGE, 'README.md'), 'utf8');
const prose = readme.replace(/^ *```[\s\S]*?^ *```/gm, '').replace(/`[^`\n]*`/g, '');
const links = [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] as string);

describe("the checker's README", () => {
  it('is shipped with the licence and the command', () => {
    for (const file of ['README.md', 'LICENSE', 'package.json', 'bin/express-api-conventions-checker.mjs']) {
      expect(packed).toContain(file);
    }
  });

  it('has links (the scan works)', () => {
    expect(links.length).toBeGreaterThan(2);
  });

  it('links only to absolute URLs or to files of the package', () => {
    const broken = links.filter((target) => !/^https:\/\//.test(target) && !packed.has(target.split('#')[0] as string));
    expect(broken).toEqual([]);
  });
});
