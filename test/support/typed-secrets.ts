import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every password and secret the suite types, right or wrong, read from the
 * test sources themselves (test/, authorization-server/test/, checker/test/):
 * a string literal given to a password or secret field or constant, or said to
 * be a password. A test that types a new one is covered without a list to
 * keep up: the password someone tried is the classic leak of a sign-in log.
 */

const ROOT = join(__dirname, '..', '..');
const TEST_DIRS = ['test', join('authorization-server', 'test'), join('checker', 'test')];

// `password: 'x'`, `client_secret: "x"`, `const WRONG_PASSWORD = 'x'`, `secret = 'x'`, `password is x'`.
const LITERALS = [
  /\b\w*(?:password|passphrase|secret|WRONG)\w*['"]?\s*[:=]\s*(['"`])([^'"`\n$]+)\1/gi,
  /password is ([A-Za-z0-9-]+)['"`]/gi,
];

function sourcesUnder(dir: string): string[] {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'fixtures' ? [] : sourcesUnder(path);
    return /\.(ts|cjs|mjs)$/.test(entry.name) ? [path] : [];
  });
}

/** The literals typed as passwords or secrets in one source text. */
export function typedSecretsIn(text: string): string[] {
  const found = new Set<string>();
  for (const pattern of LITERALS) {
    for (const match of text.matchAll(pattern)) found.add((match[2] ?? match[1] ?? '').trim());
  }
  return [...found].filter((value) => value !== '');
}

let cached: readonly string[] | undefined;

/** Every password and secret the suite's sources type, once per process. */
export function typedSecrets(): readonly string[] {
  cached ??= [
    ...new Set(
      TEST_DIRS.flatMap((dir) => sourcesUnder(join(ROOT, dir))).flatMap((file) => typedSecretsIn(readFileSync(file, 'utf8'))),
    ),
  ];
  return cached;
}
