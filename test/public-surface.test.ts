import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

// The public surface, pinned: every name each entry point of package.json's
// "exports" offers, types included. A name added or removed fails this test
// until test/fixtures/public-surface.json says so, so that growing (or
// breaking) the API is a decision made in review, with its CHANGELOG line.
// `UPDATE_PUBLIC_SURFACE=1 npx jest test/public-surface.test.ts` rewrites it (then `npm run format`).

const ROOT = path.resolve(__dirname, '..');
const PINNED = path.join(ROOT, 'test', 'fixtures', 'public-surface.json');

/** Each subpath of package.json "exports" with the source file behind it. */
function entryPoints(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { import: { default: string } }>;
  };
  const entries: Record<string, string> = {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue; // ./package.json
    const built = target.import.default; // ./dist/esm/<dir>/index.js
    entries[subpath] = path.join(ROOT, built.replace('./dist/esm/', 'src/').replace(/\.js$/, '.ts'));
  }
  return entries;
}

function exportedNames(files: Record<string, string>): Record<string, string[]> {
  const program = ts.createProgram(Object.values(files), {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const surface: Record<string, string[]> = {};
  for (const [subpath, file] of Object.entries(files)) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`no module for ${subpath} (${file})`);
    surface[subpath] = checker
      .getExportsOfModule(module)
      .map((symbol) => symbol.getName())
      .sort();
  }
  return surface;
}

describe('the public surface', () => {
  it('is the list pinned in test/fixtures/public-surface.json', () => {
    const surface = exportedNames(entryPoints());
    if (process.env.UPDATE_PUBLIC_SURFACE === '1') writeFileSync(PINNED, `${JSON.stringify(surface, null, 2)}\n`);
    const pinned = JSON.parse(readFileSync(PINNED, 'utf8')) as Record<string, string[]>;
    expect(surface).toEqual(pinned);
  }, 60_000);
});
