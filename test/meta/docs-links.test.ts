import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { ConfigurationError } from '../../src/config/index.js';
import { ensureBuilt } from '../reference-server/harness.js';
import { docSourceFiles } from '../support/docs.js';

/**
 * Docs a user can reach: the package ships README.md and CHANGELOG.md and no
 * docs/, so those two link the pages by their address in the repository
 * (package.json `homepage`), and every link of them and of docs/**.md points
 * at a file of the repository; the code blocks are the ones
 * scripts/check-docs.mjs compiles. Nothing, in the docs or in the source,
 * cites a document the repository does not hold (docs/design.md principle 10).
 */

const REPOSITORY = 'https://github.com/express-api-conventions/express-api-conventions/';
const BLOB = `${REPOSITORY}blob/main/`;
const RAW = 'https://raw.githubusercontent.com/express-api-conventions/express-api-conventions/main/';
const tracked: ReadonlySet<string> = new Set(execFileSync('git', ['ls-files'], { encoding: 'utf8' }).split('\n'));

/** The files `npm pack` puts in the tarball, as it stands (dist/ as last built). */
const packedFiles = (): string[] =>
  (
    JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' })) as {
      files: { path: string }[];
    }[]
  )[0]?.files.map((file) => file.path) ?? [];
const packed: ReadonlySet<string> = new Set(packedFiles());

const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
  );
const walkSource = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walkSource(join(dir, entry.name)) : /\.[cm]?ts$/.test(entry.name) ? [join(dir, entry.name)] : [],
  );
/** The pages the package ships: read on npm too, so they link the repository by its address. */
const shipped: ReadonlySet<string> = new Set(['README.md', 'CHANGELOG.md']);
const pages = [...shipped, 'CONTRIBUTING.md', ...walk('docs')];
/** Source whose comments and TSDoc a reader follows: the library's, the checker's, the reference server's. */
const sources = [
  ...walkSource('src'),
  ...walkSource(join('authorization-server', 'src')),
  ...walkSource(join('checker', 'src')),
  ...walkSource(join('examples', 'server', 'src')),
];
/** What else a reader opens: the reference server's README and the API descriptions. */
const described = [
  join('examples', 'server', 'README.md'),
  join('docs', 'openapi.yaml'),
  join('examples', 'server', 'openapi.base.yaml'),
];

/** A document outside the repository: the conventions' source text, the starting design, the style notes. */
const OUTSIDE = /\b(?:SPEC|DESIGN|STYLE)\.md\b|\.\.\/shared\//g;

/** Link targets of a page, outside code blocks and code spans. */
function links(markdown: string): string[] {
  const prose = markdown.replace(/^ *```[\s\S]*?^ *```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)|href="([^"]+)"/g)].map((match) => (match[1] ?? match[2]) as string);
}

/** A link of the README to the repository, as the relative link it stands for (`docs/x.md#y`). */
const inRepository = (target: string): string | undefined =>
  target.startsWith(BLOB) ? target.slice(BLOB.length) : target.startsWith(RAW) ? target.slice(RAW.length) : undefined;

const relative = pages.flatMap((page) =>
  links(readFileSync(page, 'utf8'))
    .map((target) => (shipped.has(page) ? (inRepository(target) ?? target) : target))
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'))
    .map((target) => [page, target, normalize(join(dirname(page), decodeURI(target.split('#')[0] as string)))] as const),
);

describe('the links of README.md, CHANGELOG.md and docs/', () => {
  it('reads some links (the scan works)', () => {
    expect(relative.length).toBeGreaterThan(20);
  });

  it('ships README.md and no page of docs/ (they are read in the repository)', () => {
    expect(packed.has('README.md')).toBe(true);
    expect([...packed].filter((file) => file.startsWith('docs/'))).toEqual([]);
  });

  it('ships CHANGELOG.md, not CONTRIBUTING.md (notes for those who work on the package)', () => {
    expect(packed.has('CHANGELOG.md')).toBe(true);
    expect(tracked.has('CONTRIBUTING.md')).toBe(true);
    expect(packed.has('CONTRIBUTING.md')).toBe(false);
  });

  it.each([...shipped])('gives %s no relative link: it is read on npm too, where those do not resolve', (page) => {
    const local = links(readFileSync(page, 'utf8')).filter(
      (target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'),
    );
    expect(local).toEqual([]);
  });

  it('points every link to the repository at a file of it', () => {
    expect(relative.length).toBeGreaterThan(5);
    const broken = relative.filter(([, , file]) => !tracked.has(file)).map(([page, target]) => `${page}: ${target}`);
    expect(broken).toEqual([]);
  });

  it('points every anchor at a heading of the page it names', () => {
    const slugs = (page: string): Set<string> =>
      new Set(
        readFileSync(page, 'utf8')
          .replace(/^ *```[\s\S]*?^ *```/gm, '')
          .split('\n')
          .filter((line) => /^#{1,6} /.test(line))
          .map((line) =>
            line
              .replace(/^#+ /, '')
              .trim()
              .toLowerCase()
              .replace(/[^\p{L}\p{N}\s_-]/gu, '')
              .replace(/\s/g, '-'),
          ),
      );
    const anchored = pages.flatMap((page) =>
      links(readFileSync(page, 'utf8'))
        .map((target) => (shipped.has(page) ? (inRepository(target) ?? target) : target))
        .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && target.includes('#'))
        .map((target) => {
          const [file, anchor] = target.split('#') as [string, string];
          return { page, target, file: file === '' ? page : normalize(join(dirname(page), file)), anchor };
        })
        .filter(({ file }) => file.endsWith('.md')),
    );
    expect(anchored.length).toBeGreaterThan(5);
    const broken = anchored
      .filter(({ file, anchor }) => !slugs(file).has(anchor))
      .map(({ page, target }) => `${page}: ${target}`);
    expect(broken).toEqual([]);
  });

  it('points no link outside the package (../shared, SPEC.md, DESIGN.md)', () => {
    const outside = pages.flatMap((page) =>
      links(readFileSync(page, 'utf8'))
        .filter((target) => /(^|\/)(SPEC|DESIGN|STYLE|reference-server)\.md/.test(target) || target.includes('shared/'))
        .map((target) => `${page}: ${target}`),
    );
    expect(outside).toEqual([]);
  });
});

describe('documents the repository does not hold', () => {
  /** Each mention of an outside document in a file, as `file:line: text`. */
  const mentions = (file: string): string[] =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, index) => (line.match(OUTSIDE) ?? []).map((name) => `${file}:${index + 1}: ${name}`));

  it('reads the source of both packages and every page (the scan works)', () => {
    expect(sources.length).toBeGreaterThan(100);
    expect(sources).toContain(join('checker', 'src', 'causes.ts'));
    expect('see SPEC.md, ../shared/x and DESIGN.md principle 8'.match(OUTSIDE)).toEqual(['SPEC.md', '../shared/', 'DESIGN.md']);
  });

  it.each(['src', join('authorization-server', 'src'), join('checker', 'src'), join('examples', 'server', 'src')])(
    'are cited nowhere in the comments or TSDoc of %s/',
    (dir) => {
      expect(sources.filter((file) => file.startsWith(`${dir}/`)).flatMap(mentions)).toEqual([]);
    },
  );

  it('are named on no page: README.md, CHANGELOG.md, CONTRIBUTING.md, docs/, the API descriptions', () => {
    expect([...pages, ...described].flatMap(mentions)).toEqual([]);
  });

  it('leaves no page of docs/ that the source cites missing', () => {
    const cited = sources.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\bdocs\/[\w./-]*\w\.(?:md|yaml)\b/g)].map((match) => [file, match[0]] as const),
    );
    expect(cited.length).toBeGreaterThan(50);
    expect(cited.filter(([, page]) => !tracked.has(page)).map(([file, page]) => `${file}: ${page}`)).toEqual([]);
  });
});

