import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The checker is a product of its own (docs/architecture.md): its sources
 * import, besides each other, Node and the two dependencies its package.json
 * names, only the library's rule tables, option helpers and the leaf files
 * of the values it sends, which its build compiles with it
 * (scripts/build.mjs); and those import nothing else.
 */
const SRC = resolve(__dirname, '../src');
const LIBRARY = resolve(__dirname, '../../src');
/** The library's sources the checker compiles with its own. */
const LIBRARY_SOURCES = [
  'config/configuration-error.ts',
  'config/options.ts',
  'http/spec.ts',
  'lint/body-rules.ts',
  'lint/path-rules.ts',
  'lint/words.ts',
  'openapi/document.ts',
  'security/defaults.ts',
];
// `import ... from '...'`, `export ... from '...'`, `import '...'` and `import('...')`.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const importsOf = (files: readonly string[]) =>
  files.flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(SPECIFIER)].map((match) => ({ file, specifier: match[1] as string })),
  );
const imports = importsOf(sourceFiles(SRC));

describe("the checker's sources", () => {
  it('are read (the parser finds the imports)', () => {
    expect(imports.length).toBeGreaterThan(50);
  });

  it("import no file outside checker/src but the library's rule tables, option helpers and values", () => {
    const outside = imports
      .filter(({ specifier }) => specifier.startsWith('.'))
      .map(({ file, specifier }) => resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))
      .filter((target) => relative(SRC, target).startsWith(`..${sep}`))
      .map((target) => relative(LIBRARY, target).split(sep).join('/'));
    expect(outside).toContain('lint/path-rules.ts');
    expect(outside.filter((target) => !LIBRARY_SOURCES.includes(target))).toEqual([]);
  });

  it('compile, of the library, sources that import only each other', () => {
    const reached = importsOf(LIBRARY_SOURCES.map((file) => join(LIBRARY, file))).map(({ file, specifier }) =>
      specifier.startsWith('.')
        ? relative(LIBRARY, resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))
            .split(sep)
            .join('/')
        : specifier,
    );
    expect(reached.filter((target) => !LIBRARY_SOURCES.includes(target))).toEqual([]);
  });

  it('import no package but Node and the dependencies of package.json', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const packages = new Set(
      imports
        .map(({ specifier }) => specifier)
        .filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:')),
    );
    expect([...packages].sort()).toEqual(Object.keys(pkg.dependencies).sort());
  });
});
