import { DEMO } from '../../test/reference-server/client.js';
import { type RunningProcess, startServer } from '../../test/reference-server/harness.js';
import { checkConventions } from '../src/index.js';

/**
 * The checker, run over HTTP against the started
 * reference server with every option it has, as docs/conformance.md
 * recommends them: not one check fails.
 */

let server: RunningProcess;

beforeAll(async () => {
  server = await startServer({ RATE_LIMIT: '100000' });
});

afterAll(async () => {
  await server?.stop();
});

/** Any export id: a token without the `exports` scope is refused before the export is looked up. */
const EXPORT = '/v1/exports/0b6f2a52-3b8e-4d43-9a0e-41c1d5f7a7c1';
/** The second seeded user: the run may change it (the server is this file's own). */
const DISPOSABLE = '/v1/users/4611686018428387914';

describe('express-api-conventions-checker check, against the reference server', () => {
  it('finds no failure, with writes, CORS, caching, tokens and a protected endpoint', async () => {
    const report = await checkConventions(server.url, {
      origin: 'http://localhost:5173',
      resource: '/v1/users/4611686018427387911',
      paths: ['/v1/users', '/v1/users/search?q=ali', '/v1/users?fields=summary&limit=2'],
      // Any bearer-protected URI answers a bad token with invalid_token; this one is a plural noun.
      protected: EXPORT,
      tokenEndpoint: '/v1/oauth2/token',
      forbidden: EXPORT,
      limitedScope: 'users:write',
      disposable: DISPOSABLE,
      // < and > in the new name: the answers show them escaped (JSON output escaping rule 2).
      change: { name: '<Conformance Probe>' },
      allowWrites: true,
      credentials: { clientId: DEMO.clientId, clientSecret: DEMO.clientSecret, username: DEMO.username, password: DEMO.password },
      onProgress: () => {},
    });
    expect(report.failures).toEqual([]);
    // What a black-box run cannot provoke on this server: a redirect, a cookie, a sign-out, a 429;
    // and, without --openapi, the read-back of a document (checker/test/openapi.test.ts gives it).
    expect(report.results.filter((result) => result.status === 'skip').map((result) => result.id)).toEqual([
      'common.location-on-3xx',
      'common.openapi-statuses',
      'common.openapi-headers',
      'security.clear-site-data',
      'security.cookies',
      'limits.retry-after',
    ]);
    expect(report.requests).toBeLessThanOrEqual(60);
  });
});
