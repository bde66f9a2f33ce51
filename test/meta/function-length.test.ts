import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The house rule of docs/architecture.md: no function of any workspace
 * package (the library's src/, checker/src/, authorization-server/src/) or
 * of the reference server readers copy (examples/server/src/) is longer than
 * about 80 lines unless a comment right above it says why, starting
 * `// Long because`. A function is a declaration, an expression, an arrow
 * function or a method; its lines run from its first token to its last.
 */

const ROOT = resolve(__dirname, '..', '..');
/** Every package's sources: the library, the workspace packages and the reference server. */
const SOURCES = [
  resolve(ROOT, 'src'),
  resolve(ROOT, 'checker', 'src'),
  resolve(ROOT, 'authorization-server', 'src'),
  resolve(ROOT, 'examples', 'server', 'src'),
];
const MAX_LINES = 80;
const REASON = /^\/\/ Long because\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** `file:line name (N lines)` for each function of `text` over the limit without a stated reason. */
function longFunctions(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      // The comment may sit above the statement that holds the function (`const f = () => …`).
      const holder = ts.isVariableDeclaration(node.parent) ? node.parent.parent.parent : node;
      const comments = ts.getLeadingCommentRanges(text, holder.getFullStart()) ?? [];
      const reasoned = comments.some((range) => REASON.test(text.slice(range.pos, range.end)));
      if (lines > MAX_LINES && !reasoned) {
        const name = (node as { name?: ts.Node }).name?.getText(source) ?? '(anonymous)';
        found.push(`${file}:${first + 1} ${name} (${lines} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('function length in every package', () => {
  it(`has no function over ${MAX_LINES} lines without a reason in a comment`, () => {
    const files = SOURCES.flatMap(sourceFiles);
    for (const dir of SOURCES) expect(files.some((file) => file.startsWith(`${dir}/`))).toBe(true);
    const found = files.flatMap((file) => longFunctions(relative(ROOT, file), readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });

  const body = (count: number) => Array.from({ length: count }, (_, i) => `  const v${i} = ${i};`).join('\n');

  it('finds a long function, named or an arrow (the check itself can fail)', () => {
    expect(longFunctions('a.ts', `export function big() {\n${body(90)}\n}\n`)).toEqual(['a.ts:1 big (92 lines)']);
    expect(longFunctions('b.ts', `const big = () => {\n${body(90)}\n};\n`)).toEqual(['b.ts:1 (anonymous) (92 lines)']);
    expect(longFunctions('c.ts', `function small() {\n${body(70)}\n}\n`)).toEqual([]);
  });

  it('accepts a long function whose comment says why', () => {
    expect(longFunctions('d.ts', `// Long because it is one flat table.\nfunction big() {\n${body(90)}\n}\n`)).toEqual([]);
    expect(longFunctions('e.ts', `// Long because it is one flat table.\nconst big = () => {\n${body(90)}\n};\n`)).toEqual([]);
  });
});
