import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * Layers without loops (docs/architecture.md): the folders of src/ import
 * each other along a graph with no cycle, and so do its files, type-only
 * imports included; the leaf layer (src/http/) and the option checks
 * (src/config/) import no other folder and load no package, so every module
 * can use them.
 */

const ROOT = resolve(__dirname, '../..');
const SRC = join(ROOT, 'src');
const CHECKER_SRC = join(ROOT, 'checker/src');
// One import of a file: a statement at the start of a line (`import`, `import type`,
// `export … from`, `import '…'`; group 1 marks a type-only one, group 2 is the
// specifier), or a call (`import('…')`, `require('…')`; group 3).
const IMPORT =
  /^(?:import|export)\s+(type\s+)?(?:[^;'"]*?\bfrom\s*)?['"]([^'"]+)['"]|\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]/gm;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The folder of src/ a file belongs to; a file at the top of src/ is its own node. */
const nodeOf = (file: string): string => relative(SRC, file).split(sep)[0] as string;

/** The source file a relative specifier names (`./x.js` is `./x.ts`; a folder is its index.ts). */
function resolveSource(from: string, specifier: string): string {
  const target = resolve(dirname(from), specifier);
  if (existsSync(target) && statSync(target).isDirectory()) return join(target, 'index.ts');
  return target.replace(/\.js$/, '.ts');
}

interface Import {
  readonly specifier: string;
  readonly typeOnly: boolean;
}

/** Every import of one file, of a package or of a file. */
const importsOf = (file: string): Import[] =>
  [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((match) => ({
    specifier: (match[2] ?? match[3]) as string,
    typeOnly: match[1] !== undefined,
  }));

/** The files of the tree one file imports (packages are not files of the tree). */
const filesImportedBy = (file: string): string[] =>
  importsOf(file)
    .filter(({ specifier }) => specifier.startsWith('.'))
    .map(({ specifier }) => resolveSource(file, specifier));

/** File → the files it imports, type-only imports included, as paths relative to the repository. */
function fileGraph(dir: string): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(dir)) {
    graph.set(relative(ROOT, file), new Set(filesImportedBy(file).map((target) => relative(ROOT, target))));
  }
  return graph;
}

/** Folder → the folders it imports (relative imports only; packages are not folders of src/). */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = nodeOf(file);
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const target of filesImportedBy(file)) {
      if (nodeOf(target) !== from) edges.add(nodeOf(target));
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

/**
 * One circle of each strongly connected part of the graph (Tarjan's
 * algorithm), as `a -> b -> a`: every knot is reported, not only the first.
 */
function cyclesOf(graph: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const parts: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const part: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      part.push(member);
    } while (member !== node);
    if (part.length > 1 || graph.get(node)?.has(node)) parts.push(part);
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return parts.map((part) => {
    const members = new Set(part);
    const inside = new Map(part.map((node) => [node, new Set([...(graph.get(node) ?? [])].filter((to) => members.has(to)))]));
    return findCycle(inside) as string;
  });
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

  it('puts errors beneath the feature modules: it imports only the leaf layer, config, the stores (a store failure is a 503) and the security events (every refusal is one)', () => {
    expect([...(graph.get('errors') ?? [])].sort()).toEqual(['config', 'events', 'http', 'stores']);
  });

  it('keeps the security events a leaf: every folder may publish, and events/ imports no other folder', () => {
    expect([...(graph.get('events') ?? [])]).toEqual([]);
  });

  it('keeps the stores beneath the error model: they import only the leaf layer and config', () => {
    expect([...(graph.get('stores') ?? [])].filter((to) => to !== 'config' && to !== 'http')).toEqual([]);
  });

  it('has each folder export its own names: an index re-exports no other folder but the leaf layer (src/http/)', () => {
    const borrowed = sourceFiles(SRC)
      // extend/ is the kit for extension packages: it gathers helpers of several folders on purpose (docs/extend.md).
      .filter(
        (file) => file.endsWith(`${sep}index.ts`) && !['index.ts', join('extend', 'index.ts')].includes(relative(SRC, file)),
      )
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
      importsOf(file).some(({ specifier }) => /(^|\/)checker(\/|$)|express-api-conventions-checker/.test(specifier)),
    );
    expect(importing.map((file) => relative(SRC, file))).toEqual([]);
  });
});

