import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ensureBuilt } from '../reference-server/harness.js';

/**
 * `require` and `import` in one process, with the
 * built package: an app whose dependency `require()`s express-api-conventions
 * while the app `import`s it. There is one build (CommonJS, dist/cjs); the
 * ESM entry points (dist/esm) re-export its modules, so both ways reach the
 * same modules: one ApiError class, one StoreUnavailableError, and an error
 * made through one is rendered by the other's errorHandler() as itself
 * (40402), not as an unknown 404 (40400) or a 500.
 *
 * The script runs in a child `node` process, as a file inside the package,
 * so that `require('express-api-conventions/errors')` and
 * `import('express-api-conventions/errors')` resolve through the package's
 * own `exports` (its self-reference), as they would from node_modules.
 */

const ROOT = resolve(__dirname, '..', '..');
const SCRATCH = join(ROOT, '.tmp', `dual-package-${process.pid}`);

const SCRIPT = `
import { createRequire } from 'node:module';
import express from 'express';

const require = createRequire(import.meta.url);
const cjs = require('express-api-conventions/errors');
const esm = await import('express-api-conventions/errors');
const cjsStores = require('../../dist/cjs/stores/index.js');
const esmStores = await import('../../dist/esm/stores/index.js');

const app = express();
app.get('/v1/users/:id', () => {
  throw cjs.apiError('resourceNotFound');
});
app.get('/v1/taken', () => {
  throw cjs.apiError('uniqueKeyTaken', { message: 'The email is taken.', headers: { 'X-Trace': 'a' } });
});
app.get('/v1/store', () => {
  throw new cjsStores.StoreUnavailableError('RedisCounterStore', 'timed out');
});
app.use(esm.notFound(), esm.errorHandler({ production: true, log: false }));

const server = app.listen(0, '127.0.0.1');
await new Promise((done) => server.once('listening', done));
const base = 'http://127.0.0.1:' + server.address().port;
const answers = {};
for (const path of ['/v1/users/7', '/v1/taken', '/v1/store']) {
  const res = await fetch(base + path);
  answers[path] = {
    status: res.status,
    type: res.headers.get('content-type'),
    retryAfter: res.headers.get('retry-after'),
    trace: res.headers.get('x-trace'),
    body: await res.json(),
  };
}
server.close();

// The preset of one build, notFound() of the other: the routers inside the
// preset are still found for the 405's Allow.
const cjsRoot = require('express-api-conventions');
const tokenPaths = express.Router();
tokenPaths.post('/v1/oauth2/token', (_req, res) => res.json({}));
const mixed = express();
mixed.use(cjsRoot.conventions({ after: { tokenRouter: [tokenPaths] } }));
mixed.use(esm.notFound(), esm.errorHandler({ production: true, log: false }));
const mixedServer = mixed.listen(0, '127.0.0.1');
await new Promise((done) => mixedServer.once('listening', done));
const wrongMethod = await fetch('http://127.0.0.1:' + mixedServer.address().port + '/v1/oauth2/token', { method: 'PATCH' });
answers.innerRouter = { status: wrongMethod.status, allow: wrongMethod.headers.get('allow') };
await wrongMethod.arrayBuffer();
mixedServer.close();

const made = cjs.apiError('resourceNotFound');
process.stdout.write(JSON.stringify({
  oneClass: cjs.ApiError === esm.ApiError && made instanceof esm.ApiError,
  recognised: esm.isApiError(made),
  oneStoreClass: cjsStores.StoreUnavailableError === esmStores.StoreUnavailableError,
  answers,
}));
`;

beforeAll(async () => {
  await ensureBuilt();
  mkdirSync(SCRATCH, { recursive: true });
  writeFileSync(join(SCRATCH, 'app.mjs'), SCRIPT);
}, 180_000);

afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

describe('one process that both requires and imports the package', () => {
  it('renders an ApiError made through require() with the handler loaded through import', async () => {
    const { stdout } = await promisify(execFile)('node', [join(SCRATCH, 'app.mjs')], { cwd: ROOT, timeout: 30_000 });
    const result = JSON.parse(stdout);
    // One copy of each module: no dual-package hazard left to work around.
    expect(result.oneClass).toBe(true);
    expect(result.oneStoreClass).toBe(true);
    expect(result.recognised).toBe(true);
    expect(result.answers['/v1/users/7']).toEqual({
      status: 404,
      type: 'application/json; charset=utf-8',
      retryAfter: null,
      trace: null,
      body: { errors: [{ message: 'The resource does not exist.', code: 40402 }] },
    });
    expect(result.answers['/v1/taken']).toEqual({
      status: 409,
      type: 'application/json; charset=utf-8',
      retryAfter: null,
      trace: 'a',
      body: { errors: [{ message: 'The email is taken.', code: 40901 }] },
    });
    expect(result.answers['/v1/store']).toEqual({
      status: 503,
      type: 'application/json; charset=utf-8',
      retryAfter: '5',
      trace: null,
      body: { errors: [{ message: 'A shared state store is unreachable.', code: 50302 }] },
    });
    expect(result.answers.innerRouter).toEqual({ status: 405, allow: 'POST' });
  }, 40_000);
});
