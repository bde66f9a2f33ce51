import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The checker is a product of its own (docs/architecture.md, "One way for
 * sibling packages"): its sources import, besides each other, Node, the
 * dependencies its package.json names, and the library, its peer dependency,
 * by its package name only: the root and the subpaths the library's
 * package.json exports (`express-api-conventions/extend` among them). No
 * file outside checker/src, so the build compiles none of the library.
 */
const SRC = resolve(__dirname, '../src');
const LIBRARY = 'express-api-conventions';
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
const packageJson = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    peerDependencies: Record<string, string>;
    exports: Record<string, unknown>;
  };
const pkg = packageJson(join(__dirname, '..'));
/** The library's entry points: `express-api-conventions` and `express-api-conventions/<subpath>`. */
const libraryEntries = Object.keys(packageJson(join(__dirname, '..', '..')).exports).map((subpath) =>
  subpath === '.' ? LIBRARY : `${LIBRARY}/${subpath.slice(2)}`,
);
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

describe("the checker's sources", () => {
  it('are read (the parser finds the imports)', () => {
    expect(imports.length).toBeGreaterThan(50);
    expect(imports.map(({ specifier }) => specifier)).toContain(`${LIBRARY}/extend`);
  });

  it('import no file outside checker/src', () => {
    const outside = imports
      .filter(({ specifier }) => specifier.startsWith('.'))
      .map(({ file, specifier }) => resolve(dirname(file), specifier))
      .filter((target) => relative(SRC, target).startsWith(`..${sep}`));
    expect(outside).toEqual([]);
  });

  it('reach the library through its public entry points only, as its peer dependency', () => {
    expect(pkg.peerDependencies[LIBRARY]).toBeDefined();
    const library = imports.map(({ specifier }) => specifier).filter((specifier) => packageOf(specifier) === LIBRARY);
    expect(library.filter((specifier) => !libraryEntries.includes(specifier))).toEqual([]);
  });

  it('import no package but Node, the dependencies of package.json and the library', () => {
    const packages = new Set(
      imports
        .map(({ specifier }) => specifier)
        .filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:'))
        .map(packageOf),
    );
    expect([...packages].sort()).toEqual([...Object.keys(pkg.dependencies), LIBRARY].sort());
  });
});
