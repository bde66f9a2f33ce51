import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';
import { DEMO } from '../../test/reference-server/client.js';
import { type RunningProcess, startServer } from '../../test/reference-server/harness.js';
import { runCli, USAGE } from '../src/cli.js';
import { type ConformanceReport, checkConventions } from '../src/index.js';
import { loadOpenApi, planFromOpenApi } from '../src/openapi-source.js';
import { compliantApp } from './fixtures/compliant-app.js';

/**
 * `--openapi`: the checker takes from an OpenAPI 3 document what it would
 * otherwise need one flag each for. Proven on the reference server's own
 * document (docs/openapi.yaml), against the started server.
 */

const ROOT = join(__dirname, '..', '..');
const REFERENCE_DOC = join(ROOT, 'docs', 'openapi.yaml');
const BASE = new URL('http://127.0.0.1:3000/');

describe('planFromOpenApi()', () => {
  it("takes every path, a resource, the protected GET, the token endpoint and the search from the reference server's document", async () => {
    const plan = planFromOpenApi(await loadOpenApi(REFERENCE_DOC), BASE);
    expect(plan).toEqual({
      // GETs without path parameters; the search needs `q`, which has no example, so it is only the reflect target.
      paths: [
        '/.well-known/oauth-authorization-server',
        '/v1/users',
        '/v1/me',
        '/v1/sessions',
        '/v1/sessions/current',
        '/v1/consents',
      ],
      lintPaths: [
        '/v1/oauth2/token',
        '/v1/oauth2/authorize',
        '/v1/oauth2/decisions',
        '/v1/oauth2/revocations',
        '/v1/oauth2/introspections',
        '/.well-known/oauth-authorization-server',
        '/v1/users',
        '/v1/users/search',
        '/v1/users/{id}',
        '/v1/me',
        '/v1/exports',
        '/v1/exports/{id}',
        '/v1/sessions',
        '/v1/sessions/current',
        '/v1/sessions/{id}',
        '/v1/consents',
        '/v1/consents/{id}',
      ],
      // No example id: filled at run time from the first item of GET /v1/users.
      resource: { template: '/v1/users/{id}', parameter: 'id', collection: '/v1/users' },
      protected: '/v1/me',
      tokenEndpoint: '/v1/oauth2/token',
      reflect: '/v1/users/search?q={probe}',
    });
  });

  it('reads the same plan from the JSON form of the document', async () => {
    const doc = parse(readFileSync(REFERENCE_DOC, 'utf8')) as Record<string, unknown>;
    expect(planFromOpenApi(await loadOpenApi(JSON.parse(JSON.stringify(doc))), BASE)).toEqual(
      planFromOpenApi(await loadOpenApi(REFERENCE_DOC), BASE),
    );
  });

  it('reads the document from an http URL, and refuses a URL that does not answer 200', async () => {
    const served = createServer((req, res) => {
      if (req.url !== '/openapi.yaml') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/yaml' }).end(readFileSync(REFERENCE_DOC));
    });
    await new Promise<void>((resolve) => served.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(served.address() as AddressInfo).port}`;
    try {
      expect(await loadOpenApi(`${origin}/openapi.yaml`)).toEqual(await loadOpenApi(REFERENCE_DOC));
      await expect(loadOpenApi(`${origin}/missing.yaml`)).rejects.toThrow(
        `\`openapi\` must be a URL that answers 200 (it answered 404); received "${origin}/missing.yaml".`,
      );
    } finally {
      await new Promise((resolve) => served.close(resolve));
    }
  });

  it("fills parameters from examples, and takes an oauth2 scheme's tokenUrl on the API's origin", async () => {
    const doc = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      components: {
        securitySchemes: {
          cookie: { type: 'apiKey', in: 'cookie', name: 'sid' },
          oauth: {
            type: 'oauth2',
            flows: { password: { tokenUrl: 'http://127.0.0.1:3000/v1/auth/tokens', scopes: {} } },
          },
        },
        parameters: { orderId: { name: 'orderId', in: 'path', required: true, schema: { type: 'string', example: 'A-7' } } },
      },
      paths: {
        '/v1/orders/{orderId}': { get: { parameters: [{ $ref: '#/components/parameters/orderId' }], responses: {} } },
        '/v1/orders': {
          get: {
            parameters: [{ name: 'status', in: 'query', required: true, example: 'open' }],
            responses: {},
          },
        },
        '/v1/orders/{orderId}/items': {
          get: { security: [{ oauth: [] }], parameters: [{ $ref: '#/components/parameters/orderId' }], responses: {} },
        },
        // Needs a session cookie, not a bearer token: not the invalid_token probe's target.
        '/v1/carts': { get: { security: [{ cookie: [] }], responses: {} } },
      },
    };
    expect(planFromOpenApi(await loadOpenApi(doc), BASE)).toEqual({
      paths: ['/v1/orders?status=open', '/v1/carts'],
      lintPaths: ['/v1/orders/{orderId}', '/v1/orders', '/v1/orders/{orderId}/items', '/v1/carts'],
      resource: { path: '/v1/orders/A-7' },
      protected: '/v1/orders/A-7/items',
      tokenEndpoint: '/v1/auth/tokens',
    });
  });

  it.each([
    [{ swagger: '2.0', paths: {} }, 'an OpenAPI 3 document'],
    [{ openapi: '3.1.0' }, 'an OpenAPI 3 document'],
    [join(ROOT, 'package.json'), 'an OpenAPI 3 document'],
    [join(ROOT, 'no-such-openapi.yaml'), 'a readable file (ENOENT)'],
  ])('refuses %j before any request', async (source, expected) => {
    const onProgress = jest.fn();
    await expect(checkConventions(compliantApp(), { openapi: source as never, onProgress })).rejects.toThrow(
      `checkConventions(options): \`openapi\` must be ${expected}`,
    );
    expect(onProgress).not.toHaveBeenCalled();
  });
});

