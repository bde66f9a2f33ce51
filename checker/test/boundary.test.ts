import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The checker is a product of its own (docs/design.md principle 9): its sources
 * import nothing of the library, only each other, Node and the two
 * dependencies its package.json names.
 */
const SRC = resolve(__dirname, '../src');
// `import ... from '...'`, `export ... from '...'`, `import '...'` and `import('...')`.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const imports = sourceFiles(SRC).flatMap((file) =>
  [...readFileSync(file, 'utf8').matchAll(SPECIFIER)].map((match) => ({ file, specifier: match[1] as string })),
);

describe("the checker's sources", () => {
  it('are read (the parser finds the imports)', () => {
    expect(imports.length).toBeGreaterThan(50);
  });

  it('import no file outside checker/src', () => {
    const outside = imports
      .filter(({ specifier }) => specifier.startsWith('.'))
      .filter(({ file, specifier }) => relative(SRC, resolve(dirname(file), specifier)).startsWith(`..${sep}`))
      .map(({ file, specifier }) => `${relative(SRC, file)} -> ${specifier}`);
    expect(outside).toEqual([]);
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
