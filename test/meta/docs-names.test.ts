import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Every name an entry point exports at run time is named in the docs
 * ("the docs name every exported name"): README.md or a page under
 * docs/, as a word. A name no page mentions is either undocumented API or a
 * helper that should not be exported.
 */

const ROOT = resolve(__dirname, '..', '..');

const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
  );
const docs = ['README.md', ...walk('docs')].map((page) => readFileSync(page, 'utf8')).join('\n');
const words = new Set(docs.match(/[A-Za-z_$][\w$]*/g));

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { import: { default: string } }>;
};
const entries = Object.entries(pkg.exports)
  .filter((entry): entry is [string, { import: { default: string } }] => typeof entry[1] !== 'string')
  // The checker leaves this package for its own, with its own README.
  .filter(([subpath]) => subpath !== './conformance')
  .map(([subpath, target]) => [
    subpath,
    join(ROOT, target.import.default.replace('./dist/esm/', 'src/').replace(/\.js$/, '.ts')),
  ]);

describe.each(entries)('the runtime names of %s', (_subpath, file) => {
  it('are each named in README.md or docs/', () => {
    const names = Object.keys(require(file) as object).filter((name) => name !== '__esModule');
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !words.has(name))).toEqual([]);
  });
});

/** The workspace packages: each one's entry point, and its README beside the pages of docs/. */
const PACKAGES = [
  ['express-api-conventions-checker', 'checker/src/index.ts', 'checker/README.md'],
  ['express-api-conventions-authorization-server', 'authorization-server/src/index.ts', 'authorization-server/README.md'],
] as const;

describe.each(PACKAGES)('the runtime names of %s', (_name, entry, readme) => {
  it(`are each named in ${readme} or docs/`, () => {
    const own = new Set(readFileSync(join(ROOT, readme), 'utf8').match(/[A-Za-z_$][\w$]*/g));
    const names = Object.keys(require(join(ROOT, entry)) as object).filter((name) => name !== '__esModule');
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !words.has(name) && !own.has(name))).toEqual([]);
  });
});
