import { readFileSync } from 'node:fs';

/**
 * TypeScript's node10 resolution (what `"module": "commonjs"` implies) ignores
 * `exports`; `typesVersions` gives it each subpath's types. It must name the
 * same declaration file as the subpath's `require` types, for every subpath.
 * scripts/check-package.mjs compiles test/fixtures/type-resolution/ against the
 * packed tarball under each resolution.
 */
interface Manifest {
  readonly exports: Record<string, string | { require?: { types?: string } }>;
  readonly typesVersions: Record<string, Record<string, string[]>>;
}

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as Manifest;

describe('package.json typesVersions', () => {
  it('maps every subpath of exports to its CommonJS declarations, and nothing else', () => {
    const expected = Object.fromEntries(
      Object.entries(manifest.exports)
        .filter(([key]) => key !== '.' && key !== './package.json')
        .map(([key, target]) => [key.slice(2), [typeof target === 'string' ? target : target.require?.types]]),
    );
    expect(manifest.typesVersions).toEqual({ '*': expected });
  });
});
