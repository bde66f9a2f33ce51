import { checkConventions } from '../../src/conformance/index.js';
import { DEMO } from './client.js';
import { type RunningProcess, startServer } from './harness.js';

/**
 * The library's own conformance checker, run over HTTP against the started
 * reference server with every option it has: not one check fails.
 */

let server: RunningProcess;

beforeAll(async () => {
  server = await startServer({ RATE_LIMIT: '100000' });
});

afterAll(async () => {
  await server?.stop();
});

describe('express-api-conventions check, against the reference server', () => {
  it('finds no failure, with writes, CORS, caching, tokens and a protected endpoint', async () => {
    const report = await checkConventions(server.url, {
      origin: 'http://localhost:5173',
      resource: '/v1/users/4611686018427387911',
      paths: ['/v1/users', '/v1/users/search?q=ali', '/v1/users?fields=summary&limit=2'],
      // Any bearer-protected URI answers a bad token with invalid_token; this one is a plural noun.
      protected: '/v1/exports/0b6f2a52-3b8e-4d43-9a0e-41c1d5f7a7c1',
      tokenEndpoint: '/v1/oauth2/token',
      allowWrites: true,
      credentials: { clientId: DEMO.clientId, clientSecret: DEMO.clientSecret, username: DEMO.username, password: DEMO.password },
      onProgress: () => {},
    });
    expect(report.failures).toEqual([]);
    expect(report.summary.pass).toBeGreaterThan(30);
  });
});