describe('express-api-conventions-checker check <url> --openapi docs/openapi.yaml, against the reference server', () => {
  let server: RunningProcess;
  let report: ConformanceReport;
  let code: number;
  let stderr = '';

  beforeAll(async () => {
    server = await startServer({ RATE_LIMIT: '100000' });
    let stdout = '';
    code = await runCli(
      [
        'check',
        server.url,
        '--openapi',
        REFERENCE_DOC,
        '--origin',
        'http://localhost:5173',
        '--allow-writes',
        // What no document can say: which resource the run may change, and what a limited
        // token may not do (the write and 403 checks). The checker never picks data to
        // change by itself.
        '--disposable',
        '/v1/users/4611686018428387914',
        '--change',
        '{"name":"<Conformance Probe>"}',
        '--forbidden',
        '/v1/exports/0b6f2a52-3b8e-4d43-9a0e-41c1d5f7a7c1',
        '--limited-scope',
        'users:write',
        '--json',
      ],
      {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
        env: {
          EAC_CLIENT_ID: DEMO.clientId,
          EAC_CLIENT_SECRET: DEMO.clientSecret,
          EAC_USERNAME: DEMO.username,
          EAC_PASSWORD: DEMO.password,
        },
      },
    );
    report = JSON.parse(stdout);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('finds no failure', () => {
    expect(report.failures).toEqual([]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('runs at least 90 % of the checks', () => {
    const ran = report.results.filter((result) => result.status !== 'skip').length;
    expect(ran / report.results.length).toBeGreaterThanOrEqual(0.9);
  });

  it('skips no check for want of a path or an option: only what this run cannot provoke, or the API does not do', () => {
    const skipped = report.results.filter((result) => result.status === 'skip').map(({ id, reason }) => [id, reason]);
    expect(skipped).toEqual([
      ['common.location-on-3xx', 'no 3xx answer (other than 304) was seen'],
      ['security.clear-site-data', 'no Clear-Site-Data was seen (it is sent on sign-out)'],
      ['security.cookies', 'no Set-Cookie was seen'],
      ['limits.retry-after', 'no 429 was seen within the request budget'],
      // json.escape-angle-brackets runs: the search does not write `q` back, but the changed name
      // ("<Conformance Probe>") comes back as \u003CConformance Probe\u003E.
    ]);
  });

  it('counts its progress against the requests it plans, from the first request on', async () => {
    const calls: [number, number, string][] = [];
    const again = await checkConventions(server.url, {
      openapi: REFERENCE_DOC,
      origin: 'http://localhost:5173',
      onProgress: (sent, planned, request) => calls.push([sent, planned, request]),
    });
    expect(calls[0]).toEqual([1, again.requests, 'GET /v1/users']);
    expect(calls.every(([sent, planned]) => sent <= planned && planned === again.requests)).toBe(true);
    expect(again.failures).toEqual([]);
  });

  it("passes with --help's own example, run as written, and does not tell it to give --openapi", async () => {
    const example = /Example:\n {2}npx express-api-conventions-checker check http:\/\/127\.0\.0\.1:3000 \\\n(.*)\n/.exec(
      USAGE,
    )?.[1];
    expect(example).toBeDefined();
    const args = (example as string).trim().split(/\s+/);
    expect(args).toEqual(['--openapi', 'docs/openapi.yaml', '--origin', 'http://localhost:5173', '--allow-writes']);
    let stdout = '';
    const exit = await runCli(
      ['check', server.url, ...args.map((arg) => (arg === 'docs/openapi.yaml' ? REFERENCE_DOC : arg)), '--quiet'],
      {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: () => true },
        env: {},
      },
    );
    expect({ exit, failing: stdout.split('\n').filter((line) => line.startsWith('  FAIL')) }).toEqual({ exit: 0, failing: [] });
    // Without credentials the token checks want EAC_* variables: the hint names those, not --openapi.
    expect(stdout).toMatch(/\n\d+ checks were skipped for want of a path or an option: give the flag each reason names\.\n/);
  });

  it('ran the checks that need a resource, a protected path and the token endpoint', () => {
    const status = (id: string) => report.results.find((result) => result.id === id)?.status;
    for (const id of [
      'caching.if-none-match',
      'errors.method-not-allowed.allow',
      'cors.preflight.allow-origin',
      'auth.invalid-token.body',
      'auth.token.refresh',
      'paths.plural-nouns',
    ]) {
      expect([id, status(id)]).toEqual([id, 'pass']);
    }
  });
});

describe('the OAuth 2.0 metadata and endpoints beside the token endpoint of the conventions', () => {
  /** The compliant fixture, with RFC 8414 metadata that links the RFC 7009 and RFC 7662 endpoints. */
  function withMetadata() {
    const app = compliantApp();
    const server = createServer((req, res) => {
      if (req.url === '/.well-known/oauth-authorization-server') {
        const origin = `http://${req.headers.host}`;
        res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
        res.end(
          JSON.stringify({
            issuer: `${origin}/`,
            token_endpoint: `${origin}/v1/oauth2/token`,
            revocation_endpoint: `${origin}/v1/oauth2/revocations`,
            introspection_endpoint: `${origin}/v1/oauth2/introspections`,
            grant_types_supported: ['password', 'refresh_token'],
          }),
        );
        return;
      }
      app(req, res);
    });
    return server;
  }

  it('passes the path rules: well-known metadata, the token endpoint, revocations and introspections', async () => {
    const server = withMetadata();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const document = {
      openapi: '3.1.0',
      info: { title: 'metadata', version: '1' },
      paths: {
        '/.well-known/oauth-authorization-server': { get: { responses: { 200: { description: 'RFC 8414' } } } },
        '/v1/oauth2/token': { post: { responses: { 200: { description: 'tokens' } } } },
        '/v1/oauth2/revocations': { post: { responses: { 200: { description: 'RFC 7009' } } } },
        '/v1/oauth2/introspections': { post: { responses: { 200: { description: 'RFC 7662' } } } },
        '/v1/users': { get: { responses: { 200: { description: 'users' } } } },
      },
    };
    try {
      const report = await checkConventions(url, { openapi: document, paths: ['/.well-known/oauth-authorization-server'] });
      const paths = report.results.filter((result) => result.id.startsWith('paths.'));
      expect(paths.filter((result) => result.status === 'fail')).toEqual([]);
      expect(paths.find((result) => result.id === 'paths.plural-nouns')?.status).toBe('pass');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