describe('files of src/ and checker/src/', () => {
  const files = fileGraph(SRC);

  it('reads every import of a file: `import type`, `export … from`, `require()` (the parser finds the known edges)', () => {
    expect(files.get('src/oauth2/bearer-auth.ts')).toContain('src/oauth2/bearer-auth-options.ts');
    expect(files.get('src/json/index.ts')).toContain('src/json/ids.ts');
    expect(files.get('src/preset.ts')).toContain('src/oauth2/bearer-auth.ts');
    expect(files.get('src/index.ts')).toContain('src/json/index.ts');
  });

  it('has no file of src/ that imports a file importing it back, directly or through others, type-only imports included', () => {
    expect(cyclesOf(files)).toEqual([]);
  });

  it('has no such circle between the files of the authorization server', () => {
    expect(cyclesOf(fileGraph(join(ROOT, 'authorization-server/src')))).toEqual([]);
  });

  it('has no such circle between the files of the checker', () => {
    expect(cyclesOf(fileGraph(CHECKER_SRC))).toEqual([]);
  });

  it('finds every circle, one closed by a type-only import too (the check itself can fail)', () => {
    const looped = new Map(files);
    looped.set('src/http/response-state.ts', new Set(['src/http/json-output/writer.ts']));
    looped.set('src/config/options.ts', new Set(['src/config/options.ts']));
    expect(cyclesOf(looped)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^src\/http\/.* -> src\/http\/response-state\.ts -> .*src\/http\/json-output\/writer\.ts/),
        'src/config/options.ts -> src/config/options.ts',
      ]),
    );
  });

  it('keeps the leaf layer and config free of packages: only node: modules and type-only imports (no express-rate-limit beneath everything)', () => {
    const loaded = sourceFiles(join(SRC, 'http'))
      .concat(sourceFiles(join(SRC, 'config')))
      .flatMap((file) =>
        importsOf(file)
          .filter(({ specifier, typeOnly }) => !specifier.startsWith('.') && !specifier.startsWith('node:') && !typeOnly)
          .map(({ specifier }) => `${relative(ROOT, file)} -> ${specifier}`),
      );
    expect(loaded).toEqual([]);
  });

  it('has src/http/README.md name each file of the leaf layer, and no file it does not hold', () => {
    const held = sourceFiles(join(SRC, 'http')).map((file) => relative(join(SRC, 'http'), file).split(sep).join('/'));
    const named = [...readFileSync(join(SRC, 'http/README.md'), 'utf8').matchAll(/`([\w./-]+\.ts)`/g)].map((match) => match[1]);
    expect([...new Set(named)].sort()).toEqual(held.sort());
  });
});

/** Every workspace package's sources, and the reference server's, which readers copy. */
const PACKAGES = ['src', 'checker/src', 'authorization-server/src', 'examples/server/src'];

/** The folder graph of one package: each file stands for its top folder (or itself, at the top), type-only imports included. */
function foldersOf(files: ReadonlyMap<string, ReadonlySet<string>>, dir: string): Map<string, Set<string>> {
  const node = (file: string): string => relative(dir, file).split(sep)[0] as string;
  const graph = new Map<string, Set<string>>();
  for (const [file, imported] of files) {
    const edges = graph.get(node(file)) ?? new Set<string>();
    for (const target of imported) if (node(target) !== node(file)) edges.add(node(target));
    graph.set(node(file), edges);
  }
  return graph;
}

/** The workspace packages beside the library: each reaches it by its package name, as docs/architecture.md ("One way for sibling packages") says. */
const SIBLINGS = ['checker/src', 'authorization-server/src'];

describe.each(SIBLINGS)('the sources of %s/', (dir) => {
  it('import no file outside their package: the library only by its entry points', () => {
    const files = fileGraph(join(ROOT, dir));
    const outside = [...files].flatMap(([file, imported]) =>
      [...imported].filter((target) => relative(dir, target).startsWith('..')).map((target) => `${file} -> ${target}`),
    );
    expect(files.size).toBeGreaterThan(5);
    expect(outside).toEqual([]);
  });
});

describe.each(PACKAGES)('the layers of %s/', (dir) => {
  const files = fileGraph(join(ROOT, dir));

  it('are read (the parser finds the files and their imports)', () => {
    expect(files.size).toBeGreaterThan(5);
    expect([...files.values()].some((imported) => imported.size > 0)).toBe(true);
  });

  it('have no file that imports a file importing it back, type-only imports included', () => {
    expect(cyclesOf(files)).toEqual([]);
  });

  it('have no folder that imports a folder importing it back', () => {
    expect(cyclesOf(foldersOf(files, dir))).toEqual([]);
  });
});
