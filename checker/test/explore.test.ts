import express, { type Express } from 'express';
import { conventions, errorHandler, notFound } from 'express-api-conventions';
import { firstItemId, linkTargets } from '../src/explore.js';
import { type CheckResult, type ConformanceReport, checkConventions } from '../src/index.js';

/**
 * Without `resource` (or `--resource`), the checker follows what the API
 * itself links before it gives up on a check: `Link` headers (rel=next
 * first), the `Location` of a 201, 202 or 3xx, paths in JSON bodies, and the
 * ids of a list's items.
 */

const UPDATED = new Date('2026-01-02T03:04:05Z');

interface Shape {
  /** What GET / answers. */
  root: 'json-links' | 'redirect' | 'link-header';
  /** Whether the first page of the list is empty, with a Link to the next. */
  pagedList?: boolean;
  /** A path that answers 401 with `WWW-Authenticate: Bearer` linked from the root. */
  protectedLink?: boolean;
}

/** A small API built with this library's preset, which links from its root to its users. */
function linkingApp(shape: Shape): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(conventions());
  app.get('/', (_req, res) => {
    if (shape.root === 'redirect') {
      res.redirect(302, '/v1/users');
      return;
    }
    if (shape.root === 'link-header') res.setHeader('Link', '</v1/users>; rel="collection"');
    res.json(
      shape.root === 'json-links'
        ? { users: '/v1/users', ...(shape.protectedLink ? { account: '/v1/accounts/current' } : {}) }
        : { service: 'users' },
    );
  });
  app.get('/v1/accounts/current', (_req, res) => {
    res.setHeader('WWW-Authenticate', 'Bearer error="invalid_token"');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Pragma', 'no-cache');
    res.status(401).json({ error: 'invalid_token' });
  });
  app.get('/v1/users', (req, res) => {
    if (shape.pagedList && req.query.offset === undefined) {
      res.setHeader('Link', '</v1/users?offset=20>; rel="next"');
      res.json({ users: [], hasNext: true });
      return;
    }
    // A 64-bit id written as a JSON number (JSON.parse() would round it), with its id_str as rule 2.9 asks.
    res
      .type('application/json; charset=utf-8')
      .send('{"users":[{"id":4611686018427387911,"id_str":"4611686018427387911","name":"Ada"}],"hasNext":false}');
  });
  app.get('/v1/users/:id', (req, res) => {
    if (req.params.id !== '4611686018427387911') {
      res.status(404).json({ errors: [{ message: 'No such user.', code: 40402 }] });
      return;
    }
    res.setHeader('Last-Modified', UPDATED.toUTCString());
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/json; charset=utf-8').send(`{"id":${req.params.id},"id_str":"${req.params.id}","name":"Ada"}`);
  });
  app.use(notFound(), errorHandler({ log: false }));
  return app;
}

const status = (report: ConformanceReport, id: string): CheckResult['status'] | undefined =>
  report.results.find((result) => result.id === id)?.status;

const NEED_A_RESOURCE = [
  'errors.method-not-allowed.status',
  'errors.method-not-allowed.allow',
  'caching.etag',
  'caching.last-modified',
  'caching.if-none-match',
  'caching.if-modified-since',
];

