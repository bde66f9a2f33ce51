import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

// The public surface, pinned: every name each entry point of package.json's
// "exports" offers, types included. A name added or removed fails this test
// until test/fixtures/public-surface.json says so, so that growing (or
// breaking) the API is a decision made in review, with its CHANGELOG line.
// `UPDATE_PUBLIC_SURFACE=1 npx jest test/meta/public-surface.test.ts` rewrites it (then `npm run format`).

const ROOT = path.resolve(__dirname, '..', '..');
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

/** Every exported name of each entry point, and those that exist at run time (values, not types). */
function exportedNames(files: Record<string, string>): { all: Record<string, string[]>; runtime: Record<string, string[]> } {
  const program = ts.createProgram(Object.values(files), {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const all: Record<string, string[]> = {};
  const runtime: Record<string, string[]> = {};
  for (const [subpath, file] of Object.entries(files)) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`no module for ${subpath} (${file})`);
    const symbols = checker.getExportsOfModule(module);
    const resolved = (symbol: ts.Symbol) => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
    all[subpath] = symbols.map((symbol) => symbol.getName()).sort();
    runtime[subpath] = symbols
      .filter((symbol) => resolved(symbol).flags & ts.SymbolFlags.Value)
      .map((symbol) => symbol.getName())
      .sort();
  }
  return { all, runtime };
}

/** At most this many runtime names on the root ("a root a team can read"). */
const ROOT_RUNTIME_NAMES = 40;

describe('the public surface', () => {
  const surface = exportedNames(entryPoints());

  it('is the list pinned in test/fixtures/public-surface.json', () => {
    if (process.env.UPDATE_PUBLIC_SURFACE === '1') writeFileSync(PINNED, `${JSON.stringify(surface.all, null, 2)}\n`);
    const pinned = JSON.parse(readFileSync(PINNED, 'utf8')) as Record<string, string[]>;
    expect(surface.all).toEqual(pinned);
  });

  it(`holds at most ${ROOT_RUNTIME_NAMES} runtime names on the root`, () => {
    expect(surface.runtime['.']?.length).toBeGreaterThan(10);
    expect(surface.runtime['.']?.length).toBeLessThanOrEqual(ROOT_RUNTIME_NAMES);
  });

  it('exports no implementation helper: option checkers, header pieces, hashing and key helpers', () => {
    const helpers =
      /^(check(Boolean|Function|Integer|Log|OneOf|String)|invalidOption|readOptions|refuseHintedOptions|isProductionEnvironment|policyItem|policyItemPrefix|stateItem|quotedName|hashClientSecret|hashRefreshToken|hashSlot|accessTokenHash|jwkThumbprint|signInAddressKey|bodyEntityTag|format(Report|Junit|Html|Sarif))$/;
    const found = Object.entries(surface.runtime)
      .filter(([subpath]) => subpath !== './conformance') // the checker leaves the package
      // The one subpath that offers them on purpose, to packages that extend the conventions (docs/extend.md).
      .filter(([subpath]) => subpath !== './extend')
      .flatMap(([subpath, names]) => names.filter((name) => helpers.test(name)).map((name) => `${subpath}: ${name}`));
    expect(found).toEqual([]);
  });
});
