import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SRC = path.resolve(__dirname, '..', '..', 'src');

function transpileSources(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    if (entry.isDirectory()) transpileSources(source, path.join(to, entry.name));
    else if (entry.name.endsWith('.ts')) {
      const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
      });
      writeFileSync(path.join(to, entry.name.replace(/\.ts$/, '.js')), outputText);
    }
  }
}

/**
 * A fresh transpile of src/ into `to` (not dist/, which may be stale), to
 * CommonJS as the package's one build is (scripts/build.mjs), for a Node
 * process a test starts. Returns the path of its index.js.
 */
export function transpileLibrary(to: string): string {
  rmSync(to, { recursive: true, force: true });
  transpileSources(SRC, to);
  writeFileSync(path.join(to, 'package.json'), '{ "type": "commonjs" }\n');
  return path.join(to, 'index.js');
}
