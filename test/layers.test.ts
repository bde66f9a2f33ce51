import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * Layers without loops (docs/architecture.md): the folders of
 * src/ import each other along a graph with no cycle, the leaf layer
 * (src/http/) and the option checks (src/config/) import no other folder,
 * and so every module can use them.
 */

const SRC = resolve(__dirname, '../src');
// `import ... from '...'`, `export ... from '...'`, `import '...'` and `import('...')`.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The folder of src/ a file belongs to; a file at the top of src/ is its own node. */
const nodeOf = (file: string): string => relative(SRC, file).split(sep)[0] as string;

/** Folder → the folders it imports (relative imports only; packages are not folders of src/). */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = nodeOf(file);
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(SPECIFIER)) {
      const specifier = match[1] as string;
      if (!specifier.startsWith('.')) continue;
      const target = nodeOf(resolve(dirname(file), specifier));
      if (target !== from) edges.add(target);
    }
  }
  return graph;
}

/** A cycle of the graph as a path `a -> b -> a`, or undefined. */
function findCycle(graph: ReadonlyMap<string, ReadonlySet<string>>): string | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node].join(' -> ');
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of [...graph.keys()].sort()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('layers of src/', () => {
  const graph = folderGraph();

  it('reads the imports of every folder (the parser finds the known edges)', () => {
    expect(graph.get('errors')).toContain('http');
    expect(graph.get('caching')).toContain('errors');
    expect(graph.get('preset.ts')).toContain('caching');
  });

  it('has no folder that imports a folder importing it back, directly or through others', () => {
    expect(findCycle(graph)).toBeUndefined();
  });

  it('finds a cycle when there is one (the check itself can fail)', () => {
    const looped = new Map(graph);
    looped.set('http', new Set(['errors']));
    expect(findCycle(looped)).toMatch(/http -> errors -> http|errors -> http -> errors/);
  });

  it('keeps the leaf layer and config beneath everything: they import no other folder but config', () => {
    expect([...(graph.get('http') ?? [])].filter((to) => to !== 'config')).toEqual([]);
    expect([...(graph.get('config') ?? [])]).toEqual([]);
  });

  it('puts errors beneath the feature modules: it imports only the leaf layer, config and the stores (a store failure is a 503)', () => {
    expect([...(graph.get('errors') ?? [])].sort()).toEqual(['config', 'http', 'stores']);
  });

  it('keeps the stores beneath the error model: they import only the leaf layer and config', () => {
    expect([...(graph.get('stores') ?? [])].filter((to) => to !== 'config' && to !== 'http')).toEqual([]);
  });

  it('has each folder export its own names: an index re-exports no other folder but the leaf layer (src/http/)', () => {
    const borrowed = sourceFiles(SRC)
      .filter((file) => file.endsWith(`${sep}index.ts`) && relative(SRC, file) !== 'index.ts')
      .flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/\bexport\b[^;]*?\bfrom\s*['"]([^'"]+)['"]/g)]
          .map((match) => nodeOf(resolve(dirname(file), match[1] as string)))
          .filter((target) => target !== nodeOf(file) && target !== 'http' && target !== 'auth-context.js')
          .map((target) => `${relative(SRC, file)} -> ${target}`),
      );
    expect(borrowed).toEqual([]);
  });

  it('holds none of the checker, which is a package of its own (checker/): no folder of it, no import of it', () => {
    expect(graph.has('conformance')).toBe(false);
    const importing = sourceFiles(SRC).filter((file) =>
      [...readFileSync(file, 'utf8').matchAll(SPECIFIER)].some((match) =>
        /(^|\/)checker(\/|$)|express-api-conventions-checker/.test(match[1] as string),
      ),
    );
    expect(importing.map((file) => relative(SRC, file))).toEqual([]);
  });
});
