import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The checker imports nothing of the library, yet it must judge paths and
 * bodies exactly as the library's linters do (checkRoutes(), responseLinter()).
 * So it runs copies of the library's rule tables, kept byte for byte: when
 * one side changes, this fails until `npm run sync:rules -w
 * express-api-conventions-checker` copies them again.
 */
const COPIES = join(__dirname, '..', 'src', 'rules');
const LIBRARY = join(__dirname, '..', '..', 'src', 'lint');

describe("the checker's copies of the library's rule tables", () => {
  const files = readdirSync(COPIES).sort();

  it('are the word helpers, the path rules and the body rules', () => {
    expect(files).toEqual(['body-rules.ts', 'path-rules.ts', 'words.ts']);
  });

  it.each(files)('src/rules/%s is src/lint/%s of the library, byte for byte', (file) => {
    expect(readFileSync(join(COPIES, file), 'utf8')).toBe(readFileSync(join(LIBRARY, file), 'utf8'));
  });
});