describe('checkConventions() given only a base URL', () => {
  it.each([
    ['paths in the JSON of its root', { root: 'json-links' }],
    ['a 302 Location', { root: 'redirect' }],
    ['a Link header', { root: 'link-header' }],
    ['a Link rel=next past an empty first page', { root: 'json-links', pagedList: true }],
  ] as const)('finds a resource through %s and runs the checks that need one', async (_how, shape) => {
    const report = await checkConventions(linkingApp(shape));
    expect(NEED_A_RESOURCE.map((id) => [id, status(report, id)])).toEqual(NEED_A_RESOURCE.map((id) => [id, 'pass']));
    expect(report.failures).toEqual([]);
  });

  it('finds the resource of the first list item by its exact 64-bit id', async () => {
    const paths: string[] = [];
    await checkConventions(linkingApp({ root: 'json-links' }), { onProgress: (_sent, _planned, request) => paths.push(request) });
    expect(paths.slice(0, 3)).toEqual(['GET /', 'GET /v1/users', 'GET /v1/express-api-conventions-no-such-route']);
    expect(paths).toContain('GET /v1/users/4611686018427387911');
  });

  it('takes a path that answers 401 with WWW-Authenticate: Bearer as the protected path', async () => {
    const report = await checkConventions(linkingApp({ root: 'json-links', protectedLink: true }));
    for (const id of ['auth.invalid-token.status', 'auth.invalid-token.headers', 'auth.invalid-token.body'])
      expect([id, status(report, id)]).toEqual([id, 'pass']);
  });

  it('skips those checks, saying what to give, with explore: false', async () => {
    const report = await checkConventions(linkingApp({ root: 'json-links' }), { explore: false });
    expect(NEED_A_RESOURCE.map((id) => [id, status(report, id)])).toEqual(NEED_A_RESOURCE.map((id) => [id, 'skip']));
    expect(report.results.find((result) => result.id === 'caching.etag')?.reason).toBe(
      'needs a resource URL: give --resource /v1/<collection>/<id>',
    );
    expect(report.requests).toBe(1);
  });

  it('counts progress against the planned requests, and the plan is what was sent', async () => {
    const calls: [number, number, string][] = [];
    const report = await checkConventions(linkingApp({ root: 'json-links', protectedLink: true }), {
      onProgress: (sent, planned, _request, phase) => calls.push([sent, planned, phase]),
    });
    expect(calls.map(([sent]) => sent)).toEqual(Array.from({ length: report.requests }, (_, i) => i + 1));
    expect(calls.every(([sent, planned]) => sent <= planned && planned <= 60)).toBe(true);
    // GET /, GET /v1/users (its first item is the resource) and GET /v1/accounts/current are exploring;
    // from then on the plan is exact: every later line counts against the number finally sent.
    expect(calls.map(([, , phase]) => phase)).toEqual([
      ...Array(3).fill('exploring'),
      ...Array(report.requests - 3).fill('checking'),
    ]);
    expect(calls.slice(3).every(([, planned]) => planned === report.requests)).toBe(true);
  });

  it('on an app that links nothing, says it is exploring, then counts against what it sends', async () => {
    const calls: [number, number, string][] = [];
    const app = express();
    app.get('/', (_req, res) => res.json({ name: 'nothing linked' }));
    const report = await checkConventions(app, {
      onProgress: (sent, planned, _request, phase) => calls.push([sent, planned, phase]),
    });
    expect(calls).toEqual([
      [1, expect.any(Number), 'exploring'],
      [2, report.requests, 'checking'],
    ]);
    expect(report.requests).toBe(2);
  });

  it('stays within a small budget: exploring takes at most a quarter of it', async () => {
    const paths: string[] = [];
    const report = await checkConventions(linkingApp({ root: 'json-links', pagedList: true }), {
      maxRequests: 8,
      onProgress: (_sent, _planned, request) => paths.push(request),
    });
    // Two to explore (the empty first page is as far as it gets), then the checks' own.
    expect(paths).toEqual(['GET /', 'GET /v1/users', 'GET /v1/express-api-conventions-no-such-route']);
    expect(report.results.filter((result) => /budget \(8\) was spent/.test(result.reason ?? ''))).toEqual([]);
    expect(report.requests).toBe(3);
  });
});

describe('firstItemId() and linkTargets()', () => {
  it.each([
    ['{"users":[{"id":4611686018427387911,"name":"a"}]}', '4611686018427387911'],
    ['{"users":[{"id":4611686018427387911,"id_str":"4611686018427387911"}]}', '4611686018427387911'],
    ['[{"id":"u-1"}]', 'u-1'],
    ['{"items":[{"name":"no id"}]}', undefined],
    ['{"users":[]}', undefined],
    ['<html>', undefined],
  ])('reads the id of the first item of %s', (body, id) => {
    expect(firstItemId(body)).toBe(id);
  });

  it('reads each target of a Link header with its rel', () => {
    expect(linkTargets('</v1/users?offset=20>; rel="next", </v1/users?offset=0>; rel=first; title="x"')).toEqual([
      { target: '/v1/users?offset=20', rel: 'next' },
      { target: '/v1/users?offset=0', rel: 'first' },
    ]);
  });
});

describe('the checker’s own probe paths', () => {
  it('are never linted, even when an answer links back to them', async () => {
    // An API whose 404 names the path asked for: the checker's missing-id probe is then "discovered".
    const app = express();
    app.disable('x-powered-by');
    app.use(conventions());
    app.get('/v1/users/:id', (req, res) => {
      res.status(404).json({ errors: [{ message: 'No such user.', code: 40402 }], self: req.path });
    });
    app.use(notFound(), errorHandler({ log: false }));
    const report = await checkConventions(app, { resource: '/v1/users/1' });
    const pathResults = report.results.filter((result) => result.id.startsWith('paths.'));
    expect(pathResults.length).toBeGreaterThan(0);
    expect(JSON.stringify(pathResults)).not.toContain('express-api-conventions-no-such-id');
  });
});
