import { type CheckResult, type ConformanceReport, checkConventions } from '../src/index.js';
import { ALLOWED_ORIGIN } from './fixtures/compliant-app.js';
import { PEER_STACK, peerStackApp } from './fixtures/peer-stack.js';

/**
 * The checker, run with every option docs/conformance.md
 * recommends, against the hand-assembled stack (helmet, cors,
 * express-rate-limit, @node-oauth/oauth2-server, method-override and a
 * users resource with 64-bit ids, each wired the way its README shows),
 * reports exactly the rules that stack breaks.
 */

const OPTIONS = {
  origin: ALLOWED_ORIGIN,
  resource: `/v1/users/${PEER_STACK.ids.first}`,
  paths: ['/v1/users'],
  protected: '/v1/users/me',
  tokenEndpoint: '/v1/oauth2/token',
  reflect: '/v1/users/search?q={probe}',
  forbidden: '/v1/exports/1',
  limitedScope: 'users:write',
  disposable: `/v1/users/${PEER_STACK.ids.disposable}`,
  change: { name: 'Conformance probe' },
  allowWrites: true,
  credentials: { ...PEER_STACK.client, ...PEER_STACK.user },
} as const;

let report: ConformanceReport;
beforeAll(async () => {
  report = await checkConventions(peerStackApp(), OPTIONS);
});

const byId = (id: string): CheckResult => {
  const found = report.results.find((result) => result.id === id);
  if (!found) throw new Error(`no result for ${id}`);
  return found;
};

