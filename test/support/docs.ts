import { execFileSync } from 'node:child_process';

/**
 * The TypeScript files the docs check builds from the code blocks of
 * README.md and docs/ (scripts/check-docs.mjs), by the name each block gives
 * itself. Read through a child process: the script is an ES module the
 * test transform does not load.
 */
export function docSourceFiles(): Record<string, string> {
  return JSON.parse(
    execFileSync(
      process.execPath,
      ['-e', "import('./scripts/check-docs.mjs').then((m) => console.log(JSON.stringify(m.sourceFiles())))"],
      { encoding: 'utf8' },
    ),
  ) as Record<string, string>;
}
