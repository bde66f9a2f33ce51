// Copies the rule tables the checker shares with the library's linters
// (src/lint/words.ts, path-rules.ts, body-rules.ts) into src/rules/, byte for
// byte. The checker imports nothing of the library, so it holds these copies;
// test/rules-agree.test.ts fails when they differ from the library's.
//
//   npm run sync:rules -w express-api-conventions-checker
import { copyFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const RULE_FILES = ['words.ts', 'path-rules.ts', 'body-rules.ts'];

const library = new URL('../../src/lint/', import.meta.url);
const copies = new URL('../src/rules/', import.meta.url);
for (const file of RULE_FILES) {
  copyFileSync(fileURLToPath(new URL(file, library)), fileURLToPath(new URL(file, copies)));
  console.log(`sync:rules: src/lint/${file} -> checker/src/rules/${file}`);
}
