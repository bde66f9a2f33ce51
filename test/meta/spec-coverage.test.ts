import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * docs/spec-coverage.md stays true: every test file it names exists, and
 * every test name it quotes after a file is written in that file.
 */

const ROOT = join(__dirname, '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs', 'spec-coverage.md'), 'utf8');

interface Reference {
  readonly row: string;
  readonly file: string;
  readonly name?: string;
}

const FILE = /`(test\/[^`]+\.test\.ts)`/;
const NAME = /"((?:[^"\\]|\\.)*)"/g;

/** Every (file, name) pair of the "proven by" column of the tables. */
function references(): Reference[] {
  const found: Reference[] = [];
  for (const line of PAGE.split('\n')) {
    const cells = line.split(' | ');
    if (!line.startsWith('| ') || cells.length !== 4 || line.includes('| --- |') || line.endsWith('proven by |')) continue;
    const row = `${cells[0]?.slice(2)} | ${cells[1]?.slice(0, 60)}`;
    let file: string | undefined;
    for (const part of (cells[3] ?? '').split('; ')) {
      file = FILE.exec(part)?.[1] ?? file;
      const names = [...part.matchAll(NAME)].map((match) => (match[1] ?? '').replace(/\\(.)/g, '$1'));
      if (file && names.length === 0) found.push({ row, file });
      for (const name of names) if (file) found.push({ row, file, name });
    }
  }
  return found;
}

describe('docs/spec-coverage.md', () => {
  const all = references();

  it('names tests for every row of its tables', () => {
    expect(all.length).toBeGreaterThan(100);
  });

  it.each(all.map((ref) => [ref.file, ref.name ?? '(the file)', ref]))('%s › %s exists', (_file, _name, ref) => {
    const { file, name } = ref as Reference;
    const path = join(ROOT, file);
    expect(existsSync(path)).toBe(true);
    if (name === undefined) return;
    const source = readFileSync(path, 'utf8');
    // A name holding a backslash is written with it doubled in the source.
    expect(
      source.includes(`'${name}'`) || source.includes(`'${name.replaceAll('\\', '\\\\')}'`) || source.includes(`"${name}"`),
    ).toBe(true);
  });
});
