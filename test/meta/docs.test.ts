import { readFileSync } from 'node:fs';
import { CONFIGURATION_ERROR_CODES } from '../../src/config/index.js';
import { ERROR_CATALOGUE } from '../../src/errors/catalogue.js';

/** The rows of the catalogue table, cells trimmed, so the table's padding does not matter. */
const catalogueRows = (page: string): string[][] =>
  page
    .split('\n')
    .filter((line) => /^\|\s*\d{5}\s*\|/.test(line))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );

describe('docs/errors.md', () => {
  const rows = catalogueRows(readFileSync('docs/errors.md', 'utf8'));

  it.each(Object.entries(ERROR_CATALOGUE))('lists %s with its code, status and message', (name, entry) => {
    expect(rows).toContainEqual([String(entry.code), String(entry.status), `\`${name}\``, entry.message]);
  });

  it('lists no code that the catalogue does not have', () => {
    const documented = rows.map((row) => Number(row[0])).sort();
    const catalogued = Object.values(ERROR_CATALOGUE)
      .map((entry) => entry.code)
      .sort();
    expect(documented).toEqual(catalogued);
  });
});

describe('docs/configuration-errors.md', () => {
  const page = readFileSync('docs/configuration-errors.md', 'utf8');

  it.each(CONFIGURATION_ERROR_CODES)('has an anchor for %s', (code) => {
    expect(page).toContain(`## ${code.toLowerCase()}`);
  });
});
