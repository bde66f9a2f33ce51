import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * docs/spec-coverage.md stays true: every row of a table with a "proven by"
 * column names at least one test file, every file it names exists (the
 * library's `test/`, the checker's `checker/test/` and the authorization
 * server's `authorization-server/test/`), and every test name
 * it quotes after a file is written in that file.
 */

const ROOT = join(__dirname, '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs', 'spec-coverage.md'), 'utf8');

interface Row {
  /** The section heading and the first cell, to name the row in a failure. */
  readonly label: string;
  readonly cells: readonly string[];
  /** The header's cells, for the table the row belongs to. */
  readonly header: readonly string[];
}

interface Reference {
  readonly row: string;
  readonly file: string;
  readonly name?: string;
}

const FILE = /`((?:checker\/|authorization-server\/)?test\/[^`]+\.test\.ts)`/;
const NAME = /"((?:[^"\\]|\\.)*)"/g;

const cellsOf = (line: string): string[] =>
  line
    .slice(1, line.endsWith('|') ? -1 : undefined)
    .split(/ \| /)
    .map((cell) => cell.trim());

/** Every body row of every table, with its table's header. */
function rows(): Row[] {
  const found: Row[] = [];
  let section = '';
  let header: string[] | undefined;
  for (const line of PAGE.split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3);
    if (!line.startsWith('|')) {
      header = undefined;
      continue;
    }
    if (/^\|[\s|-]+\|$/.test(line)) continue;
    if (header === undefined) header = cellsOf(line);
    else found.push({ label: `${section} › ${cellsOf(line)[0]}`, cells: cellsOf(line), header });
  }
  return found;
}

/** The (file, name) pairs of a "proven by" cell: each quoted name belongs to the file written before it. */
function references(row: string, cell: string): Reference[] {
  const found: Reference[] = [];
  let file: string | undefined;
  for (const part of cell.split('; ')) {
    const named = FILE.exec(part)?.[1];
    if (named !== undefined) file = named;
    const names = [...part.matchAll(NAME)].map((match) => (match[1] ?? '').replace(/\\(.)/g, '$1'));
    if (file === undefined) continue;
    if (named !== undefined && names.length === 0) found.push({ row, file });
    for (const name of names) found.push({ row, file, name });
  }
  return found;
}

const all = rows();
const proven = all.filter((row) => row.header.includes('proven by'));
const refs = proven.flatMap((row) => references(row.label, row.cells[row.header.indexOf('proven by')] ?? ''));

describe('docs/spec-coverage.md', () => {
  it('has tables of rows with a "proven by" column, the checker’s tests among those they name', () => {
    expect(proven.length).toBeGreaterThan(100);
    expect(refs.some((ref) => ref.file.startsWith('checker/test/'))).toBe(true);
  });

  it('has only the "not testable" table without a "proven by" column', () => {
    const others = all.filter((row) => !row.header.includes('proven by'));
    expect(others.length).toBeGreaterThan(0);
    expect(new Set(others.map((row) => row.header.join(' | ')))).toEqual(new Set(['rule | why']));
  });

  it.each(proven.map((row) => [row.label, row]))('row %s has a cell for each column and names a test file', (_label, row) => {
    const { cells, header } = row as Row;
    expect(cells).toHaveLength(header.length);
    const cell = cells[header.indexOf('proven by')] ?? '';
    expect(FILE.test(cell)).toBe(true);
    // A name quoted before any file could belong to none.
    expect(cell.slice(0, cell.search(FILE))).not.toContain('"');
  });

  it.each(refs.map((ref) => [ref.file, ref.name ?? '(the file)', ref]))('%s › %s exists', (_file, _name, ref) => {
    const { file, name } = ref as Reference;
    const path = join(ROOT, file);
    expect(existsSync(path)).toBe(true);
    if (name === undefined) return;
    const source = readFileSync(path, 'utf8');
    // A name holding a backslash is written with it doubled in the source.
    const written = [name, name.replaceAll('\\', '\\\\')];
    expect(written.some((text) => [`'${text}'`, `"${text}"`, `\`${text}\``].some((quoted) => source.includes(quoted)))).toBe(
      true,
    );
  });
});
