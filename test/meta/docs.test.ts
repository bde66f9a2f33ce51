import { readFileSync } from 'node:fs';
import { CONFIGURATION_ERROR_CODES } from '../../src/config/index.js';
import { ERROR_CATALOGUE } from '../../src/errors/catalogue.js';
import { registeredErrorEntries } from '../../src/errors/registered-entries.js';
import { SECURITY_EVENTS, type SecurityEventName } from '../../src/events/index.js';
// Registers the authorization server's error entries, as loading the package does.
import '../../authorization-server/src/error-entries.js';

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
  const page = readFileSync('docs/errors.md', 'utf8');
  const [library = '', registered = ''] = page.split("### The authorization server's entries");
  const libraryRows = catalogueRows(library);
  const registeredRows = catalogueRows(registered);

  it.each(Object.entries(ERROR_CATALOGUE))('lists %s with its code, status and message', (name, entry) => {
    expect(libraryRows).toContainEqual([String(entry.code), String(entry.status), `\`${name}\``, entry.message]);
  });

  it('lists no code that the catalogue does not have', () => {
    const documented = libraryRows.map((row) => Number(row[0])).sort();
    const catalogued = Object.values(ERROR_CATALOGUE)
      .map((entry) => entry.code)
      .sort();
    expect(documented).toEqual(catalogued);
  });

  it("lists the authorization server's registered entries apart, each with its code, status and message", () => {
    const entries = registeredErrorEntries().filter((held) => held.owner === 'express-api-conventions-authorization-server');
    expect(entries.length).toBeGreaterThan(10);
    const expected = entries
      .map(({ name, entry }) => [String(entry.code), String(entry.status), `\`${name}\``, entry.message])
      .sort((a, b) => Number(a[0]) - Number(b[0]));
    expect(registeredRows).toEqual(expected);
  });
});

describe('docs/configuration-errors.md', () => {
  const page = readFileSync('docs/configuration-errors.md', 'utf8');

  it.each(CONFIGURATION_ERROR_CODES)('has an anchor for %s', (code) => {
    expect(page).toContain(`## ${code.toLowerCase()}`);
  });
});

describe('docs/observability.md', () => {
  const page = readFileSync('docs/observability.md', 'utf8');
  const events = page.slice(page.indexOf('\n## Events\n'), page.indexOf('\n## Subscribing\n'));
  // The first cell of each event row: one or more `name`s, then the level they share.
  const documented = events
    .split('\n')
    .map((line) => /^\|\s*((?:`[a-z_]+`,?\s*)+)\((INFO|WARN|CRITICAL)\)\s*\|/.exec(line))
    .filter((match) => match !== null)
    .flatMap(([, names, level]) => (names?.match(/[a-z_]+/g) ?? []).map((name) => [name, level]));
  const table = Object.entries(SECURITY_EVENTS).map(([name, spec]) => [name, spec.level]);

  it('gives each event the level of its row in SECURITY_EVENTS, and names no other event', () => {
    expect(documented.length).toBeGreaterThan(0);
    for (const row of documented) expect(table).toContainEqual(row);
  });

  it.each(Object.keys(SECURITY_EVENTS))('has a row for %s', (name) => {
    expect(documented.map(([documentedName]) => documentedName)).toContain(name);
  });

  it("lists exactly the names that are OWASP's vocabulary's own", () => {
    const claim = /These names and their levels are OWASP's Application Logging Vocabulary's own:([^.]+)\./.exec(page);
    const claimed = (claim?.[1]?.match(/`[a-z_]+`/g) ?? []).map((name) => name.slice(1, -1)).sort();
    const own = (Object.keys(SECURITY_EVENTS) as SecurityEventName[]).filter((name) => SECURITY_EVENTS[name].vocabulary).sort();
    expect(claimed).toEqual(own);
  });
});