describe('checkConventions() on the hand-assembled stack', () => {
  it('reports exactly the rules the stack breaks', () => {
    expect(report.failures.map((failure) => failure.id)).toEqual([
      // Common response behaviour: none broken.
      // Conventions for every resource (the hand-written user representation)
      'resource.key-case',
      'resource.timestamp-suffix',
      'resource.no-resource-prefix',
      'resource.date-time',
      'resource.gender',
      'resource.flat',
      'resource.large-integers',
      'resource.has-next',
      // Common query parameters: ignored by the route
      'query.limit',
      'query.has-next-while-more',
      'query.invalid-paging',
      'query.fields',
      'query.fields-unknown',
      // Methods: method-override reads `_method` from the query string, not the form body
      'methods.override-form',
      // Errors: Express's HTML final handler, and the adapter's empty 401
      'errors.not-found.json',
      'errors.not-found.body',
      'errors.method-not-allowed.status',
      'errors.method-not-allowed.allow',
      'errors.method-not-allowed.json',
      'errors.method-not-allowed.body',
      'errors.json-bodies',
      'errors.body-shape',
      // Security response headers: helmet's defaults
      'security.hsts',
      'security.csp',
      'security.frame-options',
      'security.coep',
      'security.cache-control',
      // CORS: cors's 204 preflight
      'cors.preflight.status',
      'cors.preflight.content-type',
      'cors.preflight.max-age',
      // Caching: the PATCH does not move Last-Modified
      'caching.changed',
      // Authentication: oauth2-server's answers and the model's token
      'auth.token.response',
      'auth.token.expires-in',
      'auth.token.refresh-token',
      'auth.token.no-pragma',
      'auth.token.client-optional',
      'auth.invalid-token.headers',
      // Path rules: helmet's X-Download-Options
      'paths.no-x-prefix',
      // JSON output escaping: res.json() writes < and > raw
      'json.escape-angle-brackets',
    ]);
  });

  // Each rule the stack breaks, and the checks that observe it: every one reports the stack broken.
  it.each([
    ['Large integers', ['resource.large-integers']],
    [
      'Resource key conventions',
      [
        'resource.key-case',
        'resource.timestamp-suffix',
        'resource.no-resource-prefix',
        'resource.date-time',
        'resource.gender',
        'resource.flat',
      ],
    ],
    ['Paging', ['resource.has-next', 'query.limit', 'query.has-next-while-more', 'query.invalid-paging']],
    ['Field selection', ['query.fields', 'query.fields-unknown']],
    ['Errors', ['errors.body-shape']],
    [
      'Token endpoint',
      ['auth.token.client-optional', 'auth.token.no-pragma', 'auth.token.expires-in', 'auth.token.refresh-token'],
    ],
    ['Conditional requests', ['caching.changed']],
    ['Method override', ['methods.override-form']],
  ])('reports the issue’s rule “%s” broken', (_rule, ids) => {
    for (const id of ids) expect(byId(id).status).toBe('fail');
  });

  it('stays inside the request budget', () => {
    expect(report.requests).toBe(31);
    expect(report.requests).toBeLessThanOrEqual(60);
  });

  it('compares the digits of id, read from the body text, with id_str', () => {
    expect(byId('resource.large-integers').evidence).toEqual({
      request: 'GET /v1/users -> 200 (and 12 more)',
      expected: '"id": <digits> beside "id_str": "<the same digits>"',
      seen: 'users[].id: "id": 7530173704672641000 beside "id_str": "7530173704672641025"',
    });
  });

  it('reads the key conventions on the bodies it already received', () => {
    const seen = (id: string) => byId(id).evidence?.seen;
    expect(seen('resource.key-case')).toBe('users[].full_name: "full_name" is not camelCase; write "fullName".');
    expect(seen('resource.timestamp-suffix')).toBe(
      'users[].created: "created" holds a timestamp; timestamp keys end in "At", such as "createdAt".',
    );
    expect(seen('resource.no-resource-prefix')).toBe(
      'users[].userEmail: "userEmail" repeats the resource name "user"; write "email".',
    );
    expect(seen('resource.date-time')).toBe(
      'users[].updatedAt: "updatedAt" is "2026-01-02 03:04:05"; write an RFC 3339 date-time such as 2026-01-31T09:30:00Z.',
    );
    expect(seen('resource.gender')).toBe('users[].gender: "gender" is "M"; its value is "male" or "female".');
    expect(seen('resource.flat')).toBe('"users[].address" is a nested object whose structure occurs once');
    expect(seen('resource.has-next')).toBe('hasNext (absent)');
  });

  it('sends limit, malformed paging and fields, and sees them ignored', () => {
    expect(byId('query.limit').evidence).toEqual({
      request: 'GET /v1/users?limit=1 -> 200',
      expected: 'status 200 with at most 1 item',
      seen: 'status 200 with 3 items in "users"',
    });
    expect(byId('query.has-next-while-more').evidence?.seen).toBe('hasNext (absent)');
    expect(byId('query.invalid-paging').evidence).toEqual({
      request: 'GET /v1/users?limit=abc -> 200 (and 2 more of 3)',
      expected: 'status 400 with a JSON { errors: [{ message, code }] } body',
      seen: 'status 200',
    });
    expect(byId('query.fields').evidence).toMatchObject({
      request: 'GET /v1/users?fields=full_name -> 200',
      expected: 'status 200, every item holding only "full_name"',
    });
    expect(byId('query.fields-unknown').evidence?.request).toBe('GET /v1/users?fields=eacNoSuchField -> 200');
  });

  it("fails the adapter's empty 401 on the error body shape, and passes 401 and 403 themselves", () => {
    const shape = report.failures.find((failure) => failure.id === 'errors.body-shape');
    expect(shape?.evidence?.expected).toBe('a JSON object { errors: [{ message: string, code: integer }, ...] }');
    expect(byId('errors.json-bodies').evidence?.request).toBe(
      'GET /v1/express-api-conventions-no-such-route -> 404 (and 3 more)',
    );
    for (const id of ['auth.missing-credential', 'auth.invalid-token.status', 'auth.insufficient-rights']) {
      expect(byId(id).status).toBe('pass');
    }
  });

  it("fails oauth2-server's token answers: client authentication required, Pragma on the 200, no expires_in, no refresh token", () => {
    expect(byId('auth.token.client-optional').evidence).toEqual({
      request: 'POST /v1/oauth2/token -> 400 (grant_type=password, no client credentials)',
      expected: 'status 200 with an access_token',
      seen: 'status 400 with error "invalid_client"',
    });
    expect(byId('auth.token.no-pragma').evidence?.seen).toBe('Pragma "no-cache"');
    expect(byId('auth.token.expires-in').evidence?.seen).toBe('expires_in (absent)');
    expect(byId('auth.token.refresh-token').evidence?.seen).toBe(
      '{ access_token: string, token_type: "Bearer", expires_in: (absent), refresh_token: (absent) }',
    );
    // Pragma on the token endpoint is judged once, by auth.token.no-pragma.
    expect(byId('security.pragma').status).toBe('pass');
  });

  it('sees the changed resource answered 304, and the _method form field ignored', () => {
    expect(byId('caching.changed').evidence).toEqual({
      request: `GET /v1/users/${PEER_STACK.ids.disposable} -> 304 (if-modified-since: the date before the PATCH)`,
      expected: '200 with a newer Last-Modified and a new ETag',
      seen: 'status 304',
    });
    expect(byId('methods.override-header').status).toBe('pass');
    expect(byId('methods.override-form').evidence).toEqual({
      request: `POST /v1/users/${PEER_STACK.ids.disposable} -> 404 (form body with _method=PATCH)`,
      expected: 'the answer of the PATCH: 2xx',
      seen: 'status 404',
    });
    expect(byId('methods.override-post-only').status).toBe('pass');
    expect(byId('caching.not-modified-only-conditional').status).toBe('pass');
  });

  it('cites every rule through docs/spec-coverage.md, never SPEC.md as a file', () => {
    expect(report.failures.length).toBeGreaterThan(0);
    for (const failure of report.failures) expect(failure.rule).toMatch(/^docs\/spec-coverage\.md#[a-z-]+ "/);
  });

  it('never shows a credential or a token', () => {
    const text = JSON.stringify(report);
    for (const secret of [PEER_STACK.client.clientSecret, PEER_STACK.user.password]) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/[0-9a-f]{40}/);
  });
});
