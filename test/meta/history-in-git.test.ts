import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * The history of a change is in git and CHANGELOG.md; the code, the docs,
 * the bench and the tests say what holds now, in words a reader who never
 * saw the tracker can follow. No tracked text file names an issue by number.
 */
const TEXT = /\.(?:[cm]?[jt]s|md|ya?ml|json)$/;
const files = execFileSync('git', ['ls-files'], { encoding: 'utf8' })
  .split('\n')
  .filter((file) => TEXT.test(file) && !file.endsWith('package-lock.json'));
// The word, singular or plural, then a number, with or without `#` (built so that this file names none).
const ISSUE_NUMBER = new RegExp(`\\b${'issue'}s? #?\\d+`, 'i');

describe('the history stays in git', () => {
  it('reads the tracked sources, docs, bench, scripts and tests (the scan works)', () => {
    expect(files.length).toBeGreaterThan(300);
    expect(files).toEqual(expect.arrayContaining(['src/preset.ts', 'docs/design.md', 'bench/run.mjs', 'CHANGELOG.md']));
    expect(ISSUE_NUMBER.test(`see ${'Issue'} 32, finding 4`)).toBe(true);
    expect(ISSUE_NUMBER.test('an issuer 42 times')).toBe(false);
  });

  it('no file names an issue by its number', () => {
    const named = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) => (ISSUE_NUMBER.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(named).toEqual([]);
  });
});