describe('tests the source and the docs name', () => {
  /** The package a file belongs to, whose own `test/` a bare `test/...` in it may name. */
  const packageOf = (file: string): string =>
    ['checker/', 'authorization-server/', 'examples/server/'].find((root) => file.startsWith(root)) ?? '';
  const readme = ['checker/README.md', 'authorization-server/README.md'].filter((file) => tracked.has(file));
  const named = [...sources, ...pages, ...described, ...readme].flatMap((file) =>
    [
      ...readFileSync(file, 'utf8').matchAll(
        /(?<![\w.-])(?:(?:checker|authorization-server|examples\/server)\/)?test\/[\w./-]*\w\.(?:ts|mjs|cjs|js)\b/g,
      ),
    ].map((match) => [file, match[0]] as const),
  );

  it('reads some (the scan works)', () => {
    expect(named.length).toBeGreaterThan(10);
  });

  it('are files of the repository, at the path given or in the package of the file that names them', () => {
    const missing = named.filter(([file, path]) => !tracked.has(path) && !tracked.has(`${packageOf(file)}${path}`));
    expect(missing.map(([file, path]) => `${file}: ${path}`)).toEqual([]);
  });
});

describe('configuration errors cite a page the user can open', () => {
  it('links the section of docs/configuration-errors.md in the repository', () => {
    const message = new ConfigurationError('EAC_OPTION_UNKNOWN', 'f(options): x.').message;
    const path = new RegExp(`see ${BLOB.replaceAll('.', '\\.')}([^#\\]]+)#eac_option_unknown\\]`).exec(message)?.[1];
    expect(path).toBe('docs/configuration-errors.md');
    expect(tracked.has(path as string)).toBe(true);
    expect(REPOSITORY).toBe(`${JSON.parse(readFileSync('package.json', 'utf8')).homepage.replace(/#readme$/, '')}/`);
  });
});

describe('package.json', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8'));

  it('says where the project lives', () => {
    expect(pkg.repository.url).toMatch(/^git\+https:\/\/github\.com\/.+\.git$/);
    expect(pkg.homepage).toMatch(/^https:\/\//);
    expect(pkg.bugs.url).toMatch(/^https:\/\/.+\/issues$/);
  });

  it('makes redis an optional peer dependency, not a dependency', () => {
    expect(pkg.dependencies.redis).toBeUndefined();
    expect(pkg.peerDependencies.redis).toBeDefined();
    expect(pkg.peerDependenciesMeta.redis).toEqual({ optional: true });
  });

  // The build emits no source maps (scripts/build.mjs): a map or a
  // sourceMappingURL comment would point a debugger at sources not shipped.
  it('ships built JavaScript that names no source map, and no map', async () => {
    await ensureBuilt();
    const files = packedFiles();
    const emitted = files.filter((file) => /^dist\/.*\.(js|d\.ts)$/.test(file));
    expect(emitted.length).toBeGreaterThan(0);
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
    expect(emitted.filter((file) => readFileSync(file, 'utf8').includes('sourceMappingURL'))).toEqual([]);
  });
});

describe('the code blocks of README.md and docs/', () => {
  const files = docSourceFiles();

  it('are all TypeScript the docs check compiles', () => {
    expect(Object.keys(files).length).toBeGreaterThan(25);
  });

  it.each(Object.entries(files))('%s mounts the preset at most once', (_name, source) => {
    expect(source.match(/\bconventions\(/g)?.length ?? 0).toBeLessThanOrEqual(1);
  });
});
