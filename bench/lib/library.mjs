// The library under test, as a service imports it: the build in dist/ (or
// BENCH_LIBRARY, which the smoke test points at a fresh transpile of src/).
// loadLibrary() gives one object with the names of the root and of every
// subpath (the bench apps use the preset and the stores alike), plus the
// internal the micro benchmarks measure directly; loadAuthorizationServer()
// gives the token service's package.
import { pathToFileURL } from 'node:url';

const given = process.env.BENCH_LIBRARY;
export const LIBRARY_URL = given
  ? /^[a-z]+:/.test(given)
    ? given
    : pathToFileURL(given).href
  : new URL('../../dist/esm/index.js', import.meta.url).href;

/** Where the CommonJS modules are: dist/cjs, or the smoke test's transpile itself. */
const MODULES_URL = given ? LIBRARY_URL : new URL('../../dist/cjs/index.js', import.meta.url).href;

const SUBPATHS = [
  'json',
  'errors',
  'service',
  'request',
  'lint',
  'caching',
  'cors',
  'security',
  'rate-limit',
  'stores',
  'oauth2',
];

export async function loadLibrary() {
  const root = await libraryAt(LIBRARY_URL);
  const internal = (path) => import(new URL(path, MODULES_URL).href);
  const { bodyEntityTag } = await internal('./caching/entity-tag.js');
  return Object.assign(root, { bodyEntityTag });
}

/** The names of the root and of every subpath of the build whose ESM entry is at `url` (another build, to compare). */
export async function libraryAt(url) {
  const entries = await Promise.all(SUBPATHS.map((subpath) => import(new URL(`./${subpath}/index.js`, url).href)));
  return Object.assign({}, ...entries, await import(url));
}

/**
 * The authorization server, a package of its own (built in
 * authorization-server/dist, on the library's build), with the internal the
 * store-memory benchmark measures: its names plus `hashRefreshToken`.
 */
export async function loadAuthorizationServer() {
  const server = await import('express-api-conventions-authorization-server');
  const { hashRefreshToken } = await import(new URL('../../authorization-server/dist/cjs/stores.js', import.meta.url).href);
  return { ...server, hashRefreshToken };
}
