// The library under test, as a service imports it: the build in dist/ (or
// BENCH_LIBRARY, which the smoke test points at a fresh transpile of src/).
export const LIBRARY_URL = process.env.BENCH_LIBRARY ?? new URL('../../dist/esm/index.js', import.meta.url).href;

export const loadLibrary = () => import(LIBRARY_URL);
